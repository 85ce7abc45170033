#include "batch_arrays.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#ifdef ODBATCH_PYTHON_CUDA
#include <cuda_runtime_api.h>

#include "odbatch/cuda/pinned_buffer_pool.hpp"
#endif

namespace py = pybind11;

namespace odbatch::python {
namespace {

std::size_t element_size(Element element) {
  switch (element) {
    case Element::int64:
      return 8;
    case Element::int32:
    case Element::float32:
      return 4;
    case Element::uint16:
      return 2;
    case Element::boolean:
    case Element::uint8:
      break;
  }
  return 1;
}

py::dtype numpy_dtype(Element element) {
  switch (element) {
    case Element::int32:
      return py::dtype::of<std::int32_t>();
    case Element::int64:
      return py::dtype::of<std::int64_t>();
    case Element::boolean:
      return py::dtype::of<bool>();
    case Element::uint16:
      return py::dtype::of<std::uint16_t>();
    case Element::float32:
      return py::dtype::of<float>();
    case Element::uint8:
      break;
  }
  return py::dtype::of<std::uint8_t>();
}

Element parse_element(const std::string& tensor, const std::string& name,
                      std::initializer_list<Element> allowed) {
  static const std::map<std::string, Element> names{{"int32", Element::int32},
                                                    {"int64", Element::int64},
                                                    {"bool", Element::boolean},
                                                    {"uint8", Element::uint8}};
  const auto found = names.find(name);
  if (found == names.end() ||
      std::find(allowed.begin(), allowed.end(), found->second) == allowed.end()) {
    std::string choices;
    for (const auto element : allowed)
      for (const auto& [text, value] : names)
        if (value == element) choices += (choices.empty() ? "" : ", ") + text;
    throw std::invalid_argument("dtypes[\"" + tensor + "\"]: \"" + name + "\" is not one of " +
                                choices);
  }
  return found->second;
}

std::size_t aligned(std::size_t offset) {
  constexpr std::size_t alignment = 64;  // a cache line; more than any element needs
  return (offset + alignment - 1) / alignment * alignment;
}

// Writes `count` values of `from` (int32 or uint8) as `to`.
template <typename From>
void convert_values(const From* from, std::size_t count, Element to, std::byte* out) {
  switch (to) {
    case Element::int64: {
      auto* values = reinterpret_cast<std::int64_t*>(out);
      for (std::size_t i = 0; i < count; ++i) values[i] = from[i];
      return;
    }
    case Element::int32: {
      auto* values = reinterpret_cast<std::int32_t*>(out);
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<std::int32_t>(from[i]);
      return;
    }
    case Element::boolean: {
      auto* values = reinterpret_cast<bool*>(out);
      for (std::size_t i = 0; i < count; ++i) values[i] = from[i] != 0;
      return;
    }
    case Element::uint8: {
      auto* values = reinterpret_cast<std::uint8_t*>(out);
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<std::uint8_t>(from[i]);
      return;
    }
    case Element::uint16:
    case Element::float32:
      break;
  }
  throw std::logic_error("convert_values: no conversion to a pixel dtype");
}

}  // namespace

TensorDtypes TensorDtypes::from(const std::map<std::string, std::string>& names) {
  TensorDtypes dtypes;
  const std::initializer_list<Element> integers{Element::int32, Element::int64};
  for (const auto& [tensor, name] : names) {
    if (tensor == "input_ids") {
      dtypes.input_ids = parse_element(tensor, name, integers);
    } else if (tensor == "labels") {
      dtypes.labels = parse_element(tensor, name, integers);
    } else if (tensor == "position_ids") {
      dtypes.position_ids = parse_element(tensor, name, integers);
    } else if (tensor == "cu_seqlens") {
      dtypes.cu_seqlens = parse_element(tensor, name, integers);
    } else if (tensor == "image_grid_thw") {
      dtypes.image_grid_thw = parse_element(tensor, name, integers);
    } else if (tensor == "attention_mask") {
      dtypes.attention_mask = parse_element(
          tensor, name, {Element::boolean, Element::uint8, Element::int32, Element::int64});
    } else {
      throw std::invalid_argument("dtypes: no tensor is named \"" + tensor +
                                  "\" (input_ids, labels, attention_mask, position_ids, "
                                  "cu_seqlens, image_grid_thw)");
    }
  }
  return dtypes;
}

#ifdef ODBATCH_PYTHON_CUDA
bool pinning_available() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

struct BatchConverter::Pool {
  // Enough for the batches a trainer holds at once (prefetched ones are still the batch's own);
  // acquire() waits beyond that until the trainer lets one go.
  PinnedBufferPool buffers{64};
};

struct BatchArrays::Block {
  PinnedBuffer pinned;
  std::unique_ptr<std::byte[]> heap;
  std::byte* data() const { return pinned ? pinned.data() : heap.get(); }
};
#else
bool pinning_available() {
  return false;
}

struct BatchConverter::Pool {};

struct BatchArrays::Block {
  std::unique_ptr<std::byte[]> heap;
  std::byte* data() const { return heap.get(); }
};
#endif

BatchConverter::BatchConverter(TensorDtypes dtypes, bool pin)
    : dtypes_(dtypes), pin_(pin), pool_(std::make_unique<Pool>()) {
  if (pin_ && !pinning_available())
    throw std::invalid_argument("pin_memory: no CUDA device (or a build without CUDA)");
}

BatchConverter::~BatchConverter() = default;

BatchArrays BatchConverter::convert(std::shared_ptr<const Batch> batch) const {
  BatchArrays arrays;
  // Each column: its values in the batch, their element there and the one wanted.
  struct Source {
    const void* data;
    std::size_t count;
    Element element;
  };
  std::vector<Source> sources;
  const auto add = [&](std::string name, std::vector<py::ssize_t> shape, const void* data,
                       std::size_t count, Element from, Element to) {
    BatchArrays::Column column;
    column.name = std::move(name);
    column.shape = std::move(shape);
    column.element = to;
    arrays.columns_.push_back(std::move(column));
    sources.push_back({data, count, from});
  };
  const auto ints = [&](std::string name, std::vector<py::ssize_t> shape,
                        std::span<const std::int32_t> values, Element to) {
    add(std::move(name), std::move(shape), values.data(), values.size(), Element::int32, to);
  };
  const auto rows = static_cast<py::ssize_t>(batch->rows());
  const auto seq_len = static_cast<py::ssize_t>(batch->seq_len());
  if (batch->layout() == BatchLayout::padded) {
    ints("input_ids", {rows, seq_len}, batch->input_ids(), dtypes_.input_ids);
    ints("labels", {rows, seq_len}, batch->labels(), dtypes_.labels);
    const auto mask = batch->attention_mask();
    add("attention_mask", {rows, seq_len}, mask.data(), mask.size(), Element::uint8,
        dtypes_.attention_mask);
  } else {
    ints("input_ids", {seq_len}, batch->input_ids(), dtypes_.input_ids);
    ints("labels", {seq_len}, batch->labels(), dtypes_.labels);
    const auto cu = batch->cu_seqlens();
    ints("cu_seqlens", {static_cast<py::ssize_t>(cu.size())}, cu, dtypes_.cu_seqlens);
    ints("position_ids", {seq_len}, batch->position_ids(), dtypes_.position_ids);
  }
  const auto pixels = batch->pixel_values();
  const auto [pixel_rows, pixel_columns] = batch->pixel_values_shape();
  switch (batch->pixel_dtype()) {
    case PixelDtype::float32:
      add("pixel_values",
          {static_cast<py::ssize_t>(pixel_rows), static_cast<py::ssize_t>(pixel_columns)},
          pixels.data(), pixels.size() / 4, Element::float32, Element::float32);
      break;
    case PixelDtype::bfloat16:
      add("pixel_values",
          {static_cast<py::ssize_t>(pixel_rows), static_cast<py::ssize_t>(pixel_columns)},
          pixels.data(), pixels.size() / 2, Element::uint16, Element::uint16);
      break;
    case PixelDtype::uint8:  // (pixels, 3), as Batch::pixel_values_shape() says
      add("pixel_values",
          {static_cast<py::ssize_t>(pixel_rows), static_cast<py::ssize_t>(pixel_columns)},
          pixels.data(), pixels.size(), Element::uint8, Element::uint8);
      break;
  }
  const auto grids = batch->image_grid_thw();
  ints("image_grid_thw", {static_cast<py::ssize_t>(grids.size() / 3), 3}, grids,
       dtypes_.image_grid_thw);

  // Copied columns get their place in the block; the others stay views of the batch.
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto& column = arrays.columns_[i];
    if (!pin_ && sources[i].element == column.element) {
      column.source = sources[i].data;
      continue;
    }
    column.copied = true;
    column.offset = bytes;
    bytes = aligned(bytes + sources[i].count * element_size(column.element));
  }
  if (bytes > 0) {
    auto block = std::make_shared<BatchArrays::Block>();
#ifdef ODBATCH_PYTHON_CUDA
    if (pin_) block->pinned = pool_->buffers.acquire(bytes);
#endif
    if (!pin_) block->heap = std::make_unique_for_overwrite<std::byte[]>(bytes);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const auto& column = arrays.columns_[i];
      if (!column.copied) continue;
      auto* out = block->data() + column.offset;
      const auto& source = sources[i];
      if (source.element == column.element) {
        std::memcpy(out, source.data, source.count * element_size(column.element));
      } else if (source.element == Element::int32) {
        convert_values(static_cast<const std::int32_t*>(source.data), source.count, column.element,
                       out);
      } else {
        convert_values(static_cast<const std::uint8_t*>(source.data), source.count, column.element,
                       out);
      }
    }
    arrays.block_ = std::move(block);
  }
  // A batch copied whole (pinned) goes back to the pipeline's pool at once.
  const bool viewed = std::any_of(arrays.columns_.begin(), arrays.columns_.end(),
                                  [](const BatchArrays::Column& column) { return !column.copied; });
  arrays.info_ = batch->step_info();
  if (viewed) arrays.batch_ = std::move(batch);
  return arrays;
}

py::dict BatchArrays::to_dict() const {
  // Every array keeps what it views alive: the batch (views) or the block (copies).
  py::object batch_owner, block_owner;
  if (batch_)
    batch_owner = py::capsule(new std::shared_ptr<const Batch>(batch_), [](void* held) {
      delete static_cast<std::shared_ptr<const Batch>*>(held);
    });
  if (block_)
    block_owner = py::capsule(new std::shared_ptr<Block>(block_), [](void* held) {
      delete static_cast<std::shared_ptr<Block>*>(held);
    });
  py::dict out;
  for (const auto& column : columns_) {
    // Writable: once emitted, a batch belongs to the trainer alone, and torch.from_numpy wants
    // writable arrays.
    void* data = const_cast<void*>(column.source);
    if (column.copied) data = block_ ? block_->data() + column.offset : nullptr;
    out[column.name.c_str()] = py::array(numpy_dtype(column.element), column.shape, data,
                                         column.copied ? block_owner : batch_owner);
  }
  return out;
}

}  // namespace odbatch::python
