// A LLaVA-style JSON array against JSONL holding the same records, measured side by side in one
// run: records/s of indexing, of reading (pread) and of reading + parsing each record, on the
// real dataset's ShareGPT file; then indexing a multi-GB file of each format, made by repeating
// those records into a scratch directory and deleted afterwards, in a child process whose peak
// RSS (wait4) shows whether memory stays bounded (the index's 16 bytes per record) rather than
// growing with the file.
//
//   odbatch_bench_json_array [--gb 2.5] [--dir /tmp] [--repeat 5] [--out report.json]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "bench_report.hpp"
#include "bench_timing.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader.hpp"

namespace odbatch::bench {
namespace {

struct Options {
  double gigabytes = 2.5;
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  std::uint64_t repeat = 5;
  std::string out_path;
};

std::vector<std::string> dataset_lines() {
  const auto path = std::filesystem::path(ODBATCH_SOURCE_DIR) / "data/sft/sharegpt.jsonl";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string() + " (tools/prepare-data.sh)");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// Writes `lines` `copies` times over as JSONL and as one JSON array (elements separated by ", ",
// on one line, as Python's json.dump writes a list).
void write_both(const std::vector<std::string>& lines, std::uint64_t copies,
                const std::filesystem::path& jsonl, const std::filesystem::path& json) {
  std::ofstream lines_out(jsonl, std::ios::binary);
  std::ofstream array_out(json, std::ios::binary);
  array_out << '[';
  bool first = true;
  for (std::uint64_t copy = 0; copy < copies; ++copy)
    for (const auto& line : lines) {
      lines_out << line << '\n';
      if (!first) array_out << ", ";
      array_out << line;
      first = false;
    }
  array_out << "]\n";
  if (!lines_out || !array_out) throw std::runtime_error("cannot write the benchmark's files");
}

// Removes the scratch directory however the benchmark ends.
struct ScratchDir {
  std::filesystem::path path;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

struct SmallRound {
  double index_s = 0;
  double read_s = 0;
  double parse_s = 0;
  std::uint64_t records = 0;
};

// Indexes `file`, then reads every record in a shuffled order (an epoch's access pattern), then
// reads and parses them.
SmallRound measure_small(const std::filesystem::path& file, std::uint64_t seed) {
  SmallRound round;
  auto start = Clock::now();
  const std::vector<std::string> paths = {file.string()};
  auto index = std::make_shared<const DatasetIndex>(DatasetIndex::build(paths));
  round.index_s = seconds_since(start);
  round.records = index->record_count();
  std::vector<SampleId> order(round.records);
  std::iota(order.begin(), order.end(), SampleId{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  const RecordReader reader(index);
  std::uint64_t bytes = 0;
  start = Clock::now();
  for (const auto id : order) bytes += std::get<Record>(reader.read(id)).text.size();
  round.read_s = seconds_since(start);
  std::uint64_t parsed = 0;
  start = Clock::now();
  for (const auto id : order) {
    const auto record = std::get<Record>(reader.read(id));
    parsed += std::holds_alternative<Conversation>(parse_conversation(record.text, record.where()));
  }
  round.parse_s = seconds_since(start);
  if (bytes == 0 || parsed != round.records)
    throw std::runtime_error(file.string() + ": not every record parsed");
  return round;
}

struct BigIndexing {
  double seconds = 0;
  std::uint64_t records = 0;
  long peak_rss_kib = 0;
  long start_rss_kib = 0;  // the child's before it indexes (inherited from the parent)
};

long current_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  return -1;
}

// Builds the index of `file` in a child process and returns its time and the child's peak RSS.
BigIndexing index_in_child(const std::filesystem::path& file) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    close(pipe_fds[0]);
    BigIndexing result;
    result.start_rss_kib = current_rss_kib();
    const auto start = Clock::now();
    try {
      const std::vector<std::string> paths = {file.string()};
      result.records = DatasetIndex::build(paths).record_count();
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      _exit(1);
    }
    result.seconds = seconds_since(start);
    const bool written = write(pipe_fds[1], &result, sizeof result) == sizeof result;
    _exit(written ? 0 : 1);
  }
  close(pipe_fds[1]);
  BigIndexing result;
  const bool got = read(pipe_fds[0], &result, sizeof result) == sizeof result;
  close(pipe_fds[0]);
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) != child || !got || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    throw std::runtime_error("indexing " + file.string() + " failed in the child");
  result.peak_rss_kib = usage.ru_maxrss;
  return result;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--gb") {
      options.gigabytes = std::stod(value);
    } else if (flag == "--dir") {
      options.dir = value;
    } else if (flag == "--repeat") {
      options.repeat = parse_count(flag, value);
    } else if (flag == "--out") {
      options.out_path = value;
    } else {
      throw std::invalid_argument("unknown flag " + flag);
    }
  }
  return options;
}

Report small_report(const std::vector<SmallRound>& lines, const std::vector<SmallRound>& array) {
  auto rate = [](const std::vector<SmallRound>& rounds, double SmallRound::*field) {
    std::vector<double> seconds;
    for (const auto& round : rounds) seconds.push_back(round.*field);
    return static_cast<double>(rounds.front().records) / median(seconds);
  };
  Report report;
  report["records"] = lines.front().records;
  for (const auto& [name, field] :
       {std::pair{"index", &SmallRound::index_s}, std::pair{"read", &SmallRound::read_s},
        std::pair{"read_parse", &SmallRound::parse_s}}) {
    const double jsonl = rate(lines, field);
    const double json = rate(array, field);
    report[name] = {{"jsonl_records_per_s", rounded(jsonl, 0)},
                    {"json_array_records_per_s", rounded(json, 0)},
                    {"json_array_vs_jsonl", rounded(json / jsonl, 3)}};
  }
  return report;
}

Report big_report(const BigIndexing& indexing, std::uint64_t file_bytes) {
  const double mib = 1024.0 * 1024.0;
  return {{"file_mib", rounded(static_cast<double>(file_bytes) / mib, 1)},
          {"records", indexing.records},
          {"seconds", rounded(indexing.seconds, 3)},
          {"records_per_s", rounded(static_cast<double>(indexing.records) / indexing.seconds, 0)},
          {"mib_per_s", rounded(static_cast<double>(file_bytes) / mib / indexing.seconds, 1)},
          {"index_mib", rounded(16.0 * static_cast<double>(indexing.records) / mib, 1)},
          {"start_rss_mib", rounded(static_cast<double>(indexing.start_rss_kib) / 1024.0, 1)},
          {"peak_rss_mib", rounded(static_cast<double>(indexing.peak_rss_kib) / 1024.0, 1)}};
}

int run(const Options& options) {
  Report report;
  report["benchmark"] = "json_array_source";
  ScratchDir scratch{options.dir / ("odbatch-json-array-bench-" + std::to_string(getpid()))};
  std::filesystem::create_directories(scratch.path);

  std::uint64_t line_bytes = 0;
  {
    const auto lines = dataset_lines();
    for (const auto& line : lines) line_bytes += line.size() + 1;
    write_both(lines, 1, scratch.path / "real.jsonl", scratch.path / "real.json");
  }
  // Interleaved rounds, so drift on a shared machine hits both formats alike.
  std::vector<SmallRound> lines_rounds;
  std::vector<SmallRound> array_rounds;
  for (std::uint64_t round = 0; round <= options.repeat; ++round) {
    auto lines = measure_small(scratch.path / "real.jsonl", round);
    auto array = measure_small(scratch.path / "real.json", round);
    if (round == 0) continue;  // warms the page cache and the allocator
    lines_rounds.push_back(lines);
    array_rounds.push_back(array);
  }
  report["real_dataset"] = small_report(lines_rounds, array_rounds);

  const auto copies = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(options.gigabytes * 1e9 / static_cast<double>(line_bytes)));
  const auto big_jsonl = scratch.path / "big.jsonl";
  const auto big_json = scratch.path / "big.json";
  {
    const auto lines = dataset_lines();
    write_both(lines, copies, big_jsonl, big_json);
  }
  const auto dataset_indexing = index_in_child(big_jsonl);
  const auto json_indexing = index_in_child(big_json);
  if (dataset_indexing.records != json_indexing.records)
    throw std::runtime_error("the big files' record counts differ");
  report["multi_gb"] = {
      {"copies_of_the_dataset", copies},
      {"jsonl", big_report(dataset_indexing, std::filesystem::file_size(big_jsonl))},
      {"json_array", big_report(json_indexing, std::filesystem::file_size(big_json))},
      {"json_array_vs_jsonl_records_per_s",
       rounded(dataset_indexing.seconds / json_indexing.seconds, 3)},
      {"json_array_peak_rss_vs_file",
       rounded(static_cast<double>(json_indexing.peak_rss_kib) * 1024.0 /
                   static_cast<double>(std::filesystem::file_size(big_json)),
               4)}};
  report["note"] =
      "files in the page cache (written just before); medians of --repeat interleaved rounds "
      "on the real dataset; the multi-GB indexing runs once per format in a child process";
  emit_report(report, options.out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  try {
    return odbatch::bench::run(odbatch::bench::parse_options(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "odbatch_bench_json_array: " << e.what() << '\n';
    return 1;
  }
}
