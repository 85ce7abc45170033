#pragma once
// Collates a step's group of samples into a Batch, reusing the batch's buffers.
#include <cstdint>
#include <span>

#include "odbatch/batch/batch.hpp"
#include "odbatch/proto_msgs/sample_payload.hpp"

namespace odbatch {

struct CollatorOptions {
  BatchLayout layout = BatchLayout::padded;
  std::int32_t pad_id = 0;      // fills padded rows past their length
  std::int32_t idle_token = 0;  // the single token of an IDLE batch
  // What the image decoders make (every image of a pipeline alike): uint8 RGB, or pixel_values
  // of values_per_patch values a patch.
  PixelDtype pixel_dtype = PixelDtype::uint8;
  std::uint32_t values_per_patch = 0;  // float32 and bfloat16 only
};

class BatchCollator {
 public:
  // Throws std::invalid_argument when pixel_dtype is float32 or bfloat16 and values_per_patch
  // is 0.
  explicit BatchCollator(CollatorOptions options);

  // Fills `out` with the samples in group order; `info` is the step's metadata. Buffers keep
  // their capacity, so a recycled batch does not allocate once warm. Each image's pixels are
  // copied once, into the batch. Throws std::invalid_argument for an image whose dtype or patch
  // width differs from the options'.
  void collate(std::span<const SamplePayload* const> samples, StepInfo info, Batch& out) const;

  // An IDLE batch: one dummy token whose single label is supervised, so the loss is finite and
  // the trainer's collectives run as on any step (loss_scale is 0).
  void collate_idle(StepInfo info, Batch& out) const;

 private:
  void collate_images(std::span<const SamplePayload* const> samples, Batch& out) const;

  CollatorOptions options_;
};

}  // namespace odbatch
