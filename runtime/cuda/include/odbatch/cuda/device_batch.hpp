#pragma once
// A batch in device memory, field for field as the host's Batch: each field is a device pointer
// and an element count (a null pointer where the count is 0), plus the step's metadata.
#include <cstddef>
#include <cstdint>

#include "odbatch/batch/batch.hpp"
#include "odbatch/cuda/batch_block_layout.hpp"

namespace odbatch {

template <typename T>
struct DeviceSpan {
  T* data = nullptr;
  std::size_t size = 0;

  std::size_t size_bytes() const { return size * sizeof(T); }
  bool empty() const { return size == 0; }
};

struct DeviceBatch {
  BatchLayout layout = BatchLayout::padded;
  std::uint32_t rows = 0;
  std::uint32_t seq_len = 0;  // padded: the longest row; packed: the total number of tokens
  DeviceSpan<std::int32_t> input_ids;
  DeviceSpan<std::int32_t> labels;
  DeviceSpan<std::uint8_t> attention_mask;  // padded
  DeviceSpan<std::int32_t> cu_seqlens;      // packed
  DeviceSpan<std::int32_t> position_ids;    // packed
  DeviceSpan<std::uint8_t> pixel_values;
  DeviceSpan<std::int32_t> image_grid_thw;
  StepInfo step_info;
};

// Points `out`'s fields into the device block at `device_block`, laid out as `layout` says, and
// copies `batch`'s shape and step metadata (reusing `out`'s vectors' capacity).
void describe_device_batch(const Batch& batch, const BatchBlockLayout& layout,
                           std::byte* device_block, DeviceBatch& out);

}  // namespace odbatch
