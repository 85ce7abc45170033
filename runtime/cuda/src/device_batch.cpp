#include "odbatch/cuda/device_batch.hpp"

namespace odbatch {
namespace {

template <typename T>
DeviceSpan<T> device_span(std::byte* device_block, const BlockField& field) {
  if (field.count == 0) return {};
  // The block holds a T at this offset (BatchBlockLayout aligns it), written there by the copy.
  return {reinterpret_cast<T*>(device_block + field.offset), field.count};
}

}  // namespace

void describe_device_batch(const Batch& batch, const BatchBlockLayout& layout,
                           std::byte* device_block, DeviceBatch& out) {
  out.layout = batch.layout();
  out.rows = batch.rows();
  out.seq_len = batch.seq_len();
  out.input_ids = device_span<std::int32_t>(device_block, layout.input_ids);
  out.labels = device_span<std::int32_t>(device_block, layout.labels);
  out.attention_mask = device_span<std::uint8_t>(device_block, layout.attention_mask);
  out.cu_seqlens = device_span<std::int32_t>(device_block, layout.cu_seqlens);
  out.position_ids = device_span<std::int32_t>(device_block, layout.position_ids);
  out.pixel_values = device_span<std::uint8_t>(device_block, layout.pixel_values);
  out.image_grid_thw = device_span<std::int32_t>(device_block, layout.image_grid_thw);
  out.step_info = batch.step_info();
}

}  // namespace odbatch
