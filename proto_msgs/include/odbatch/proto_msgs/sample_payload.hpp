#pragma once
// A preprocessed sample as the pipeline carries it from the tokenizer and the image decoders to
// the collator: one type all the way, filled in place. The tokenizer's TokenizedSample is its
// base, the decoders' DecodedImages are moved in by the joiner; nothing is copied field by field.
#include <cstdint>
#include <utility>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"
#include "odbatch/proto_msgs/tokenized_sample.hpp"

namespace odbatch {

struct SamplePayload : TokenizedSample {
  SampleId id = 0;
  std::uint32_t source_file = 0;     // index into the source's file list
  std::uint64_t line = 0;            // 1-based line in that file
  std::vector<DecodedImage> images;  // one per image_spans entry, in order

  SamplePayload() = default;
  SamplePayload(SampleId sample, TokenizedSample tokens)
      : TokenizedSample(std::move(tokens)), id(sample) {}

  // The costs batching decisions see.
  SampleCost cost() const;
};

}  // namespace odbatch
