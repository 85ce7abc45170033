#pragma once
// The ranks of one stress run as child processes: each with torchrun's environment (and any extra
// variables), its output in files, its exit and the wall-clock time of that exit recorded. Unlike
// `odbatch launch`, a failed rank does not stop the others: how they fail on their own is what a
// stress run measures. Each rank leads a process group, so what it started goes with it.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace odbatch::cli {

struct RankProcess {
  std::uint32_t rank = 0;
  pid_t pid = 0;
  std::filesystem::path stdout_file;
  std::filesystem::path stderr_file;
  bool exited = false;
  int exit_code = 0;  // 128 + the signal when one ended it
  long long exit_unix_ms = 0;
};

struct RankProcessSpec {
  std::vector<std::string> command;  // argv of every rank; argv[0] is looked up in PATH
  // The argv of a rank that runs another command (a config of its own), by rank.
  std::map<std::uint32_t, std::vector<std::string>> rank_commands;
  std::uint32_t world_size = 1;
  std::string master_addr = "127.0.0.1";
  std::uint16_t master_port = 0;
  std::uint16_t store_port = 0;  // ODBATCH_STORE_PORT: the store rank 0 hosts
  std::map<std::string, std::string> extra_environment;
  std::filesystem::path output_dir;  // rank<R>.out and rank<R>.err
};

// Starts every rank; throws std::runtime_error (after killing those started) when one cannot be.
std::vector<RankProcess> start_ranks(const RankProcessSpec& spec);

// Reaps ranks as they exit until all have or `deadline` passes; whether all have.
bool wait_for_ranks(std::vector<RankProcess>& ranks,
                    std::chrono::steady_clock::time_point deadline);

// Whether a process of the rank's group (one the rank started) still runs after the rank exited.
bool group_left_running(const RankProcess& rank);

// SIGKILLs every rank's process group and reaps the ranks still running.
void kill_ranks(std::vector<RankProcess>& ranks);

long long unix_ms_now();

}  // namespace odbatch::cli
