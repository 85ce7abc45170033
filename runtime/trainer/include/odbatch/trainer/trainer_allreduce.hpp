#pragma once
// The trainer's gradient allreduce across data-parallel ranks that are processes: a Gloo context
// of the trainer's own, separate from the loader's round mesh as a real trainer's communicator
// is, built through the run's TCP store (keys under "trainer/"). Gloo stays behind the pimpl.
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

#include "odbatch/dist/dist_env.hpp"

namespace odbatch {

class TrainerAllreduce {
 public:
  // Connects rank dist.rank of dist.world_size through the store at master_addr:master_port
  // (TrainerStore), its Gloo pairs at dist.gloo_hostname, else at master_addr. The store is
  // rank 0's pipeline's, so construct the Pipeline first. A single rank connects to nothing. Throws
  // std::runtime_error naming the rank when the mesh is not built in `timeout`, which also bounds
  // every later sum.
  explicit TrainerAllreduce(const DistEnv& dist,
                            std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~TrainerAllreduce();
  TrainerAllreduce(const TrainerAllreduce&) = delete;
  TrainerAllreduce& operator=(const TrainerAllreduce&) = delete;

  // Replaces `values` on every rank by their elementwise sum over the ranks; every rank calls it
  // with the same length, in the same order. Throws std::runtime_error when a peer is gone.
  void sum(std::span<float> values);
  void sum(std::span<double> values);

  std::uint32_t world_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace odbatch
