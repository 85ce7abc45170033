#pragma once
// `odbatch launch --nproc N -- COMMAND...`: N local ranks of COMMAND with torchrun's environment.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace odbatch::cli {

struct LaunchOptions {
  std::uint32_t nproc = 1;
  std::string master_addr = "127.0.0.1";
  std::uint16_t master_port = 0;  // 0: a free port
  std::chrono::milliseconds grace{10'000};
  std::vector<std::string> command;
  bool prefix_output = true;  // "[rank R]: " before each line of a rank's output
};

// Returns the exit status: 0 when every rank succeeded, else the first failed rank's status (or
// 128 + a signal the launcher received and forwarded).
int run_launch_command(const LaunchOptions& options);

}  // namespace odbatch::cli
