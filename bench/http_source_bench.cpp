// A file read over HTTP (HttpByteSource) against the same file read locally (FileByteSource), in
// one run: MB/s of a sequential pass, and of random 1 MiB read_at calls from several threads,
// uncached, through a cold and a warm memory cache, and through a cold and a warm disk cache (a
// new source on the directory the cold one filled). --url must serve --file's bytes with byte
// ranges, e.g. nginx started by tests/runtime/source/http_fixture.py over a copy of it.
//
//   odbatch_bench_http_source --url http://127.0.0.1:PORT/files/big.bin --file /path/big.bin
//       [--reads 512] [--threads 4] [--read-bytes 1048576] [--cache-dir /tmp/x] [--out r.json]
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/source/file_byte_source.hpp"
#include "odbatch/source/http_byte_source.hpp"

namespace odbatch::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string url;
  std::string file;
  std::uint64_t reads = 512;
  std::uint64_t threads = 4;
  std::uint64_t read_bytes = std::uint64_t{1} << 20;
  std::filesystem::path cache_dir;
  std::string out;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " expects a value");
    const std::string value = argv[++i];
    if (flag == "--url")
      options.url = value;
    else if (flag == "--file")
      options.file = value;
    else if (flag == "--reads")
      options.reads = parse_count(flag, value);
    else if (flag == "--threads")
      options.threads = parse_count(flag, value);
    else if (flag == "--read-bytes")
      options.read_bytes = parse_count(flag, value);
    else if (flag == "--cache-dir")
      options.cache_dir = value;
    else if (flag == "--out")
      options.out = value;
    else
      throw std::invalid_argument("unknown flag " + flag);
  }
  if (options.url.empty() || options.file.empty())
    throw std::invalid_argument("--url and --file are required");
  if (options.cache_dir.empty())
    options.cache_dir = std::filesystem::temp_directory_path() / "odbatch_http_bench_cache";
  return options;
}

double megabytes_per_second(std::uint64_t bytes, Clock::duration elapsed) {
  return rounded(static_cast<double>(bytes) / 1e6 / std::chrono::duration<double>(elapsed).count(),
                 1);
}

Report sequential_pass(const ByteSource& source) {
  std::uint64_t bytes = 0;
  const auto start = Clock::now();
  source.read_sequentially(0, [&](std::string_view chunk) {
    bytes += chunk.size();
    return true;
  });
  const auto elapsed = Clock::now() - start;
  if (bytes != source.size()) throw std::runtime_error(source.name() + ": short sequential pass");
  return Report{{"mb_per_s", megabytes_per_second(bytes, elapsed)}};
}

// The same offsets for every source: `reads` reads of `read_bytes`, split between the threads.
std::vector<std::uint64_t> random_offsets(const Options& options, std::uint64_t size) {
  std::mt19937_64 generator(1);
  std::vector<std::uint64_t> offsets(options.reads);
  const std::uint64_t span = size > options.read_bytes ? size - options.read_bytes : 1;
  for (auto& offset : offsets) offset = generator() % span;
  return offsets;
}

Report random_reads(const ByteSource& source, const Options& options,
                    const std::vector<std::uint64_t>& offsets) {
  std::vector<std::thread> threads;
  std::vector<std::uint64_t> bytes(options.threads, 0);
  const auto start = Clock::now();
  for (std::uint64_t t = 0; t < options.threads; ++t) {
    threads.emplace_back([&, t] {
      std::string buffer(options.read_bytes, '\0');
      for (std::size_t i = t; i < offsets.size(); i += options.threads) {
        bytes[t] += source.read_at(buffer.data(), buffer.size(), offsets[i]);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto elapsed = Clock::now() - start;
  std::uint64_t total = 0;
  for (const auto b : bytes) total += b;
  Report report{{"mb_per_s", megabytes_per_second(total, elapsed)}};
  if (const auto* remote = dynamic_cast<const HttpByteSource*>(&source)) {
    const HttpTransferCounters c = remote->counters();
    report["requests"] = c.requests;
    report["bytes_fetched"] = c.bytes_fetched;
    report["cache_hits"] = c.cache_hits;
    report["cache_misses"] = c.cache_misses;
  }
  return report;
}

int run(const Options& options) {
  const FileByteSource local(options.file);
  RemoteSourceOptions uncached;
  uncached.cache_bytes = 0;
  RemoteSourceOptions in_memory;
  in_memory.cache_bytes = local.size() + in_memory.block_bytes;
  RemoteSourceOptions on_disk = in_memory;
  on_disk.cache_dir = options.cache_dir;
  std::filesystem::remove_all(options.cache_dir);

  const auto offsets = random_offsets(options, local.size());
  Report report;
  report["file_bytes"] = local.size();
  report["reads"] = options.reads;
  report["read_bytes"] = options.read_bytes;
  report["threads"] = options.threads;
  report["block_bytes"] = in_memory.block_bytes;
  report["sequential"]["local"] = sequential_pass(local);
  report["sequential"]["http"] = sequential_pass(HttpByteSource(options.url, uncached));
  Report& random = report["random_read_at"];
  random["local"] = random_reads(local, options, offsets);
  random["http_uncached"] = random_reads(HttpByteSource(options.url, uncached), options, offsets);
  {
    const HttpByteSource memory(options.url, in_memory);
    random["http_memory_cold"] = random_reads(memory, options, offsets);
    random["http_memory_warm"] = random_reads(memory, options, offsets);
  }
  random["http_disk_cold"] = random_reads(HttpByteSource(options.url, on_disk), options, offsets);
  random["http_disk_warm"] = random_reads(HttpByteSource(options.url, on_disk), options, offsets);
  std::filesystem::remove_all(options.cache_dir);
  emit_report(report, options.out);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  try {
    return odbatch::bench::run(odbatch::bench::parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "odbatch_bench_http_source: " << e.what() << "\n";
    return 2;
  }
}
