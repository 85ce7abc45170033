#pragma once
// One training step's batch on one rank, as the trainer receives it, and what it should know
// about the step.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/core/step_info.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

// padded: [rows, seq_len] with attention_mask; packed: all rows concatenated (varlen) with
// cu_seqlens and position_ids, as flash-attention's varlen kernels take them.
enum class BatchLayout : std::uint8_t { padded, packed };
std::string_view to_string(BatchLayout layout);

class Batch {
 public:
  BatchLayout layout() const { return layout_; }
  std::uint32_t rows() const { return rows_; }
  // padded: the longest row; packed: the total number of tokens.
  std::uint32_t seq_len() const { return seq_len_; }

  std::span<const std::int32_t> input_ids() const { return input_ids_; }
  std::span<const std::int32_t> labels() const { return labels_; }
  std::span<const std::uint8_t> attention_mask() const { return attention_mask_; }  // padded
  std::span<const std::int32_t> cu_seqlens() const { return cu_seqlens_; }          // packed
  std::span<const std::int32_t> position_ids() const { return position_ids_; }      // packed
  // Every image of the step, row after row, as the bytes of pixel_dtype() values:
  // - uint8: RGB, each image height x width x 3 (HWC), as decoded and resized;
  // - float32 or bfloat16 (native-endian bfloat16 bits): Qwen2-VL's pixel_values, each image
  //   grid_h * grid_w patches of channels * temporal_patch_size * patch_size^2 values.
  std::span<const std::uint8_t> pixel_values() const { return pixel_values_; }
  PixelDtype pixel_dtype() const { return pixel_dtype_; }
  // Bytes the pixel buffer has allocated (at least pixel_values().size(); a recycled batch keeps
  // its capacity up to BatchPool::kKeptPixelBytes).
  std::size_t pixel_values_capacity() const { return pixel_values_.capacity(); }
  // pixel_values() as a matrix of pixel_dtype() values: uint8 (pixels of all images, 3);
  // float32 and bfloat16 (patches of all images, values per patch), as the processor's
  // pixel_values tensor. With no image the row count is 0.
  std::array<std::size_t, 2> pixel_values_shape() const { return pixel_values_shape_; }
  // Per image (t, h, w) in patches, t = 1: Qwen2-VL's image_grid_thw.
  std::span<const std::int32_t> image_grid_thw() const { return image_grid_thw_; }
  const StepInfo& step_info() const { return info_; }

 private:
  friend class BatchCollator;
  friend class BatchPool;
  BatchLayout layout_ = BatchLayout::padded;
  std::uint32_t rows_ = 0;
  std::uint32_t seq_len_ = 0;
  std::vector<std::int32_t> input_ids_;
  std::vector<std::int32_t> labels_;
  std::vector<std::uint8_t> attention_mask_;
  std::vector<std::int32_t> cu_seqlens_;
  std::vector<std::int32_t> position_ids_;
  PatchValueBytes pixel_values_;  // written whole after sizing: not zero-filled first
  PixelDtype pixel_dtype_ = PixelDtype::uint8;
  std::array<std::size_t, 2> pixel_values_shape_{0, 3};
  std::vector<std::int32_t> image_grid_thw_;
  StepInfo info_;
};

}  // namespace odbatch
