#pragma once
// How a rank gets its round collective: make_round_collective builds the one its DistEnv
// describes; a CollectiveFactory lets a caller build another instead, e.g. one that wraps it to
// inject a fault (fault_injecting_collective.hpp).
#include <functional>
#include <memory>

#include "odbatch/dist/collective.hpp"
#include "odbatch/dist/dist_env.hpp"
#include "odbatch/dist/distributed_config.hpp"

namespace odbatch {

using CollectiveFactory =
    std::function<std::unique_ptr<Collective>(const DistEnv&, const DistributedConfig&)>;

// The collective for the round protocol: the in-process group's member when `env` has a group,
// else, for ranks that are processes, the Gloo one with its control plane
// (ProcessGroupCollective). Throws CollectiveError when it cannot be set up.
std::unique_ptr<Collective> make_round_collective(const DistEnv& env,
                                                  const DistributedConfig& timing);

}  // namespace odbatch
