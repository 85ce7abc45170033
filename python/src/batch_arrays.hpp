#pragma once
// A batch's tensors as numpy arrays in the dtypes a torch trainer wants (input_ids and labels
// int64, attention_mask bool by default), optionally in page-locked (pinned) memory. Converted
// or pinned arrays are filled into one host block per batch, off the GIL; arrays whose dtype is
// the batch's own stay zero-copy views of the batch's buffers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "odbatch/batch/batch.hpp"

namespace odbatch::python {

// uint16 holds bfloat16 bits (numpy has no bfloat16); float32 and uint8 only for pixel_values.
enum class Element : std::uint8_t { int32, int64, boolean, uint8, uint16, float32 };

// The element type of each integer tensor; pixel_values keep the pipeline's dtype.
struct TensorDtypes {
  Element input_ids = Element::int64;
  Element labels = Element::int64;
  Element attention_mask = Element::boolean;
  Element position_ids = Element::int64;
  Element cu_seqlens = Element::int32;  // flash-attention's varlen kernels take int32
  Element image_grid_thw = Element::int64;

  // From {"input_ids": "int32", ...}; throws std::invalid_argument naming an unknown tensor, an
  // unknown dtype, or one the tensor cannot take.
  static TensorDtypes from(const std::map<std::string, std::string>& names);
};

// Whether pinned host memory can be had here: built with CUDA and a device is present.
bool pinning_available();

class BatchArrays;

// Makes BatchArrays; owns the pinned buffers they reuse (when pinning).
class BatchConverter {
 public:
  BatchConverter(TensorDtypes dtypes, bool pin);
  ~BatchConverter();
  BatchConverter(const BatchConverter&) = delete;
  BatchConverter& operator=(const BatchConverter&) = delete;

  bool pinned() const { return pin_; }

  // The conversion's copying part: plain C++, called without the GIL.
  BatchArrays convert(std::shared_ptr<const Batch> batch) const;

 private:
  struct Pool;
  TensorDtypes dtypes_;
  bool pin_;
  std::unique_ptr<Pool> pool_;
};

class BatchArrays {
 public:
  // The dict of arrays, made with the GIL held.
  pybind11::dict to_dict() const;
  // The step's StepInfo, moved out (once).
  StepInfo take_step_info() { return std::move(info_); }

 private:
  friend class BatchConverter;
  struct Block;
  struct Column {
    std::string name;
    std::vector<pybind11::ssize_t> shape;
    Element element = Element::int32;
    // Where the values are: copied into `block` at `offset`, or viewed in the batch at `source`.
    bool copied = false;
    std::size_t offset = 0;
    const void* source = nullptr;
  };
  std::shared_ptr<const Batch> batch_;  // when any column is a view of it
  StepInfo info_;
  std::shared_ptr<Block> block_;
  std::vector<Column> columns_;
};

}  // namespace odbatch::python
