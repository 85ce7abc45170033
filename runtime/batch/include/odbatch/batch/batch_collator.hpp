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
};

class BatchCollator {
 public:
  explicit BatchCollator(CollatorOptions options) : options_(options) {}

  // Fills `out` with the samples in group order; `info` is the step's metadata. Buffers keep
  // their capacity, so a recycled batch does not allocate once warm.
  void collate(std::span<const SamplePayload* const> samples, StepInfo info, Batch& out) const;

  // An IDLE batch: one dummy token whose single label is supervised, so the loss is finite and
  // the trainer's collectives run as on any step (loss_scale is 0).
  void collate_idle(StepInfo info, Batch& out) const;

 private:
  CollatorOptions options_;
};

}  // namespace odbatch
