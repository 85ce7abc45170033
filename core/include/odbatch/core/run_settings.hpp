#pragma once
// The settings that decide a rank's batches, each by name with its value as text: which samples
// a rank gets (the dataset, shuffle, split), how records become tokens and pixels (tokenizer
// model, template, image geometry and limits, bad-record policy) and how samples are grouped and
// collated (the batching config, the layout). Every rank of a run must agree on them, and so must
// a resume with its checkpoint; comparing them by name lets a mismatch name the setting.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace odbatch {

struct RunSetting {
  std::string name;   // as the pipeline file spells it ("source.shuffle"), or "dataset"
  std::string value;  // as text ("true", "4096", a hash)
  friend bool operator==(const RunSetting&, const RunSetting&) = default;
};

// Where the ranks' settings (`per_rank[r]` is rank r's) disagree: one line per setting whose
// value is not the same on every rank, in the order rank 0 lists them (then settings rank 0
// lacks), naming the setting and which ranks hold which value, e.g.
// "source.shuffle: false on rank 2, true on ranks 0, 1". Empty when every rank agrees.
std::vector<std::string> rank_setting_differences(
    std::span<const std::vector<RunSetting>> per_rank);

}  // namespace odbatch
