#include "odbatch/batch/batch_collator.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

namespace odbatch {
namespace {

std::span<const std::uint8_t> pixels_of(const DecodedImage& image) {
  if (image.dtype == PixelDtype::uint8) return image.rgb;
  return image.patch_values;
}

std::array<std::size_t, 2> empty_shape(const CollatorOptions& options) {
  return {0, options.pixel_dtype == PixelDtype::uint8 ? 3 : options.values_per_patch};
}

}  // namespace

BatchCollator::BatchCollator(CollatorOptions options) : options_(options) {
  if (options_.pixel_dtype != PixelDtype::uint8 && options_.values_per_patch == 0)
    throw std::invalid_argument("BatchCollator: " + std::string(to_string(options_.pixel_dtype)) +
                                " pixel_values need values_per_patch");
}

void BatchCollator::collate_images(std::span<const SamplePayload* const> samples,
                                   Batch& out) const {
  out.pixel_values_.clear();
  out.image_grid_thw_.clear();
  out.pixel_dtype_ = options_.pixel_dtype;
  out.pixel_values_shape_ = empty_shape(options_);
  std::size_t bytes = 0;
  for (const auto* s : samples)
    for (const auto& image : s->images) {
      const bool uint8 = options_.pixel_dtype == PixelDtype::uint8;
      if (image.dtype != options_.pixel_dtype ||
          (!uint8 && image.values_per_patch != options_.values_per_patch))
        throw std::invalid_argument(
            "BatchCollator: an image of " + std::string(to_string(image.dtype)) + " (" +
            std::to_string(image.values_per_patch) + " values a patch) in a batch of " +
            std::string(to_string(options_.pixel_dtype)) + " (" +
            std::to_string(options_.values_per_patch) + ")");
      bytes += pixels_of(image).size();
      out.pixel_values_shape_[0] +=
          uint8 ? std::size_t{image.width} * image.height : image.grid.patches();
    }
  // Reserved whole, then appended: the one copy of each image, with no zero-filling pass first.
  out.pixel_values_.reserve(bytes);
  for (const auto* s : samples)
    for (const auto& image : s->images) {
      const auto pixels = pixels_of(image);
      out.pixel_values_.insert(out.pixel_values_.end(), pixels.begin(), pixels.end());
      out.image_grid_thw_.insert(out.image_grid_thw_.end(),
                                 {1, static_cast<std::int32_t>(image.grid.grid_h),
                                  static_cast<std::int32_t>(image.grid.grid_w)});
    }
}

std::string_view to_string(BatchLayout layout) {
  return layout == BatchLayout::padded ? "padded" : "packed";
}

void BatchCollator::collate(std::span<const SamplePayload* const> samples, StepInfo info,
                            Batch& out) const {
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
  out.pixel_dtype_ = options_.pixel_dtype;
  out.pixel_values_shape_ = empty_shape(options_);
  out.image_grid_thw_.clear();
  out.info_ = std::move(info);
}

}  // namespace odbatch
