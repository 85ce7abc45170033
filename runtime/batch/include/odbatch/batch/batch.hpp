#pragma once
// One training step's batch on one rank, as the trainer receives it, and what it should know
// about the step.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "odbatch/core/plan.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

// padded: [rows, seq_len] with attention_mask; packed: all rows concatenated (varlen) with
// cu_seqlens and position_ids, as flash-attention's varlen kernels take them.
enum class BatchLayout : std::uint8_t { padded, packed };
std::string_view to_string(BatchLayout layout);

struct StepInfo {
  std::uint64_t epoch = 0;
  std::uint64_t step = 0;   // step within the epoch: equal on every rank
  std::uint64_t round = 0;  // alignment round that planned it
  bool idle = false;        // a dummy step: run it with loss_scale 0
  // One sample over the token or patch budget on its own (batching.over_budget = "singleton"):
  // the step may need more memory than the budget promises.
  bool over_budget = false;
  double loss_scale = 0.0;    // multiply the rank's mean loss by this before backward
  std::uint32_t samples = 0;  // this rank's samples in the step
  std::uint64_t tokens = 0;   // this rank's tokens in the step
  std::uint64_t labels = 0;   // this rank's supervised targets in the step
  StepTotals global;          // samples, tokens, labels of the step over all ranks
  std::uint64_t global_samples_consumed = 0;  // over all ranks, epoch so far, this step included
  std::uint64_t global_tokens_consumed = 0;
  std::vector<SampleId> sample_ids;         // in row order
  std::vector<std::uint32_t> source_files;  // per row: index into the source's file list
};

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
  // Every image of the step, row after row: uint8 RGB, each height x width x 3.
  std::span<const std::uint8_t> pixel_values() const { return pixel_values_; }
  // Per image (t, h, w) in patches, t = 1: Qwen2-VL's image_grid_thw.
  std::span<const std::int32_t> image_grid_thw() const { return image_grid_thw_; }
  const StepInfo& step_info() const { return info_; }

 private:
  friend class BatchCollator;
  BatchLayout layout_ = BatchLayout::padded;
  std::uint32_t rows_ = 0;
  std::uint32_t seq_len_ = 0;
  std::vector<std::int32_t> input_ids_;
  std::vector<std::int32_t> labels_;
  std::vector<std::uint8_t> attention_mask_;
  std::vector<std::int32_t> cu_seqlens_;
  std::vector<std::int32_t> position_ids_;
  std::vector<std::uint8_t> pixel_values_;
  std::vector<std::int32_t> image_grid_thw_;
  StepInfo info_;
};

}  // namespace odbatch
