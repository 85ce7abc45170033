#pragma once
// Where each field of a Batch lies in one contiguous block of bytes. The stager writes a batch into
// a pinned host block with this layout and copies it to the device in a single transfer, so host
// and device blocks are laid out alike. Pure C++: no CUDA call.
#include <cstddef>

#include "odbatch/batch/batch.hpp"

namespace odbatch {

// One field: its first byte's offset in the block and its element count.
struct BlockField {
  std::size_t offset = 0;
  std::size_t count = 0;
};

struct BatchBlockLayout {
  // Every field starts on this boundary, as cudaMalloc aligns its allocations, so that kernels
  // may read any field with vector loads.
  static constexpr std::size_t kFieldAlignment = 256;

  BlockField input_ids;
  BlockField labels;
  BlockField attention_mask;
  BlockField cu_seqlens;
  BlockField position_ids;
  BlockField pixel_values;
  BlockField image_grid_thw;
  std::size_t total_bytes = 0;

  static BatchBlockLayout of(const Batch& batch);
};

// Copies every field of `batch` to its place in `block`, which holds `layout.total_bytes` bytes.
// Padding between fields is left as it is.
void write_batch_block(const Batch& batch, const BatchBlockLayout& layout, std::byte* block);

}  // namespace odbatch
