#pragma once
// Helpers for the TCP store's tests: loopback servers and clients with short timeouts, frames
// built byte by byte (also invalid ones) and a plain socket that sends them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/store/tcp_store_client.hpp"
#include "odbatch/store/tcp_store_server.hpp"

namespace odbatch::test {

using Bytes = std::vector<std::byte>;
using namespace std::chrono_literals;

// Generous bounds: they only catch hangs, never measure speed.
inline constexpr auto kGenerousBound = 5s;

inline TcpStoreServerOptions loopback_server_options(std::string token = "") {
  TcpStoreServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.token = std::move(token);
  return options;
}

inline TcpStoreClientOptions client_options(std::uint16_t port, std::string token = "") {
  TcpStoreClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.token = std::move(token);
  options.connect_timeout = 5s;
  options.call_timeout = 5s;
  return options;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline void append_le(Bytes& out, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) out.push_back(static_cast<std::byte>(value >> (8 * i)));
}

inline void append_item(Bytes& out, std::string_view item) {
  append_le(out, item.size(), 4);
  for (char c : item) out.push_back(static_cast<std::byte>(c));
}

// A body laid out field by field, whatever the fields say.
struct RawBody {
  std::uint16_t version = kStoreWireVersion;
  std::uint8_t op = static_cast<std::uint8_t>(StoreOp::set);
  std::uint8_t reserved = 0;
  std::int64_t number = 0;
  std::vector<std::string> keys;
  std::vector<std::string> values;

  Bytes bytes() const {
    Bytes out;
    append_le(out, version, 2);
    append_le(out, op, 1);
    append_le(out, reserved, 1);
    append_le(out, static_cast<std::uint64_t>(number), 8);
    append_le(out, keys.size(), 4);
    append_le(out, values.size(), 4);
    for (const auto& key : keys) append_item(out, key);
    for (const auto& value : values) append_item(out, value);
    return out;
  }
  // With its length prefix.
  Bytes frame() const {
    const Bytes body = bytes();
    Bytes out;
    append_le(out, body.size(), 4);
    out.insert(out.end(), body.begin(), body.end());
    return out;
  }
};

inline Bytes encoded(const StoreMessage& message) {
  Bytes frame;
  const auto error = encode_store_frame(message, frame, StoreWireLimits{});
  REQUIRE_MESSAGE(!error, error->message);
  return frame;
}

// A plain TCP connection to the local server, for frames a TcpStoreClient never sends. Every
// receive gives up after kGenerousBound.
class RawConnection {
 public:
  explicit RawConnection(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    timeval bound{};
    bound.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(kGenerousBound).count();
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(std::span<const std::byte> bytes) {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }

  void hello(const std::string& token = "") {
    send(encoded(StoreMessage{StoreOp::hello, 0, {}, {store_bytes(token)}}));
    const auto reply = receive();
    REQUIRE(reply);
    REQUIRE(reply->op == StoreOp::ok);
  }

  // The next frame; none when the server closed the connection.
  std::optional<StoreMessage> receive() {
    Bytes prefix(kStoreLengthPrefixBytes);
    if (!read_exactly(prefix)) return std::nullopt;
    std::uint32_t body_bytes = 0;
    REQUIRE(!decode_store_frame_length(std::span<const std::byte, 4>(prefix), body_bytes,
                                       StoreWireLimits{}));
    Bytes body(body_bytes);
    REQUIRE(read_exactly(body));
    StoreMessage message;
    const auto error = decode_store_body(body, message, StoreWireLimits{});
    REQUIRE_MESSAGE(!error, error->message);
    return message;
  }

  // Whether the server closed the connection (rather than the wait running out).
  bool closed_by_server() {
    std::byte byte{};
    const ssize_t got = ::recv(fd_, &byte, 1, 0);
    return got == 0 || (got < 0 && errno == ECONNRESET);
  }

 private:
  bool read_exactly(Bytes& out) {
    std::size_t have = 0;
    while (have < out.size()) {
      const ssize_t got = ::recv(fd_, out.data() + have, out.size() - have, 0);
      if (got == 0 || (got < 0 && errno == ECONNRESET)) return false;
      REQUIRE_MESSAGE(got > 0, "no answer from the server within the bound");
      have += static_cast<std::size_t>(got);
    }
    return true;
  }

  int fd_;
};

// A loopback port held bound but not listening: connections to it are refused until a server
// takes it over (both sockets set SO_REUSEADDR, which Linux allows while neither listens).
class ReservedPort {
 public:
  ReservedPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    const int on = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
  }
  ~ReservedPort() { ::close(fd_); }
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

}  // namespace odbatch::test
