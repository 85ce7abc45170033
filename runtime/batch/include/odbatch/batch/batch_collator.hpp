#pragma once
// Collates a step's group of samples into a Batch, reusing the batch's buffers; makes the
// images' pixel_values, so that samples wait in the window as compact uint8 RGB.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "odbatch/batch/batch.hpp"
#include "odbatch/batch/worker_threads.hpp"
#include "odbatch/image/pixel_values_config.hpp"
#include "odbatch/image/pixel_values_writer.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/sample_payload.hpp"

namespace odbatch {

struct CollatorOptions {
  BatchLayout layout = BatchLayout::padded;
  std::int32_t pad_id = 0;      // fills padded rows past their length
  std::int32_t idle_token = 0;  // the single token of an IDLE batch
  // What batches carry of the images, which arrive as uint8 RGB resized to their grid: that RGB
  // (uint8), or pixel_values (float32, bfloat16) made from it here with these settings.
  PixelValuesConfig pixel_values{};
  VisionGeometryConfig geometry{};
  // Threads that make a batch's pixel_values, the caller's included (float32 and bfloat16).
  std::size_t pixel_threads = 1;
};

class BatchCollator {
 public:
  // Throws ConfigError for invalid pixel_values settings or geometry (float32 and bfloat16) and
  // std::invalid_argument for no pixel threads.
  explicit BatchCollator(CollatorOptions options);

  // Fills `out` with the samples in group order; `info` is the step's metadata. Buffers keep
  // their capacity, so a recycled batch does not allocate once warm. Each image is read once:
  // copied into the batch (uint8) or written as pixel_values straight into it, a block row of
  // patches per task on the pixel threads. Throws std::invalid_argument for an image that is not
  // uint8 RGB of its grid's size.
  void collate(std::span<const SamplePayload* const> samples, StepInfo info, Batch& out);

  // An IDLE batch: one dummy token whose single label is supervised, so the loss is finite and
  // the trainer's collectives run as on any step (loss_scale is 0).
  void collate_idle(StepInfo info, Batch& out) const;

  // CPU time the pixel threads other than the caller's have spent so far.
  std::uint64_t helper_cpu_ns() const { return threads_ ? threads_->helper_cpu_ns() : 0; }

 private:
  // One block row of one image's pixel_values.
  struct PixelTask {
    const DecodedImage* image;
    std::uint32_t block_row;
    std::span<std::uint8_t> out;  // the image's pixel_values in the batch
  };

  void collate_images(std::span<const SamplePayload* const> samples, Batch& out);
  std::array<std::size_t, 2> empty_shape() const;

  CollatorOptions options_;
  std::optional<PixelValuesWriter> writer_;  // float32 and bfloat16
  std::unique_ptr<WorkerThreads> threads_;   // with writer_
  std::vector<PixelTask> tasks_;             // the batch being collated's
};

}  // namespace odbatch
