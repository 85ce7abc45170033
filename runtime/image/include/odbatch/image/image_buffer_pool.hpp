#pragma once
// The pixel buffers of decoded images, handed on from image to image. A worker decodes into a
// buffer taken from the pool; the buffer comes back when the sample holding the image is released
// (after the collator has copied it into a batch, or when the sample is rejected), and the next
// image is decoded into it: no allocation, no fresh pages to fault in and no zero-filling per
// image. What the pool keeps is bounded by a buffer count and a byte total; buffers beyond them
// are freed. Thread-safe: workers take, whichever thread releases a sample gives back.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

class ImageBufferPool {
 public:
  // Keeps at most `max_buffers` buffers of at most `max_bytes` capacity in all.
  ImageBufferPool(std::size_t max_buffers, std::size_t max_bytes);

  // An image with no fields set and the most recently returned buffers (empty ones when none are
  // kept), to be filled by ImageProcessor::process.
  DecodedImage take();
  // Keeps the pixel buffers of `image` for a later take(), or frees them when the pool is full.
  void give_back(DecodedImage&& image);

  std::size_t kept_buffers() const;
  std::size_t kept_bytes() const;
  // How many take() calls handed out kept buffers.
  std::uint64_t reuses() const;

 private:
  struct Buffers {
    std::vector<std::uint8_t> rgb;
    PatchValueBytes patch_values;
    std::size_t bytes() const { return rgb.capacity() + patch_values.capacity(); }
  };

  const std::size_t max_buffers_;
  const std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::vector<Buffers> kept_;
  std::size_t kept_bytes_ = 0;
  std::uint64_t reuses_ = 0;
};

}  // namespace odbatch
