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

#include <fstream>

#include "peak_rss_run.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kWindow = 512;

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
  const long small = test::peak_rss_kib_of_run(write_run(dir.path(), 2), dir.path());
  const long large = test::peak_rss_kib_of_run(write_run(dir.path(), 20), dir.path());
  MESSAGE("peak RSS: " << small << " KiB over 2 windows, " << large << " KiB over 20 windows of "
                       << kWindow << " samples");
  CHECK(static_cast<double>(large) <= 1.25 * static_cast<double>(small));
}

}  // namespace
}  // namespace odbatch
