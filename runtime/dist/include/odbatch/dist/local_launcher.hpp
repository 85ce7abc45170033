#pragma once
// Starts N ranks of one command on this machine with torchrun's environment (like `torchrun
// --standalone`) and supervises them: the first rank to fail, or a signal to the launcher, stops
// the others (SIGTERM, then SIGKILL after a grace period), so no rank is left running. Each rank
// runs in a process group of its own, and the signals go to the whole group.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace odbatch {

struct LaunchSpec {
  std::uint32_t nproc = 1;
  std::vector<std::string> command;  // argv; argv[0] is looked up in PATH
  std::string master_addr = "127.0.0.1";
  std::uint16_t master_port = 0;  // 0: a free port of master_addr
  // After the first failure or a forwarded signal, how long the other ranks have to exit before
  // they are killed.
  std::chrono::milliseconds grace{10'000};
  std::map<std::string, std::string> extra_environment;  // set in every rank, over the inherited
  // Each line a rank writes to stdout or stderr goes to the launcher's, prefixed "[rank R]: ";
  // false: the ranks share the launcher's stdout and stderr.
  bool prefix_output = true;
};

struct RankExit {
  std::uint32_t rank = 0;
  int exit_code = 0;  // when it exited
  int signal = 0;     // when a signal ended it (exit_code is then 128 + signal)
  bool failed() const { return exit_code != 0; }
};

struct LaunchResult {
  // 0 when every rank exited 0; else the first failed rank's exit code, or 128 + the signal the
  // launcher received and forwarded.
  int status = 0;
  std::optional<RankExit> first_failure;
  std::optional<int> forwarded_signal;
  std::vector<RankExit> exits;  // by rank
};

// Runs the ranks to their end. Call it from the main thread before other threads exist: it blocks
// SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread to wait for them (the ranks start with
// the signal mask and dispositions as they were). Progress and failures go to `log`. Throws
// std::runtime_error when a rank cannot be started (the ranks already started are stopped).
LaunchResult launch_local_ranks(const LaunchSpec& spec, std::ostream& log);

// A TCP port of `address` that was free a moment ago (bind to port 0, read it back).
std::uint16_t free_tcp_port(const std::string& address);

}  // namespace odbatch
