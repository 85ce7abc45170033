#include "peak_rss_run.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace odbatch::test {
namespace {

// The parent's environment without torchrun's variables (this is one rank alone), and with
// AddressSanitizer's quarantine off: it keeps freed memory resident up to its cap, so peak RSS
// would grow with all memory ever allocated rather than with what is live.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  std::string asan_options = "quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
  for (char** entry = environ; *entry; ++entry) {
    const std::string_view variable(*entry);
    const std::string_view name = variable.substr(0, variable.find('='));
    if (name == "RANK" || name == "WORLD_SIZE" || name == "LOCAL_RANK" || name == "MASTER_ADDR" ||
        name == "MASTER_PORT")
      continue;
    if (name == "ASAN_OPTIONS") {
      asan_options = std::string(variable.substr(name.size() + 1)) + ":" + asan_options;
      continue;
    }
    env.emplace_back(variable);
  }
  env.push_back("ASAN_OPTIONS=" + asan_options);
  return env;
}

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

long peak_rss_kib_of_run(const std::filesystem::path& config, const std::filesystem::path& dir,
                         std::chrono::seconds deadline) {
  const auto name = config.stem().string();
  const auto log = dir / (name + ".log");
  const auto result = dir / (name + ".rss");
  std::vector<std::string> args = {ODBATCH_PEAK_RSS,
                                   std::to_string(deadline.count()),
                                   log.string(),
                                   ODBATCH_CLI,
                                   "run",
                                   config.string(),
                                   "--no-progress"};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  auto env_strings = child_environment();
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, result.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t probe = 0;
  const int spawned = posix_spawn(&probe, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(spawned == 0,
                  "cannot run " << ODBATCH_PEAK_RSS << ": " << std::strerror(spawned));
  // The probe ends by the deadline, having killed the run if need be.
  int status = 0;
  REQUIRE(waitpid(probe, &status, 0) == probe);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  std::istringstream report(file_text(result));
  std::string exit_word, rss_word;
  int exit_status = -1;
  long peak_kib = 0;
  report >> exit_word >> exit_status >> rss_word >> peak_kib;
  INFO("odbatch run " << config.string() << " said:\n" << file_text(log));
  REQUIRE(exit_word == "exit");
  REQUIRE(exit_status == 0);
  REQUIRE(rss_word == "peak_rss_kib");
  REQUIRE(peak_kib > 0);
  return peak_kib;
}

}  // namespace odbatch::test
