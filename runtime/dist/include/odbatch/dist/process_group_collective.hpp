#pragma once
// The round collective of ranks that are processes, on one machine or many (docs/distributed.md):
// the control plane on the TCP store (rank 0 hosts it at master_addr:master_port unless the
// DistEnv names a standalone `odbatch store`) around a Gloo mesh built through that store. Each
// allgather is one round: readiness on the store, checked for liveness and for the abort key, then
// one Gloo exchange (sizes, then blobs) with a deadline of its own.
#include <chrono>
#include <memory>
#include <string>

#include "odbatch/dist/collective.hpp"
#include "odbatch/dist/control_plane.hpp"
#include "odbatch/dist/dist_env.hpp"
#include "odbatch/dist/distributed_config.hpp"

namespace odbatch {

class ProcessGroupCollective final : public Collective {
 public:
  // Hosts the store (rank 0, unless standalone), connects, starts the heartbeats and joins the
  // Gloo mesh. Throws CollectiveError naming this rank and the cause, which tells apart a store
  // lost (naming its host), a peer missing (naming it), a token refused and a store that never
  // answered within connect_timeout.
  ProcessGroupCollective(const DistEnv& env, const DistributedConfig& timing);
  // Passes the finish barrier unless the group was aborted: rank 0 waits until every rank has
  // finished before the store it hosts stops serving.
  ~ProcessGroupCollective() override;
  ProcessGroupCollective(const ProcessGroupCollective&) = delete;
  ProcessGroupCollective& operator=(const ProcessGroupCollective&) = delete;

  std::uint32_t rank() const override;
  std::uint32_t world_size() const override;
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                Clock::time_point deadline) override;
  void abort(const std::string& reason) override;
  void finish_epoch(std::uint64_t epoch, Clock::time_point deadline) override;
  void depart(std::uint64_t epoch, std::uint64_t steps, Clock::time_point deadline) override;
  void set_abort_listener(AbortListener listener) override;

  // Stops serving the store this rank hosts, if it hosts one: every rank then loses it, as when
  // this machine drops off the network (fault injection).
  void stop_hosted_store();

 private:
  class Group;
  std::unique_ptr<Group> group_;
};

}  // namespace odbatch
