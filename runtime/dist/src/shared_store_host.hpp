#pragma once
// The store rank 0 hosts, shared by every process group of the process that hosts it at the same
// address: a training and an evaluation Pipeline use one server, each under a prefix of its own.
#include <memory>

#include "odbatch/store/tcp_store_server.hpp"

namespace odbatch {

// The server at options.host:options.port: the one this process already serves there, or a new
// one. It stops when its last holder lets it go; a later call waits for that and binds again.
// Throws StoreError as TcpStoreServer does, and std::invalid_argument when the server already
// there expects another token.
std::shared_ptr<TcpStoreServer> share_hosted_store(const TcpStoreServerOptions& options);

}  // namespace odbatch
