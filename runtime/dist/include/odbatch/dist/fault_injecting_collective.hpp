#pragma once
// Fault injection for stress tests of the round protocol (`odbatch stress`, docs/distributed.md):
// a rank named in ODBATCH_FAULT wraps its round collective in one that injects the fault at its
// K-th exchange. Each injection is announced on stderr first, with the wall-clock time, so that a
// supervisor can measure how long the other ranks take to fail.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "odbatch/core/fault_spec.hpp"
#include "odbatch/dist/collective.hpp"

namespace odbatch {

// This rank's fault from ODBATCH_FAULT (specs separated by ';', at most one per rank), if any.
// Throws std::invalid_argument naming the variable and the problem.
std::optional<FaultSpec> fault_for_rank(std::string_view env_value, std::uint32_t rank);
std::optional<FaultSpec> fault_from_env(std::uint32_t rank);

class FaultInjectingCollective final : public Collective {
 public:
  // `stop_store` makes the store unreachable (store_unreachable); the others need nothing.
  FaultInjectingCollective(std::unique_ptr<Collective> inner, FaultSpec fault,
                           std::function<void()> stop_store);
  // Says so on stderr when the run ended before the fault's round.
  ~FaultInjectingCollective() override;

  std::uint32_t rank() const override;
  std::uint32_t world_size() const override;
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                Clock::time_point deadline) override;
  void abort(const std::string& reason) override;
  void finish_epoch(std::uint64_t epoch, Clock::time_point deadline) override;
  void depart(std::uint64_t epoch, std::uint64_t steps, Clock::time_point deadline) override;
  void set_abort_listener(AbortListener listener) override;

 private:
  // The frame to send instead of `mine` for the frame faults; empty for the others.
  std::vector<std::byte> inject(std::span<const std::byte> mine);

  std::unique_ptr<Collective> inner_;
  FaultSpec fault_;
  std::function<void()> stop_store_;
  std::uint64_t exchanges_ = 0;
};

}  // namespace odbatch
