#pragma once
// Where this process stands among the data-parallel ranks, as torchrun describes it, and which
// collective backend the round protocol uses.
#include <cstdint>
#include <memory>
#include <string>

#include "odbatch/dist/distributed_config.hpp"
#include "odbatch/dist/inproc_collective.hpp"

namespace odbatch {

struct DistEnv {
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::uint32_t local_rank = 0;
  std::string master_addr;
  std::uint16_t master_port = 0;
  // Ranks that are threads of this process share one group (the in-process backend).
  std::shared_ptr<InprocGroup> inproc_group;

  // One rank alone.
  static DistEnv single();
  // Rank `rank` of a group whose ranks are threads of this process.
  static DistEnv inproc(std::shared_ptr<InprocGroup> group, std::uint32_t rank,
                        std::uint32_t world_size);
  // RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT as torchrun sets them; without RANK
  // and WORLD_SIZE, a single rank. Throws std::invalid_argument naming a malformed variable.
  static DistEnv from_env();

  // The collective for the round protocol: the in-process group's, or for ranks that are
  // processes the Gloo one with its control plane (ProcessGroupCollective), wrapped in a
  // FaultInjectingCollective when ODBATCH_FAULT names this rank. Throws CollectiveError when it
  // cannot be set up, std::invalid_argument for a malformed ODBATCH_FAULT.
  std::unique_ptr<Collective> make_collective(const DistributedConfig& timing = {}) const;
};

}  // namespace odbatch
