#pragma once
// What a trainer should know about one training step on its rank: where it stands in the epoch,
// its loss scale, this rank's and every rank's totals, and the samples it holds.
#include <cstdint>
#include <vector>

#include "odbatch/core/plan.hpp"
#include "odbatch/core/sample.hpp"

namespace odbatch {

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

}  // namespace odbatch
