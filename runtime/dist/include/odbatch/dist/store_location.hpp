#pragma once
// Where a rank reaches the run's store: a standalone store (`odbatch store`, DistEnv's
// store_address) when there is one, else the store rank 0 hosts at master_addr:store port.
// The loader's control plane and the trainer's own communicators meet through the same one.
#include <cstdint>

#include "odbatch/dist/dist_env.hpp"
#include "odbatch/store/tcp_store_client.hpp"

namespace odbatch {

// What MASTER_PORT is moved by for the store rank 0 hosts: torchrun's own store, and the one
// torch.distributed.init_process_group() starts, hold MASTER_PORT. A prime, so that runs on
// neighbouring MASTER_PORTs (29500, 29501, ...) do not take each other's store ports.
inline constexpr std::uint16_t kStorePortOffset = 1009;

// The port of the store rank 0 hosts: env.store_port, else master_port + kStorePortOffset.
// Throws std::invalid_argument when neither is set, or the sum is past 65535.
std::uint16_t hosted_store_port(const DistEnv& env);

// The client options for the run's store, with `env`'s token. Throws std::invalid_argument when
// store_address is not "host:port" (an IPv6 host in brackets), or when there is no standalone
// store and master_addr or the store port is unset.
TcpStoreClientOptions store_client_options(const DistEnv& env);

// Whether this rank hosts the run's store: rank 0 when there is no standalone one.
bool hosts_store(const DistEnv& env);

}  // namespace odbatch
