// Bounded memory: the pipeline holds a window of samples and bounded queues, never the dataset.
// `odbatch run` runs as a child process over a dataset of 2 windows and over one of 20 windows
// (the same real records, repeated), and the peak resident set sizes that wait4() reports must
// agree within 25%: allocator arenas and fragmentation vary by up to about 10% between runs on a
// loaded machine, while keeping just the text of the 18 more windows' records (5.6 MB) would add
// over a third of the 2-window run's peak (about 15 MB). A child process (started through
// odbatch_peak_rss) keeps the test's own memory out of the measurement.
//
// Deferred samples stay in the window, which therefore grows to (max_defer_rounds + 1) windows
// once rounds have deferred samples that often; a dataset of 2 windows ends before that. With
// max_defer_rounds = 0 both runs reach the bound, so any difference is memory that grows with
// the dataset (besides the index's and shard's few bytes per record).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "pipeline_test_support.hpp"

extern char** environ;

namespace odbatch {
namespace {

constexpr std::size_t kWindow = 512;

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

// Runs `odbatch run CONFIG` under odbatch_peak_rss (which waits for it with wait4(); see there
// why the test does not spawn it itself) and returns its peak resident set size in KiB.
long peak_rss_kib_of_run(const std::filesystem::path& config, const std::filesystem::path& dir) {
  const auto name = config.stem().string();
  const auto log = dir / (name + ".log");
  const auto result = dir / (name + ".rss");
  std::vector<std::string> args = {ODBATCH_PEAK_RSS, log.string(),   ODBATCH_CLI, "run",
                                   config.string(),  "--no-progress"};
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

// `windows` windows of real text records: the same 2 windows' worth, repeated.
std::filesystem::path write_run(const std::filesystem::path& dir, std::size_t windows) {
  const auto records = test::text_records(2 * kWindow);
  const auto name = std::to_string(windows) + "-windows";
  const auto data = dir / (name + ".jsonl");
  {
    std::ofstream out(data, std::ios::binary);
    for (std::size_t i = 0; i < windows * kWindow; ++i)
      out << records[i % records.size()].line << '\n';
    REQUIRE(out.good());
  }
  const auto data_dir = test::require_dataset();
  const auto config = dir / (name + ".toml");
  std::ofstream out(config);
  out << "[source]\nfiles = [\"" << data.string() << "\"]\n"
      << "image_root = \"" << (data_dir / "images").string() << "\"\n"
      << "[tokenizer]\nmodel = \"" << (data_dir / "tokenizer/odbatch-unigram-8k.model").string()
      << "\"\nworkers = 2\n"
      << "[batching]\ntoken_budget = 4096\nmax_seq_len = 4096\nwindow = " << kWindow
      << "\nmax_defer_rounds = 0\nseed = 1\n"
      << "[pipeline]\nreader_capacity = 256\nprefetch = 4\nscheduler_threads = 2\n";
  REQUIRE(out.good());
  return config;
}

TEST_CASE("peak memory does not grow with the dataset: 20 windows cost what 2 windows cost") {
  test::require_dataset();
  const test::TempDir dir;
  const long small = peak_rss_kib_of_run(write_run(dir.path(), 2), dir.path());
  const long large = peak_rss_kib_of_run(write_run(dir.path(), 20), dir.path());
  MESSAGE("peak RSS: " << small << " KiB over 2 windows, " << large << " KiB over 20 windows of "
                       << kWindow << " samples");
  CHECK(static_cast<double>(large) <= 1.25 * static_cast<double>(small));
}

}  // namespace
}  // namespace odbatch
