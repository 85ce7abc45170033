#include "odbatch/image/image_buffer_pool.hpp"

#include <utility>

namespace odbatch {

ImageBufferPool::ImageBufferPool(std::size_t max_buffers, std::size_t max_bytes)
    : max_buffers_(max_buffers), max_bytes_(max_bytes) {}

DecodedImage ImageBufferPool::take() {
  DecodedImage image;
  const std::lock_guard lock(mutex_);
  if (kept_.empty()) return image;
  Buffers& buffers = kept_.back();
  kept_bytes_ -= buffers.bytes();
  image.rgb = std::move(buffers.rgb);
  image.patch_values = std::move(buffers.patch_values);
  kept_.pop_back();
  ++reuses_;
  return image;
}

void ImageBufferPool::give_back(DecodedImage&& image) {
  Buffers buffers{std::move(image.rgb), std::move(image.patch_values)};
  const std::size_t bytes = buffers.bytes();
  if (bytes == 0) return;
  const std::lock_guard lock(mutex_);
  if (kept_.size() >= max_buffers_ || kept_bytes_ + bytes > max_bytes_) return;  // freed here
  kept_bytes_ += bytes;
  kept_.push_back(std::move(buffers));
}

std::size_t ImageBufferPool::kept_buffers() const {
  const std::lock_guard lock(mutex_);
  return kept_.size();
}

std::size_t ImageBufferPool::kept_bytes() const {
  const std::lock_guard lock(mutex_);
  return kept_bytes_;
}

std::uint64_t ImageBufferPool::reuses() const {
  const std::lock_guard lock(mutex_);
  return reuses_;
}

}  // namespace odbatch
