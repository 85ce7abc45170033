#pragma once
// Where this process stands among the data-parallel ranks, as torchrun describes it, and how it
// reaches the others: a plain value. from_env() is where the library reads these from the
// environment; whatever builds collectives from them (collective_factory.hpp) takes the value.
#include <cstdint>
#include <memory>
#include <string>

namespace odbatch {

class InprocGroup;

struct DistEnv {
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::uint32_t local_rank = 0;
  std::string master_addr;
  std::uint16_t master_port = 0;
  // Ranks that are threads of this process share one group (the in-process backend).
  std::shared_ptr<InprocGroup> inproc_group;

  // For ranks that are processes (docs/distributed.md):
  // the run's namespace in the store; ranks of one run must agree.
  std::string run_id = "default";
  // "host:port" of a standalone store; empty: rank 0 hosts one at master_addr:store_port.
  std::string store_address;
  // The port of the store rank 0 hosts; 0: master_port + kStorePortOffset (store_location.hpp),
  // since the trainer's torch.distributed store (torchrun's, init_process_group's) holds
  // MASTER_PORT itself.
  std::uint16_t store_port = 0;
  // The store's token: presented to the store, and required by the one rank 0 hosts. Empty: none.
  std::string store_token;
  // The address the other ranks reach this one's Gloo pairs at; empty: master_addr when it is a
  // loopback address, else this machine's host name.
  std::string gloo_hostname;

  // One rank alone.
  static DistEnv single();
  // Rank `rank` of a group whose ranks are threads of this process.
  static DistEnv inproc(std::shared_ptr<InprocGroup> group, std::uint32_t rank,
                        std::uint32_t world_size);
  // RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT as torchrun sets them (without
  // RANK and WORLD_SIZE, a single rank); run_id from ODBATCH_RUN_ID, else TORCHELASTIC_RUN_ID,
  // else "default", with "-restart<N>" added under TORCHELASTIC_RESTART_COUNT; store_address
  // from ODBATCH_STORE_ADDR, store_port from ODBATCH_STORE_PORT, store_token from
  // ODBATCH_STORE_TOKEN, gloo_hostname from
  // ODBATCH_GLOO_HOSTNAME. Throws std::invalid_argument naming a malformed variable.
  static DistEnv from_env();
};

}  // namespace odbatch
