#include "rank_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace odbatch::cli {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(5);

// torchrun's variables, and those that would change a run behind the spec's back (a fault, a
// standalone store).
bool is_replaced_variable(std::string_view name) {
  return name == "RANK" || name == "WORLD_SIZE" || name == "LOCAL_RANK" ||
         name == "LOCAL_WORLD_SIZE" || name == "MASTER_ADDR" || name == "MASTER_PORT" ||
         name == "ODBATCH_FAULT" || name == "ODBATCH_STORE_ADDR" || name == "ODBATCH_STORE_PORT";
}

std::vector<std::string> rank_environment(const RankProcessSpec& spec, std::uint32_t rank) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    const std::string_view variable(*entry);
    const std::string_view name = variable.substr(0, variable.find('='));
    if (is_replaced_variable(name) || spec.extra_environment.count(std::string(name))) continue;
    env.emplace_back(variable);
  }
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("LOCAL_RANK=" + std::to_string(rank));
  env.push_back("WORLD_SIZE=" + std::to_string(spec.world_size));
  env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(spec.world_size));
  env.push_back("MASTER_ADDR=" + spec.master_addr);
  env.push_back("MASTER_PORT=" + std::to_string(spec.master_port));
  if (spec.store_port != 0) env.push_back("ODBATCH_STORE_PORT=" + std::to_string(spec.store_port));
  for (const auto& [name, value] : spec.extra_environment) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void record_exit(RankProcess& rank, int status) {
  rank.exited = true;
  rank.exit_unix_ms = unix_ms_now();
  rank.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

long long unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<RankProcess> start_ranks(const RankProcessSpec& spec) {
  std::vector<RankProcess> ranks;
  for (std::uint32_t r = 0; r < spec.world_size; ++r) {
    RankProcess rank;
    rank.rank = r;
    rank.stdout_file = spec.output_dir / ("rank" + std::to_string(r) + ".out");
    rank.stderr_file = spec.output_dir / ("rank" + std::to_string(r) + ".err");
    const auto own = spec.rank_commands.find(r);
    std::vector<std::string> args = own != spec.rank_commands.end() ? own->second : spec.command;
    auto env = rank_environment(spec, r);
    auto argv = pointers(args);
    auto envp = pointers(env);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, rank.stdout_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, rank.stderr_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    const int error =
        posix_spawnp(&rank.pid, argv[0], &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (error != 0) {
      kill_ranks(ranks);
      throw std::runtime_error("cannot start rank " + std::to_string(r) + " (" + args[0] +
                               "): " + std::strerror(error));
    }
    ranks.push_back(rank);
  }
  return ranks;
}

bool wait_for_ranks(std::vector<RankProcess>& ranks,
                    std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    bool all = true;
    for (auto& rank : ranks) {
      if (rank.exited) continue;
      int status = 0;
      if (::waitpid(rank.pid, &status, WNOHANG) == rank.pid)
        record_exit(rank, status);
      else
        all = false;
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
}

bool group_left_running(const RankProcess& rank) {
  return ::kill(-rank.pid, 0) == 0;
}

void kill_ranks(std::vector<RankProcess>& ranks) {
  // Exited ranks too: what they started may still run in their group.
  for (auto& rank : ranks) ::kill(-rank.pid, SIGKILL);
  for (auto& rank : ranks) {
    if (rank.exited) continue;
    int status = 0;
    if (::waitpid(rank.pid, &status, 0) == rank.pid) record_exit(rank, status);
  }
}

}  // namespace odbatch::cli
