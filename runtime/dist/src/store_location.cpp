#include "odbatch/dist/store_location.hpp"

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

namespace odbatch {
namespace {

TcpStoreClientOptions standalone_store(const std::string& address, std::string token) {
  const auto colon = address.rfind(':');
  std::uint16_t port = 0;
  if (colon != std::string::npos && colon > 0) {
    const char* first = address.data() + colon + 1;
    const char* last = address.data() + address.size();
    const auto [end, error] = std::from_chars(first, last, port);
    if (error == std::errc{} && end == last && port != 0) {
      std::string host = address.substr(0, colon);
      if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
      return TcpStoreClientOptions::at(std::move(host), port, std::move(token));
    }
  }
  throw std::invalid_argument("ODBATCH_STORE_ADDR='" + address + "': expected host:port");
}

}  // namespace

std::uint16_t hosted_store_port(const DistEnv& env) {
  if (env.store_port != 0) return env.store_port;
  if (env.master_port == 0)
    throw std::invalid_argument(
        "the store's port needs MASTER_PORT (the store is at MASTER_PORT + " +
        std::to_string(kStorePortOffset) + ") or ODBATCH_STORE_PORT");
  const unsigned port = unsigned{env.master_port} + kStorePortOffset;
  if (port > 65535)
    throw std::invalid_argument("MASTER_PORT=" + std::to_string(env.master_port) + " + " +
                                std::to_string(kStorePortOffset) +
                                " (the store's port) is past 65535; set ODBATCH_STORE_PORT");
  return static_cast<std::uint16_t>(port);
}

TcpStoreClientOptions store_client_options(const DistEnv& env) {
  if (!env.store_address.empty()) return standalone_store(env.store_address, env.store_token);
  if (env.master_addr.empty())
    throw std::invalid_argument("the store's address needs MASTER_ADDR and MASTER_PORT");
  return TcpStoreClientOptions::at(env.master_addr, hosted_store_port(env), env.store_token);
}

bool hosts_store(const DistEnv& env) {
  return env.rank == 0 && env.store_address.empty();
}

}  // namespace odbatch
