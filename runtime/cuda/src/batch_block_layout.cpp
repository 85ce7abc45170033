#include "odbatch/cuda/batch_block_layout.hpp"

#include <cstring>
#include <span>

namespace odbatch {
namespace {

constexpr std::size_t aligned(std::size_t offset) {
  constexpr std::size_t k = BatchBlockLayout::kFieldAlignment;
  return (offset + k - 1) / k * k;
}

// Places `values` at the next aligned offset at or after `end` and moves `end` past them.
template <typename T>
BlockField place(std::span<const T> values, std::size_t& end) {
  const BlockField field{aligned(end), values.size()};
  end = field.offset + values.size_bytes();
  return field;
}

template <typename T>
void write(std::span<const T> values, const BlockField& field, std::byte* block) {
  if (!values.empty()) std::memcpy(block + field.offset, values.data(), values.size_bytes());
}

}  // namespace

BatchBlockLayout BatchBlockLayout::of(const Batch& batch) {
  BatchBlockLayout layout;
  std::size_t end = 0;
  layout.input_ids = place(batch.input_ids(), end);
  layout.labels = place(batch.labels(), end);
  layout.attention_mask = place(batch.attention_mask(), end);
  layout.cu_seqlens = place(batch.cu_seqlens(), end);
  layout.position_ids = place(batch.position_ids(), end);
  layout.pixel_values = place(batch.pixel_values(), end);
  layout.image_grid_thw = place(batch.image_grid_thw(), end);
  layout.total_bytes = end;
  return layout;
}

void write_batch_block(const Batch& batch, const BatchBlockLayout& layout, std::byte* block) {
  write(batch.input_ids(), layout.input_ids, block);
  write(batch.labels(), layout.labels, block);
  write(batch.attention_mask(), layout.attention_mask, block);
  write(batch.cu_seqlens(), layout.cu_seqlens, block);
  write(batch.position_ids(), layout.position_ids, block);
  write(batch.pixel_values(), layout.pixel_values, block);
  write(batch.image_grid_thw(), layout.image_grid_thw, block);
}

}  // namespace odbatch
