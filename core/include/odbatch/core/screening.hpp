#pragma once
// The per-sample admission decision taken before a sample enters a window.
#include <cstdint>
#include <optional>

#include "odbatch/core/config.hpp"
#include "odbatch/core/rejection.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

struct Screening {
  enum class Verdict : std::uint8_t { accept, truncate, reject };
  Verdict verdict = Verdict::accept;
  std::uint32_t truncate_to = 0;  // for truncate: the length to cut to (max_seq_len)
  RejectReason reason = RejectReason::empty_sample;  // for reject
};

// Decides what happens to a preprocessed sample. A `truncate` verdict asks the caller (the
// tokenizer, which knows which labels survive) to cut the sample and screen it again.
Screening screen_sample(const SampleCost& sample, const BatchingConfig& config);

// True when a sample cannot share a group under the budgets; it then forms a flagged singleton.
bool exceeds_budget(const SampleCost& sample, const BatchingConfig& config);

}  // namespace odbatch
