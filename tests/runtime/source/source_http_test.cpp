// Files over HTTP from a real nginx on loopback (http_fixture.py): ranged reads through the block
// cache equal the local file's, from many threads, a sequential pass, cache hits, eviction within
// the bound, a warm disk cache, a changed file.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "http_test_fixture.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/file_byte_source.hpp"
#include "odbatch/source/http_byte_source.hpp"
#include "odbatch/source/open_byte_source.hpp"
#include "source_test_files.hpp"
#include "test_skip.hpp"

namespace odbatch {
namespace {

using test::random_bytes;

constexpr std::uint64_t kBlock = 64 * 1024;
// Not a multiple of the block size: the last block is short.
constexpr std::size_t kFileSize = 10 * kBlock + 12345;
constexpr std::uint64_t kBlocks = (kFileSize + kBlock - 1) / kBlock;

RemoteSourceOptions small_blocks(std::uint64_t cache_bytes) {
  RemoteSourceOptions options;
  options.block_bytes = kBlock;
  options.cache_bytes = cache_bytes;
  options.request_timeout = std::chrono::milliseconds(5000);
  options.attempts = 2;
  options.backoff = std::chrono::milliseconds(10);
  return options;
}

std::string read_range(const ByteSource& source, std::uint64_t offset, std::size_t length) {
  std::string bytes(length, '\0');
  bytes.resize(source.read_at(bytes.data(), length, offset));
  return bytes;
}

std::string read_all_sequentially(const ByteSource& source, std::uint64_t offset) {
  std::string bytes;
  source.read_sequentially(offset, [&](std::string_view chunk) {
    bytes.append(chunk);
    return true;
  });
  return bytes;
}

// Reads every block once, in order.
void read_every_block(const ByteSource& source) {
  for (std::uint64_t offset = 0; offset < source.size(); offset += kBlock) {
    read_range(source, offset, kBlock);
  }
}

// Reads every block of `url` once through a source of its own, which leaves them in
// options.cache_dir when it is gone.
void fill_disk_cache(const std::string& url, const RemoteSourceOptions& options) {
  const HttpByteSource cold(url, options);
  read_every_block(cold);
  CHECK(cold.counters().cache_misses == kBlocks);
}

std::uint64_t bytes_of_files_in(const std::filesystem::path& directory) {
  std::uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    bytes += entry.file_size();
  }
  return bytes;
}

TEST_CASE("http: ranged reads at random offsets equal the local file's, cached or not") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string name = fixture.serve("random.bin", random_bytes(kFileSize, 1));
  const FileByteSource local(fixture.local(name).string());
  for (const std::uint64_t cache_bytes : {std::uint64_t{0}, 3 * kBlock, 100 * kBlock}) {
    CAPTURE(cache_bytes);
    const HttpByteSource remote(fixture.nginx_url("files", name), small_blocks(cache_bytes));
    CHECK(remote.size() == kFileSize);
    CHECK(remote.version().starts_with("http:" + std::to_string(kFileSize) + ":etag:\""));
    std::mt19937_64 generator(cache_bytes);
    for (int i = 0; i < 150; ++i) {
      const std::uint64_t offset = generator() % (kFileSize + 100);
      const std::size_t length = generator() % (3 * kBlock);
      CAPTURE(offset);
      CAPTURE(length);
      REQUIRE(read_range(remote, offset, length) == read_range(local, offset, length));
    }
    // The short last block, a read over the end, and one past it.
    const std::uint64_t last_block = (kBlocks - 1) * kBlock;
    CHECK(read_range(remote, last_block, kBlock) == read_range(local, last_block, kBlock));
    CHECK(read_range(remote, kFileSize - 10, 100).size() == 10);
    CHECK(read_range(remote, kFileSize, 100).empty());
    CHECK(read_range(remote, 0, kFileSize) == read_range(local, 0, kFileSize));
  }
}

TEST_CASE("http: many threads read one source at once, each block fetched once") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string name = fixture.serve("threads.bin", random_bytes(kFileSize, 2));
  const FileByteSource local(fixture.local(name).string());
  const HttpByteSource remote(fixture.nginx_url("files", name), small_blocks(100 * kBlock));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  std::vector<std::set<std::uint64_t>> blocks(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 generator(100 + t);
      for (int i = 0; i < 60; ++i) {
        const std::uint64_t offset = generator() % kFileSize;
        const std::size_t length = 1 + generator() % (kBlock / 2);
        if (read_range(remote, offset, length) != read_range(local, offset, length)) {
          ++mismatches[t];
        }
        const std::uint64_t end = std::min<std::uint64_t>(offset + length, kFileSize);
        for (std::uint64_t b = offset / kBlock; b * kBlock < end; ++b) blocks[t].insert(b);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<std::uint64_t> touched;
  for (int t = 0; t < 8; ++t) {
    CHECK(mismatches[t] == 0);
    touched.insert(blocks[t].begin(), blocks[t].end());
  }
  const HttpTransferCounters counters = remote.counters();
  // Concurrent readers of a missing block wait for one fetch.
  CHECK(counters.cache_misses == touched.size());
  CHECK(counters.requests == 1 + touched.size());
  CHECK(counters.retries == 0);
}

TEST_CASE("http: a sequential pass is one GET equal to the file and stops when asked") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(kFileSize, 3);
  const std::string name = fixture.serve("sequential.bin", bytes);
  const HttpByteSource remote(fixture.nginx_url("files", name), small_blocks(0));
  CHECK(read_all_sequentially(remote, 0) == bytes);
  CHECK(read_all_sequentially(remote, 12345) == bytes.substr(12345));
  CHECK(read_all_sequentially(remote, kFileSize).empty());
  CHECK(remote.counters().requests == 3);  // opening and two passes; the empty one sends none

  std::size_t chunks = 0;
  std::string first_chunk;
  remote.read_sequentially(0, [&](std::string_view chunk) {
    ++chunks;
    first_chunk = chunk;
    return false;
  });
  CHECK(chunks == 1);
  CHECK(bytes.starts_with(first_chunk));
  CHECK(remote.counters().requests == 4);
  CHECK(remote.counters().retries == 0);
}

TEST_CASE("http: the blocks a sequential pass went through are cached") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(kFileSize, 11);
  const std::string name = fixture.serve("pass.bin", bytes);
  const HttpByteSource remote(fixture.nginx_url("files", name), small_blocks(100 * kBlock));
  // From the middle of block 1: blocks 2 to the last (short) one are whole.
  CHECK(read_all_sequentially(remote, kBlock + 100) == bytes.substr(kBlock + 100));
  CHECK(remote.counters().cached_bytes == kFileSize - 2 * kBlock);
  CHECK(read_range(remote, 2 * kBlock, kFileSize) == bytes.substr(2 * kBlock));
  HttpTransferCounters counters = remote.counters();
  CHECK(counters.requests == 2);
  CHECK(counters.cache_hits == kBlocks - 2);
  CHECK(counters.cache_misses == 0);
  // Blocks 0 and 1 were not whole in the pass.
  CHECK(read_range(remote, 0, 2 * kBlock) == bytes.substr(0, 2 * kBlock));
  CHECK(remote.counters().cache_misses == 2);
}

TEST_CASE("http: a second read is served from the cache") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string name = fixture.serve("hits.bin", random_bytes(kFileSize, 4));
  const HttpByteSource remote(fixture.nginx_url("files", name), small_blocks(100 * kBlock));
  read_every_block(remote);
  HttpTransferCounters counters = remote.counters();
  CHECK(counters.cache_misses == kBlocks);
  CHECK(counters.cache_hits == 0);
  CHECK(counters.requests == 1 + kBlocks);
  CHECK(counters.bytes_fetched == 1 + kFileSize);
  CHECK(counters.cached_bytes == kFileSize);
  read_every_block(remote);
  counters = remote.counters();
  CHECK(counters.cache_hits == kBlocks);
  CHECK(counters.requests == 1 + kBlocks);
}

TEST_CASE("http: eviction keeps the cache within cache_bytes, in memory and on disk") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(kFileSize, 5);
  const std::string name = fixture.serve("evict.bin", bytes);
  const test::ScratchDirectory scratch;
  for (const bool on_disk : {false, true}) {
    CAPTURE(on_disk);
    RemoteSourceOptions options = small_blocks(3 * kBlock);
    if (on_disk) options.cache_dir = scratch.path() / "cache";
    const HttpByteSource remote(fixture.nginx_url("files", name), options);
    read_every_block(remote);
    CHECK(remote.counters().cached_bytes <= 3 * kBlock);
    if (on_disk) CHECK(bytes_of_files_in(options.cache_dir) <= 3 * kBlock);
    // The most recent blocks stayed, the first one went.
    CHECK(read_range(remote, kFileSize - 1, 1) == bytes.substr(kFileSize - 1));
    CHECK(remote.counters().cache_hits == 1);
    CHECK(read_range(remote, 0, 1) == bytes.substr(0, 1));
    CHECK(remote.counters().cache_misses == kBlocks + 1);
  }
}

TEST_CASE("http: a warm disk cache serves a later source without requests") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(kFileSize, 6);
  const std::string name = fixture.serve("warm.bin", bytes);
  const test::ScratchDirectory scratch;
  RemoteSourceOptions options = small_blocks(100 * kBlock);
  options.cache_dir = scratch.path() / "cache";
  fill_disk_cache(fixture.nginx_url("files", name), options);
  // A new cache (the first one is gone with its only source) finds the blocks on disk.
  const HttpByteSource warm(fixture.nginx_url("files", name), options);
  CHECK(read_range(warm, 0, kFileSize) == bytes);
  const HttpTransferCounters counters = warm.counters();
  CHECK(counters.requests == 1);  // opening only
  CHECK(counters.cache_hits == kBlocks);
  CHECK(counters.cache_misses == 0);

  // Blocks of another size are other blocks.
  RemoteSourceOptions halves = options;
  halves.block_bytes = kBlock / 2;
  const HttpByteSource other_blocks(fixture.nginx_url("files", name), halves);
  CHECK(read_range(other_blocks, 0, kFileSize) == bytes);
  CHECK(other_blocks.counters().cache_misses == 2 * kBlocks - 1);
  CHECK(other_blocks.counters().cache_hits == 0);
}

TEST_CASE("http: a file changed on the server is never served from the old version's blocks") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string old_bytes = random_bytes(kFileSize, 7);
  const std::string name = fixture.serve("changed.bin", old_bytes);
  const test::ScratchDirectory scratch;
  RemoteSourceOptions options = small_blocks(100 * kBlock);
  options.cache_dir = scratch.path() / "cache";
  const std::string url = fixture.nginx_url("files", name);
  std::string old_version;
  {
    const HttpByteSource before(url, options);
    old_version = before.version();
    read_every_block(before);
  }
  const HttpByteSource uncached_before(url, small_blocks(0));

  // Same size, new bytes, another modification time: nginx's ETag changes.
  const std::string new_bytes = random_bytes(kFileSize, 8);
  fixture.serve("changed.bin", new_bytes);
  std::filesystem::last_write_time(
      fixture.local(name),
      std::filesystem::last_write_time(fixture.local(name)) + std::chrono::seconds(5));
  const HttpByteSource after(url, options);
  CHECK(after.version() != old_version);
  CHECK(read_range(after, 0, kFileSize) == new_bytes);
  CHECK(after.counters().cache_misses == kBlocks);

  // A source opened before the change refuses the new bytes.
  try {
    read_range(uncached_before, 0, 10);
    FAIL("read the changed file");
  } catch (const DatasetError& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.find(url + ": bytes 0-9: the file changed on the server") == 0);
    CHECK(message.find("after 1 attempt") != std::string::npos);
  }
}

TEST_CASE("http: open_byte_source opens URLs, and an empty file has no bytes") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string name = fixture.serve("opened.bin", random_bytes(1000, 9));
  const std::string url = fixture.nginx_url("files", name);
  const auto source = open_byte_source(url, small_blocks(kBlock));
  CHECK(dynamic_cast<const HttpByteSource*>(source.get()) != nullptr);
  CHECK(source->name() == url);
  CHECK(source->size() == 1000);

  const std::string empty = fixture.serve("empty.bin", "");
  const HttpByteSource nothing(fixture.nginx_url("files", empty), small_blocks(kBlock));
  CHECK(nothing.size() == 0);
  CHECK(read_range(nothing, 0, 10).empty());
  CHECK(read_all_sequentially(nothing, 0).empty());
}

TEST_CASE("https: a server verified by the CA file given is read, an unknown one refused") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(kFileSize, 12);
  const std::string name = fixture.serve("tls.bin", bytes);
  const std::string url = fixture.https_url(name);
  if (url.empty()) {
    ODBATCH_SKIP_TEST("openssl", "no HTTPS server (http_fixture.py needs openssl)");
  }
  RemoteSourceOptions options = small_blocks(100 * kBlock);
  options.ca_file = fixture.certificate();
  const HttpByteSource remote(url, options);
  CHECK(read_range(remote, 0, kFileSize) == bytes);
  CHECK(read_all_sequentially(remote, 7) == bytes.substr(7));

  // The system's CAs do not know the test's certificate: permanent, so one attempt.
  const std::string refused = [&] {
    try {
      HttpByteSource(url, small_blocks(kBlock));
    } catch (const DatasetError& e) {
      return std::string(e.what());
    }
    return std::string("opened");
  }();
  CAPTURE(refused);
  CHECK(refused.starts_with(url + ": opening (bytes 0-0): "));
  CHECK(refused.find("(curl 60) after 1 attempt") != std::string::npos);
}

TEST_CASE("http: a server that ignores byte ranges is refused, naming the URL") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string name = fixture.serve("ranges.bin", random_bytes(1000, 10));
  const std::string url = fixture.nginx_url("no-ranges", name);
  CHECK_THROWS_WITH_AS(HttpByteSource(url, small_blocks(kBlock)),
                       (url + ": opening (bytes 0-0): the server does not honour byte ranges "
                              "(HTTP 200 instead of 206) after 1 attempt")
                           .c_str(),
                       DatasetError);
}

TEST_CASE("http: a cached block edited on disk fails its checksum and is fetched again") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(kFileSize, 7);
  const std::string name = fixture.serve("edited.bin", bytes);
  const test::ScratchDirectory scratch;
  RemoteSourceOptions options = small_blocks(100 * kBlock);
  options.cache_dir = scratch.path() / "cache";
  fill_disk_cache(fixture.nginx_url("files", name), options);
  // One block file changed in place, its size kept.
  std::vector<std::filesystem::path> blocks;
  for (const auto& entry : std::filesystem::directory_iterator(options.cache_dir))
    blocks.push_back(entry.path());
  REQUIRE(blocks.size() == kBlocks);
  std::sort(blocks.begin(), blocks.end());
  std::string block;
  {
    std::ifstream in(blocks[3], std::ios::binary);
    block.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  block[100] = static_cast<char>(block[100] ^ 0x5a);
  std::ofstream(blocks[3], std::ios::binary | std::ios::trunc) << block;
  const HttpByteSource warm(fixture.nginx_url("files", name), options);
  CHECK(read_range(warm, 0, kFileSize) == bytes);
  CHECK(warm.counters().cache_misses == 1);
  CHECK(warm.counters().cache_hits == kBlocks - 1);
}

TEST_CASE("http: one file under two URLs (host name and address) is listed once") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string name = fixture.serve("twice.jsonl", "{\"a\": 1}\n");
  const std::string by_address = fixture.nginx_url("files", name);
  std::string by_name = by_address;
  by_name.replace(by_name.find("127.0.0.1"), 9, "localhost");
  const std::vector<std::string> files = {by_address, by_name};
  std::string error = "no error";
  try {
    DatasetIndex::build(files);
  } catch (const DatasetError& e) {
    error = e.what();
  }
  CHECK(error.starts_with("dataset file '" + by_name + "' is the file '" + by_address + "' again"));
}

}  // namespace
}  // namespace odbatch
