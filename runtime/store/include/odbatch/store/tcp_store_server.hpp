#pragma once
// The TCP store's server: keeps the keys in memory and serves clients (TcpStoreClient) from a
// thread of its own. Rank 0 hosts it at MASTER_ADDR:MASTER_PORT, or `odbatch store` runs it alone.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "odbatch/store/store_wire.hpp"

namespace odbatch {

struct TcpStoreServerOptions {
  // The address to bind, an IP address or a host name; only connections to it are accepted.
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0: an ephemeral port, see TcpStoreServer::port()
  // Clients must present this token before their first request; empty: no token. At most
  // kMaxStoreTokenBytes: until a connection has presented it, the server reads frames no larger
  // than a hello.
  std::string token;
  std::uint32_t max_connections = 4096;
  // How long a new connection may take to present its hello (and token) before it is dropped.
  std::chrono::milliseconds hello_timeout{10'000};
  // How long stop() lets replies already queued (shutdown notices to waiters) drain.
  std::chrono::milliseconds shutdown_grace{1'000};
  StoreWireLimits limits;

  // Binds `host`:`port` with `token`; throws std::invalid_argument when the host is empty or
  // the port 0 (torchrun's MASTER_ADDR and MASTER_PORT unset).
  static TcpStoreServerOptions at(std::string host, std::uint16_t port, std::string token);
};

class TcpStoreServer {
 public:
  // Binds and listens, then serves on its own thread. Throws StoreError (connection) when the
  // address cannot be resolved or bound, std::invalid_argument when the token is too long.
  explicit TcpStoreServer(TcpStoreServerOptions options);
  ~TcpStoreServer();  // stops
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  std::uint16_t port() const;          // the bound port, also when an ephemeral one was asked for
  const std::string& address() const;  // "host:port" as bound, e.g. "127.0.0.1:29500"

  // Stops accepting, answers every pending get or wait with a failure saying that the server is
  // shutting down, closes every connection and joins the thread. Idempotent.
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace odbatch
