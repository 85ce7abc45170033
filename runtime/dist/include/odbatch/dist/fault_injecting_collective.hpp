#pragma once
// Fault injection for tests of the round protocol and `odbatch stress` (docs/distributed.md): the
// faulted rank's round collective is wrapped in one that injects the fault at its K-th exchange.
// Each injection is announced on stderr first, with the wall-clock time, so that a supervisor can
// measure how long the other ranks take to fail. Whoever runs the ranks wires it in (tests through
// PipelineOptions::collective, the `odbatch` CLI from ODBATCH_FAULT); the library reads no
// environment for it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "odbatch/core/fault_spec.hpp"
#include "odbatch/dist/collective.hpp"
#include "odbatch/dist/collective_factory.hpp"

namespace odbatch {

// Rank `rank`'s fault among `specs` (fault specs separated by ';', at most one per rank), if any.
// Throws std::invalid_argument naming the problem.
std::optional<FaultSpec> fault_for_rank(std::string_view specs, std::uint32_t rank);

// make_round_collective, with rank fault.rank's collective wrapped in a FaultInjectingCollective
// (whose store_unreachable stops the store that rank hosts, if it hosts one).
CollectiveFactory round_collective_with_fault(FaultSpec fault);

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
