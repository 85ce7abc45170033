// `odbatch store` as a separate process: it prints where it serves, serves clients, stops on
// SIGTERM with status 0, its clients fail promptly when it is killed, and clients that never
// authenticate cost it little memory.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "odbatch/store/store_token.hpp"
#include "odbatch/store/store_wire.hpp"
#include "odbatch/store/tcp_store_client.hpp"

extern char** environ;

namespace odbatch {
namespace {

using namespace std::chrono_literals;

// `odbatch store ARGUMENTS` running in the background, its stdout on a pipe. Killed (SIGKILL) if
// still running at the end of the test.
class StoreProcess {
 public:
  explicit StoreProcess(const std::vector<std::string>& arguments) {
    int pipe_ends[2];
    REQUIRE(::pipe(pipe_ends) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
    std::vector<std::string> argv_text{ODBATCH_CLI_PATH, "store"};
    argv_text.insert(argv_text.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int spawned =
        posix_spawn(&pid_, ODBATCH_CLI_PATH, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_ends[1]);
    output_ = pipe_ends[0];
    REQUIRE(spawned == 0);
  }
  ~StoreProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(output_);
  }
  StoreProcess(const StoreProcess&) = delete;
  StoreProcess& operator=(const StoreProcess&) = delete;

  // The next line of output; none at the end of the output or after 10 s without one.
  std::optional<std::string> line() {
    std::string text;
    for (;;) {
      pollfd ready{output_, POLLIN, 0};
      if (::poll(&ready, 1, 10'000) != 1) return std::nullopt;
      char c = 0;
      if (::read(output_, &c, 1) != 1) return std::nullopt;
      if (c == '\n') return text;
      text += c;
    }
  }

  // The port in "odbatch store: serving at 127.0.0.1:PORT".
  std::uint16_t serving_port() {
    const auto first = line();
    REQUIRE(first);
    const std::string prefix = "odbatch store: serving at 127.0.0.1:";
    REQUIRE_MESSAGE(first->starts_with(prefix), *first);
    return static_cast<std::uint16_t>(std::stoul(first->substr(prefix.size())));
  }

  pid_t pid() const { return pid_; }

  // Sends `signal` and returns the exit status, or -1 when the process did not exit normally.
  int stop_with(int signal) {
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = 0;
  int output_ = -1;
};

TcpStoreClientOptions client_options(std::uint16_t port, std::string token = "") {
  TcpStoreClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.token = std::move(token);
  options.connect_timeout = 5s;
  options.call_timeout = 5s;
  return options;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A field of /proc/PID/status that counts kB (VmRSS, VmHWM), in KiB.
long status_kib(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with(field + ":")) return std::stol(line.substr(field.size() + 1));
  FAIL("no " << field << " in /proc/" << pid << "/status");
  return 0;
}

// A plain TCP connection to the local store that sends what no TcpStoreClient would.
class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    timeval bound{5, 0};  // a send that the store never reads must not block the test
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  // Sends what it can: the store may close the connection before reading all of it.
  void send(const std::vector<std::byte>& bytes) {
    ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

TEST_CASE("odbatch store serves clients and exits 0 on SIGTERM and SIGINT") {
  for (const int signal : {SIGTERM, SIGINT}) {
    CAPTURE(signal);
    StoreProcess store({"--host", "127.0.0.1", "--port", "0"});
    const std::uint16_t port = store.serving_port();
    {
      TcpStoreClient client(client_options(port));
      client.set("k", store_bytes("v"));
      CHECK(client.add("n", 3) == 3);
      TcpStoreClient other(client_options(port));
      CHECK(store_text(other.get("k", 1s)) == "v");
    }
    CHECK(store.stop_with(signal) == 0);
    const auto goodbye = store.line();
    REQUIRE(goodbye);
    CHECK(contains(*goodbye, "stopping"));
  }
}

TEST_CASE("odbatch store --token-env admits only clients with the token") {
  ::setenv(kStoreTokenVariable, "tok-123", 1);
  StoreProcess store({"--host", "127.0.0.1", "--port", "0", "--token-env"});
  ::unsetenv(kStoreTokenVariable);
  const std::uint16_t port = store.serving_port();
  TcpStoreClient admitted(client_options(port, "tok-123"));
  admitted.set("k", {});
  CHECK_THROWS_WITH_AS(TcpStoreClient(client_options(port, "wrong")),
                       doctest::Contains("authentication failed"), StoreError);
  CHECK(store.stop_with(SIGTERM) == 0);
}

TEST_CASE("odbatch store --token-env without a token refuses to start") {
  ::unsetenv(kStoreTokenVariable);
  StoreProcess store({"--host", "127.0.0.1", "--port", "0", "--token-env"});
  CHECK_FALSE(store.line());  // nothing served
  CHECK(store.stop_with(SIGTERM) == 2);
}

TEST_CASE("clients of a killed odbatch store fail promptly, naming its address") {
  StoreProcess store({"--host", "127.0.0.1", "--port", "0"});
  const std::uint16_t port = store.serving_port();
  TcpStoreClient client(client_options(port));
  client.set("k", {});
  CHECK(store.stop_with(SIGKILL) == -1);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(
      client.get("k", 0ms),
      doctest::Contains(("store get 'k' at 127.0.0.1:" + std::to_string(port)).c_str()),
      StoreError);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

// Before its hello a connection may send no more than a hello: a length prefix announcing more is
// refused at once, so that clients that never authenticate cannot make the store allocate.
TEST_CASE(
    "100 unauthenticated clients announcing 16 MiB frames each add under 32 MiB to the store") {
  constexpr int kClients = 100;
  constexpr long kBoundKib = 32 * 1024;
  ::setenv(kStoreTokenVariable, "tok-123", 1);
  StoreProcess store({"--host", "127.0.0.1", "--port", "0", "--token-env"});
  ::unsetenv(kStoreTokenVariable);
  const std::uint16_t port = store.serving_port();
  TcpStoreClient admitted(client_options(port, "tok-123"));
  admitted.set("k", store_bytes("v"));
  const long hwm_before = status_kib(store.pid(), "VmHWM");
  const long rss_before = status_kib(store.pid(), "VmRSS");

  // Each announces a 16 MiB body (the limit for an authenticated client) and sends 64 KiB of it:
  // a hello's header, then filler.
  std::vector<std::byte> part(kStoreLengthPrefixBytes + (64u << 10));
  const std::uint32_t announced = 16u << 20;
  for (std::size_t i = 0; i < kStoreLengthPrefixBytes; ++i)
    part[i] = static_cast<std::byte>(announced >> (8 * i));
  part[kStoreLengthPrefixBytes] = static_cast<std::byte>(kStoreWireVersion);
  part[kStoreLengthPrefixBytes + 2] = static_cast<std::byte>(StoreOp::hello);
  std::vector<std::unique_ptr<RawSocket>> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.push_back(std::make_unique<RawSocket>(port));
    clients.back()->send(part);
  }
  // The store answers each with its refusal and closes it; wait for that (5 s at most in all).
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  int answered = 0;
  for (const auto& client : clients) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd ready{client->fd(), POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(std::max(left.count(), 0L))) == 1) ++answered;
  }
  CHECK(store_text(admitted.get("k", 0ms)) == "v");  // served meanwhile
  const long hwm_after = status_kib(store.pid(), "VmHWM");
  const long rss_after = status_kib(store.pid(), "VmRSS");
  MESSAGE("store with " << kClients << " unauthenticated clients: VmRSS " << rss_before << " -> "
                        << rss_after << " KiB, VmHWM " << hwm_before << " -> " << hwm_after
                        << " KiB; " << answered << " refused at once");
  CHECK(answered == kClients);
  CHECK(hwm_after - hwm_before < kBoundKib);
  CHECK(rss_after - rss_before < kBoundKib);
  CHECK(store.stop_with(SIGTERM) == 0);
}

}  // namespace
}  // namespace odbatch
