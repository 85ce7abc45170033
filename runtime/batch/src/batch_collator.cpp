#include "odbatch/batch/batch_collator.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

namespace odbatch {

BatchCollator::BatchCollator(CollatorOptions options) : options_(options) {
  if (options_.pixel_threads == 0)
    throw std::invalid_argument("BatchCollator: pixel_threads must be at least 1");
  if (options_.pixel_values.dtype == PixelDtype::uint8) return;
  writer_.emplace(options_.pixel_values, options_.geometry);
  threads_ = std::make_unique<WorkerThreads>(options_.pixel_threads - 1);
}

std::array<std::size_t, 2> BatchCollator::empty_shape() const {
  return {0, writer_ ? writer_->values_per_patch() : 3};
}

void BatchCollator::collate_images(std::span<const SamplePayload* const> samples, Batch& out) {
  out.image_grid_thw_.clear();
  out.pixel_dtype_ = options_.pixel_values.dtype;
  out.pixel_values_shape_ = empty_shape();
  std::size_t bytes = 0;
  for (const auto* s : samples)
    for (const auto& image : s->images) {
      if (image.dtype != PixelDtype::uint8 ||
          image.rgb.size() != std::size_t{image.width} * image.height * 3)
        throw std::invalid_argument(
            "BatchCollator: an image of " + std::string(to_string(image.dtype)) + " with " +
            std::to_string(image.rgb.size()) + " RGB bytes for " + std::to_string(image.width) +
            "x" + std::to_string(image.height) + "; uint8 RGB is wanted");
      bytes += writer_ ? writer_->bytes_for(image.width, image.height) : image.rgb.size();
      out.pixel_values_shape_[0] +=
          writer_ ? image.grid.patches() : std::size_t{image.width} * image.height;
      out.image_grid_thw_.insert(out.image_grid_thw_.end(),
                                 {1, static_cast<std::int32_t>(image.grid.grid_h),
                                  static_cast<std::int32_t>(image.grid.grid_w)});
    }
  // Sized once without zero-filling, then each image written into its place.
  out.pixel_values_.resize(bytes);
  std::size_t at = 0;
  tasks_.clear();
  for (const auto* s : samples)
    for (const auto& image : s->images) {
      if (!writer_) {
        std::copy(image.rgb.begin(), image.rgb.end(), out.pixel_values_.begin() + at);
        at += image.rgb.size();
        continue;
      }
      const std::span<std::uint8_t> place(out.pixel_values_.data() + at,
                                          writer_->bytes_for(image.width, image.height));
      for (std::uint32_t row = 0; row < image.height / writer_->block_rows(); ++row)
        tasks_.push_back({&image, row, place});
      at += place.size();
    }
  if (tasks_.empty()) return;
  const std::size_t row_bytes = std::size_t{3} * writer_->block_rows();
  threads_->run(tasks_.size(), [&](std::size_t i) {
    const PixelTask& task = tasks_[i];
    const DecodedImage& image = *task.image;
    writer_->write_block_row(image.rgb.data() + task.block_row * row_bytes * image.width,
                             image.width, image.height, task.block_row, task.out);
  });
}

std::string_view to_string(BatchLayout layout) {
  return layout == BatchLayout::padded ? "padded" : "packed";
}

void BatchCollator::collate(std::span<const SamplePayload* const> samples, StepInfo info,
                            Batch& out) {
  out.layout_ = options_.layout;
  out.rows_ = static_cast<std::uint32_t>(samples.size());
  out.attention_mask_.clear();
  out.cu_seqlens_.clear();
  out.position_ids_.clear();
  out.input_ids_.clear();
  out.labels_.clear();
  if (options_.layout == BatchLayout::padded) {
    std::size_t longest = 0;
    for (const auto* s : samples) longest = std::max(longest, s->input_ids.size());
    out.seq_len_ = static_cast<std::uint32_t>(longest);
    out.input_ids_.assign(samples.size() * longest, options_.pad_id);
    out.labels_.assign(samples.size() * longest, kIgnoreLabel);
    out.attention_mask_.assign(samples.size() * longest, 0);
    for (std::size_t row = 0; row < samples.size(); ++row) {
      const auto& s = *samples[row];
      const std::size_t at = row * longest;
      std::copy(s.input_ids.begin(), s.input_ids.end(), out.input_ids_.begin() + at);
      std::copy(s.labels.begin(), s.labels.end(), out.labels_.begin() + at);
      std::fill_n(out.attention_mask_.begin() + at, s.input_ids.size(), 1);
    }
  } else {
    out.cu_seqlens_.push_back(0);
    for (const auto* s : samples) {
      const auto start = out.input_ids_.size();
      out.input_ids_.insert(out.input_ids_.end(), s->input_ids.begin(), s->input_ids.end());
      out.labels_.insert(out.labels_.end(), s->labels.begin(), s->labels.end());
      // A row's first label is never a target within its row; masking it keeps the previous
      // row's last token from predicting across the boundary when the stream is shifted whole.
      if (out.labels_.size() > start) out.labels_[start] = kIgnoreLabel;
      for (std::size_t p = 0; p < s->input_ids.size(); ++p)
        out.position_ids_.push_back(static_cast<std::int32_t>(p));
      out.cu_seqlens_.push_back(static_cast<std::int32_t>(out.input_ids_.size()));
    }
    out.seq_len_ = static_cast<std::uint32_t>(out.input_ids_.size());
  }
  collate_images(samples, out);
  out.info_ = std::move(info);
}

void BatchCollator::collate_idle(StepInfo info, Batch& out) const {
  // Two tokens: after the model's next-token shift exactly one supervised target remains.
  const std::int32_t token = options_.idle_token;
  out.layout_ = options_.layout;
  out.rows_ = 1;
  out.seq_len_ = 2;
  out.input_ids_.assign({token, token});
  out.labels_.assign({kIgnoreLabel, token});
  out.attention_mask_.clear();
  out.cu_seqlens_.clear();
  out.position_ids_.clear();
  if (options_.layout == BatchLayout::padded) {
    out.attention_mask_.assign({1, 1});
  } else {
    out.cu_seqlens_.assign({0, 2});
    out.position_ids_.assign({0, 1});
  }
  out.pixel_values_.clear();
  out.pixel_dtype_ = options_.pixel_values.dtype;
  out.pixel_values_shape_ = empty_shape();
  out.image_grid_thw_.clear();
  out.info_ = std::move(info);
}

}  // namespace odbatch
