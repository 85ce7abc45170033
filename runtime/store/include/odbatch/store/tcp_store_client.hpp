#pragma once
// A client of the TCP store (TcpStoreServer). Calls are synchronous and each has a deadline; a
// failure throws StoreError naming the operation, the key(s) and the server's address.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "odbatch/store/store.hpp"
#include "odbatch/store/store_wire.hpp"

namespace odbatch {

struct TcpStoreClientOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string token;  // presented in the hello; empty: none; at most kMaxStoreTokenBytes
  // How long the constructor keeps trying to connect: the server may start after its clients.
  std::chrono::milliseconds connect_timeout{60'000};
  // How long the server may take to answer a call; get and wait add their own timeout to it.
  std::chrono::milliseconds call_timeout{30'000};
  StoreWireLimits limits;

  // The store at `host`:`port` with `token`; throws std::invalid_argument when the host is empty or
  // the port 0 (torchrun's MASTER_ADDR and MASTER_PORT unset).
  static TcpStoreClientOptions at(std::string host, std::uint16_t port, std::string token);
};

class TcpStoreClient final : public Store {
 public:
  // Connects, retrying with backoff until connect_timeout, and presents the token. Throws
  // StoreError: connection when no server answered in time, authentication when the server
  // refused the token, rejected when it refused the connection otherwise (too many of them);
  // std::invalid_argument when the token is longer than a hello may carry.
  explicit TcpStoreClient(TcpStoreClientOptions options);
  ~TcpStoreClient() override;
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  // "host:port" as configured.
  const std::string& address() const;

  // Calls from several threads are serialised: a thread that must not be held up by another's
  // wait (a heartbeat) needs its own client. Once the connection is lost, or a call ran past its
  // deadline, every later call fails at once with StoreError (connection).
  void set(const std::string& key, std::span<const std::byte> value) override;
  std::vector<std::byte> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  CompareSetResult compare_and_set(const std::string& key,
                                   const std::optional<std::vector<std::byte>>& expected,
                                   std::span<const std::byte> desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::vector<std::vector<std::byte>> set_and_wait(const std::string& key,
                                                   std::span<const std::byte> value,
                                                   const std::vector<std::string>& keys,
                                                   std::chrono::milliseconds timeout) override;
  bool erase(const std::string& key) override;
  std::uint64_t erase_prefix(const std::string& prefix) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace odbatch
