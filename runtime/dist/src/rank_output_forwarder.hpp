#pragma once
// The launcher's view of its ranks' output: each rank writes stdout and stderr into pipes of its
// own, and a thread copies them to the launcher's stdout and stderr line by line, each line
// prefixed "[rank R]: " and written whole, so that ranks' lines never interleave mid-line and
// every line says whose it is (torchrun's log prefixes). Private to the local launcher.
#include <spawn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace odbatch {

class RankOutputForwarder {
 public:
  // Makes the pipes of `ranks` ranks. Throws std::runtime_error when it cannot.
  explicit RankOutputForwarder(std::uint32_t ranks);
  ~RankOutputForwarder();
  RankOutputForwarder(const RankOutputForwarder&) = delete;
  RankOutputForwarder& operator=(const RankOutputForwarder&) = delete;

  // Adds to `actions` what makes a spawned rank write into its pipes.
  void redirect(std::uint32_t rank, posix_spawn_file_actions_t& actions) const;
  // Once every rank is spawned: closes the pipes' write ends here and starts copying.
  void start();
  // Copies until every rank's pipes are closed, or until `deadline` (a rank's own children may
  // keep them open after it exited); then writes what is left of unfinished lines.
  void finish(std::chrono::steady_clock::time_point deadline);

 private:
  struct Stream {
    std::uint32_t rank = 0;
    int read_fd = -1;
    int write_fd = -1;
    int target_fd = 1;    // the launcher's stdout or stderr
    std::string pending;  // an unfinished line
  };

  void copy();
  void write_lines(Stream& stream, bool flush_partial);

  std::vector<Stream> streams_;
  std::thread thread_;
  std::atomic<std::int64_t> deadline_ns_{INT64_MAX};
};

}  // namespace odbatch
