// A client's bytes sent to a real TcpStoreServer over loopback: a fresh server per input, so that
// an input's outcome never depends on the keys an earlier one left.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/store/store.hpp"
#include "odbatch/store/store_wire.hpp"
#include "odbatch/store/tcp_store_server.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "store_session";
// The server must have closed the connection by then; far above any loopback exchange.
constexpr auto kCloseDeadline = std::chrono::seconds(10);

// Connecting may fail for want of a local port when the machine is busy (each input's fresh
// server and connection hold ports for a while): such a failure is retried, as a client would;
// a refusal is the server's and is not.
constexpr int kConnectAttempts = 100;
constexpr auto kConnectRetryDelay = std::chrono::milliseconds(20);

class ClientSocket {
 public:
  explicit ClientSocket(std::uint16_t port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int error = 0;
    for (int attempt = 0; attempt < kConnectAttempts; ++attempt) {
      fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
      expect(fd_ >= 0, kTarget, "a client socket can be created");
      if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return;
      error = errno;
      ::close(fd_);
      if (error != EADDRNOTAVAIL && error != EAGAIN && error != EINTR && error != ETIMEDOUT) break;
      std::this_thread::sleep_for(kConnectRetryDelay);
    }
    const std::string promise =
        "the server accepts a connection on loopback (connect: " + std::string(strerror(error)) +
        ")";
    expect(false, kTarget, promise);
  }
  // Resets instead of closing gracefully, so that thousands of inputs leave no TIME_WAIT behind.
  ~ClientSocket() {
    const linger reset{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd_);
  }
  ClientSocket(const ClientSocket&) = delete;
  ClientSocket& operator=(const ClientSocket&) = delete;

  // Sends what the server takes; it may close early (a malformed frame), so errors end sending.
  void send_all_then_finish(std::span<const std::uint8_t> bytes) {
    while (!bytes.empty()) {
      const auto sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) break;
      bytes = bytes.subspan(static_cast<std::size_t>(sent));
    }
    ::shutdown(fd_, SHUT_WR);
  }

  // Everything the server sends until it closes the connection.
  std::vector<std::byte> receive_until_closed() {
    std::vector<std::byte> received;
    const auto deadline = std::chrono::steady_clock::now() + kCloseDeadline;
    std::byte buffer[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      expect(left.count() > 0, kTarget,
             "the server closes the connection once the client has sent everything");
      pollfd readable{fd_, POLLIN, 0};
      if (::poll(&readable, 1, static_cast<int>(left.count())) <= 0) continue;
      const auto got = ::recv(fd_, buffer, sizeof buffer, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return received;  // closed (or reset after a refusal)
      received.insert(received.end(), buffer, buffer + got);
    }
  }

 private:
  int fd_ = -1;
};

bool is_reply(StoreOp op) {
  return op == StoreOp::ok || op == StoreOp::timed_out || op == StoreOp::failed;
}

}  // namespace

Outcome store_session(Input input) {
  TcpStoreServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.token = std::string(kStoreSessionToken);
  TcpStoreServer server(options);
  std::vector<std::byte> replies;
  {
    ClientSocket client(server.port());
    client.send_all_then_finish(input);
    replies = client.receive_until_closed();
  }
  server.stop();

  // The replies, as a client reads them: whole frames, each a reply, none after one that
  // announces the close.
  Outcome outcome = Outcome::rejected;
  std::span<const std::byte> rest(replies);
  bool closing = false;
  while (!rest.empty()) {
    expect(!closing, kTarget, "no reply follows one that announces the close");
    expect(rest.size() >= kStoreLengthPrefixBytes, kTarget, "replies are whole frames");
    std::uint32_t body_bytes = 0;
    expect(!decode_store_frame_length(rest.first<kStoreLengthPrefixBytes>(), body_bytes,
                                      options.limits),
           kTarget, "a reply's length prefix is valid");
    rest = rest.subspan(kStoreLengthPrefixBytes);
    expect(rest.size() >= body_bytes, kTarget, "replies are whole frames");
    StoreMessage reply;
    expect(!decode_store_body(rest.first(body_bytes), reply, options.limits), kTarget,
           "a reply's body decodes");
    rest = rest.subspan(body_bytes);
    expect(is_reply(reply.op), kTarget, "the server sends only replies");
    if (reply.op == StoreOp::failed) {
      expect(!store_text(reply.values.front()).empty(), kTarget, "a failure says why");
      closing = reply.number == 1;
    }
    if (reply.op == StoreOp::ok) outcome = Outcome::accepted;
  }
  return outcome;
}

}  // namespace odbatch::fuzz
