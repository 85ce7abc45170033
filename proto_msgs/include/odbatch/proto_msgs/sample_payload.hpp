#pragma once
// A preprocessed sample as the pipeline carries it from the joiner to the emitter: its tokens,
// labels and decoded images, plus where it came from.
#include <cstdint>
#include <vector>

#include "odbatch/core/sample.hpp"

namespace odbatch {

// An image resized to its patch grid: uint8 RGB, row-major height x width x 3.
struct ImagePixels {
  std::uint32_t height = 0;
  std::uint32_t width = 0;
  std::uint32_t grid_h = 0;  // patches (of patch_size pixels) down
  std::uint32_t grid_w = 0;  // patches across
  std::vector<std::uint8_t> rgb;
};

// Where an image's visual tokens sit in input_ids.
struct TokenSpan {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
};

struct SamplePayload {
  SampleId id = 0;
  std::uint32_t source_file = 0;  // index into the source's file list
  std::uint64_t line = 0;         // 1-based line in that file
  std::vector<std::int32_t> input_ids;
  std::vector<std::int32_t> labels;      // -100 where not supervised; the model shifts
  std::uint32_t supervised_targets = 0;  // label positions the loss sees after the shift
  std::vector<TokenSpan> image_spans;
  std::vector<ImagePixels> images;
  bool truncated = false;

  // The costs batching decisions see.
  SampleCost cost() const;
};

}  // namespace odbatch
