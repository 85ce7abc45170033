#include "odbatch/dist/local_launcher.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "rank_output_forwarder.hpp"

extern char** environ;

namespace odbatch {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

std::string describe(const RankExit& exit) {
  return exit.signal ? "was killed by signal " + std::to_string(exit.signal) + " (" +
                           strsignal(exit.signal) + ")"
                     : "exited with status " + std::to_string(exit.exit_code);
}

// The launcher's environment with torchrun's variables for `rank` (and the extras) set.
std::vector<std::string> rank_environment(const LaunchSpec& spec, std::uint16_t port,
                                          std::uint16_t store_port, std::uint32_t rank) {
  std::map<std::string, std::string> variables = spec.extra_environment;
  if (store_port != 0) variables["ODBATCH_STORE_PORT"] = std::to_string(store_port);
  variables["RANK"] = std::to_string(rank);
  variables["LOCAL_RANK"] = std::to_string(rank);
  variables["WORLD_SIZE"] = std::to_string(spec.nproc);
  variables["LOCAL_WORLD_SIZE"] = std::to_string(spec.nproc);
  variables["GROUP_RANK"] = "0";
  variables["MASTER_ADDR"] = spec.master_addr;
  variables["MASTER_PORT"] = std::to_string(port);
  std::vector<std::string> environment;
  for (char** entry = environ; *entry; ++entry) {
    const std::string variable(*entry);
    if (!variables.contains(variable.substr(0, variable.find('='))))
      environment.push_back(variable);
  }
  for (const auto& [name, value] : variables) environment.push_back(name + "=" + value);
  return environment;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

class RankGroup {
 public:
  RankGroup(const LaunchSpec& spec, std::ostream& log) : spec_(spec), log_(log) {}

  void start(std::uint16_t port, std::uint16_t store_port, const sigset_t& child_mask,
             const RankOutputForwarder* output) {
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int s : kForwardedSignals) sigaddset(&defaults, s);
    sigaddset(&defaults, SIGCHLD);
    posix_spawnattr_setsigmask(&attributes, &child_mask);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    // Each rank leads a process group of its own, so stopping a rank reaches what it started.
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    std::vector<std::string> argv = spec_.command;
    auto argv_pointers = pointers(argv);
    for (std::uint32_t rank = 0; rank < spec_.nproc; ++rank) {
      auto environment = rank_environment(spec_, port, store_port, rank);
      auto environment_pointers = pointers(environment);
      pid_t pid = 0;
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      if (output) output->redirect(rank, actions);
      const int error = posix_spawnp(&pid, argv_pointers[0], &actions, &attributes,
                                     argv_pointers.data(), environment_pointers.data());
      posix_spawn_file_actions_destroy(&actions);
      if (error != 0) {
        posix_spawnattr_destroy(&attributes);
        terminate_all(SIGKILL);
        while (running_ > 0) reap(true);
        throw std::runtime_error("cannot start rank " + std::to_string(rank) + " (" +
                                 spec_.command[0] + "): " + std::strerror(error));
      }
      pids_.push_back(pid);
      exits_.push_back(std::nullopt);
      ++running_;
    }
    posix_spawnattr_destroy(&attributes);
  }

  // Collects the ranks that ended (waiting for one when `block`); the first failure stops the rest.
  void reap(bool block) {
    for (std::uint32_t rank = 0; rank < pids_.size(); ++rank) {
      if (exits_[rank]) continue;
      int status = 0;
      const pid_t done = waitpid(pids_[rank], &status, block ? 0 : WNOHANG);
      if (done != pids_[rank]) continue;
      RankExit exit{rank, 0, 0};
      if (WIFSIGNALED(status)) {
        exit.signal = WTERMSIG(status);
        exit.exit_code = 128 + exit.signal;
      } else {
        exit.exit_code = WEXITSTATUS(status);
      }
      exits_[rank] = exit;
      --running_;
      if (exit.failed() && !first_failure_ && !forwarded_signal_) {
        first_failure_ = exit;
        log_ << "odbatch launch: rank " << rank << " " << describe(exit)
             << "; stopping the other ranks\n";
        stop_others();
      }
      if (block) return;
    }
  }

  void forward(int signal) {
    if (!forwarded_signal_) {
      forwarded_signal_ = signal;
      log_ << "odbatch launch: received signal " << signal << " (" << strsignal(signal)
           << "); forwarding it to the ranks\n";
    }
    terminate_all(signal);
    if (!kill_at_) kill_at_ = Clock::now() + spec_.grace;
  }

  // Kills what is left once the grace period is over.
  void enforce_grace() {
    if (!kill_at_ || Clock::now() < *kill_at_ || killed_) return;
    log_ << "odbatch launch: " << running_ << " rank(s) still running after " << spec_.grace.count()
         << " ms; killing them\n";
    terminate_all(SIGKILL);
    killed_ = true;
  }

  std::uint32_t running() const { return running_; }
  std::optional<Clock::time_point> kill_at() const { return kill_at_; }

  LaunchResult result() const {
    LaunchResult r;
    r.first_failure = first_failure_;
    r.forwarded_signal = forwarded_signal_;
    for (const auto& exit : exits_) r.exits.push_back(*exit);
    if (first_failure_)
      r.status = first_failure_->exit_code;
    else if (forwarded_signal_)
      r.status = 128 + *forwarded_signal_;
    return r;
  }

 private:
  void stop_others() {
    terminate_all(SIGTERM);
    if (!kill_at_) kill_at_ = Clock::now() + spec_.grace;
  }

  void terminate_all(int signal) {
    for (std::uint32_t rank = 0; rank < pids_.size(); ++rank)
      if (!exits_[rank]) ::kill(-pids_[rank], signal);
  }

  const LaunchSpec& spec_;
  std::ostream& log_;
  std::vector<pid_t> pids_;
  std::vector<std::optional<RankExit>> exits_;
  std::uint32_t running_ = 0;
  std::optional<RankExit> first_failure_;
  std::optional<int> forwarded_signal_;
  std::optional<Clock::time_point> kill_at_;
  bool killed_ = false;
};

}  // namespace

std::uint16_t free_tcp_port(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_port = 0;
  if (::inet_pton(AF_INET, address.c_str(), &bound.sin_addr) != 1) {
    ::close(fd);
    throw std::runtime_error("not an IPv4 address: " + address);
  }
  socklen_t length = sizeof bound;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&bound), sizeof bound) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("no free port on " + address + ": " + why);
  }
  ::close(fd);
  return ntohs(bound.sin_port);
}

LaunchResult launch_local_ranks(const LaunchSpec& spec, std::ostream& log) {
  if (spec.nproc == 0) throw std::invalid_argument("nproc must be at least 1");
  if (spec.command.empty()) throw std::invalid_argument("no command to launch");
  const std::uint16_t port = spec.master_port ? spec.master_port : free_tcp_port(spec.master_addr);
  // odbatch's store gets a free port of its own, as MASTER_PORT is the trainer's torch store's;
  // unless the caller placed the store already (ODBATCH_STORE_PORT, ODBATCH_STORE_ADDR).
  const auto placed = [&](const char* name) {
    return spec.extra_environment.contains(name) || std::getenv(name) != nullptr;
  };
  std::uint16_t store_port = 0;
  if (!placed("ODBATCH_STORE_PORT") && !placed("ODBATCH_STORE_ADDR")) {
    do store_port = free_tcp_port(spec.master_addr);
    while (store_port == port);
  }

  sigset_t waited, previous;
  sigemptyset(&waited);
  for (int s : kForwardedSignals) sigaddset(&waited, s);
  sigaddset(&waited, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &waited, &previous);
  struct RestoreMask {
    const sigset_t& mask;
    ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous};

  std::optional<RankOutputForwarder> output;
  if (spec.prefix_output) output.emplace(spec.nproc);
  RankGroup group(spec, log);
  group.start(port, store_port, previous, output ? &*output : nullptr);
  if (output) output->start();
  log << "odbatch launch: " << spec.nproc << " rank(s) of " << spec.command[0] << ", MASTER_ADDR "
      << spec.master_addr << " MASTER_PORT " << port;
  if (store_port != 0) log << " ODBATCH_STORE_PORT " << store_port;
  log << '\n';
  while (group.running() > 0) {
    // Wake for a signal, a rank's end, or the grace deadline (at least once a second).
    auto wait = std::chrono::milliseconds(1000);
    if (const auto kill_at = group.kill_at())
      wait =
          std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at - Clock::now()),
                     std::chrono::milliseconds(1), wait);
    timespec timeout{static_cast<time_t>(wait.count() / 1000),
                     static_cast<long>(wait.count() % 1000) * 1'000'000};
    const int signal = sigtimedwait(&waited, nullptr, &timeout);
    if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) group.forward(signal);
    group.reap(false);
    group.enforce_grace();
  }
  // What the ranks wrote last; processes they left behind may hold the pipes open a while.
  if (output) output->finish(Clock::now() + std::chrono::seconds(2));
  return group.result();
}

}  // namespace odbatch
