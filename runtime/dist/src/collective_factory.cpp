#include "odbatch/dist/collective_factory.hpp"

#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/dist/process_group_collective.hpp"

namespace odbatch {

std::unique_ptr<Collective> make_round_collective(const DistEnv& env,
                                                  const DistributedConfig& timing) {
  if (env.inproc_group) return env.inproc_group->member(env.rank);
  return std::make_unique<ProcessGroupCollective>(env, timing);
}

}  // namespace odbatch
