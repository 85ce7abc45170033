#pragma once
// Where a rank reaches the run's store: a standalone store (`odbatch store`, DistEnv's
// store_address) when there is one, else the store rank 0 hosts at master_addr:master_port.
// The loader's control plane and the trainer's own communicators meet through the same one.
#include "odbatch/dist/dist_env.hpp"
#include "odbatch/store/tcp_store_client.hpp"

namespace odbatch {

// The client options for the run's store, with `env`'s token. Throws std::invalid_argument when
// store_address is not "host:port" (an IPv6 host in brackets), or when there is no standalone
// store and master_addr or master_port is unset.
TcpStoreClientOptions store_client_options(const DistEnv& env);

// Whether this rank hosts the run's store: rank 0 when there is no standalone one.
bool hosts_store(const DistEnv& env);

}  // namespace odbatch
