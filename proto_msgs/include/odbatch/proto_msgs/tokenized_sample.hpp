#pragma once
// A conversation as tokens: the ids the model reads with their training labels, and where each
// image's visual tokens sit. The tokenizer produces it; it travels inside SamplePayload to the
// collator without being copied.
#include <cstdint>
#include <vector>

namespace odbatch {

// The label of a position the loss ignores (PyTorch cross-entropy's ignore_index).
inline constexpr std::int32_t kIgnoreLabel = -100;

// Where one image's visual tokens sit in input_ids: `length` image tokens from `offset`, wrapped
// by the vision start token at offset - 1 and the vision end token at offset + length.
struct ImageSpan {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;

  friend bool operator==(const ImageSpan&, const ImageSpan&) = default;
};

struct TokenizedSample {
  std::vector<std::int32_t> input_ids;
  // As long as input_ids: the token itself where supervised, kIgnoreLabel elsewhere. Not shifted
  // (Hugging Face convention): the model predicts labels[i] from the positions before i.
  std::vector<std::int32_t> labels;
  // Targets the loss sees after the next-token shift: positions i >= 1 whose label is not
  // kIgnoreLabel. This is the `labels` cost of PROTOCOL.md.
  std::uint32_t supervised_targets = 0;
  std::vector<ImageSpan> image_spans;  // one per image, in the conversation's image order
  bool truncated = false;              // cut to max_seq_len

  friend bool operator==(const TokenizedSample&, const TokenizedSample&) = default;
};

}  // namespace odbatch
