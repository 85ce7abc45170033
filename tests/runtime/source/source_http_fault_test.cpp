// Files over HTTP when the server misbehaves (nginx and flaky_http_server.py on loopback, from
// http_fixture.py): permanent failures fail at once, transient ones are retried a bounded number
// of times, stalls are detected within the timeout, and a flaky server's bytes arrive whole. Every
// error names the URL, the byte range, the failure and the attempts made.
#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "http_test_fixture.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/http_byte_source.hpp"

namespace odbatch {
namespace {

using test::random_bytes;
using test::seconds_since;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kBlock = 256 * 1024;

RemoteSourceOptions quick_failures(std::uint32_t attempts) {
  RemoteSourceOptions options;
  options.block_bytes = kBlock;
  options.cache_bytes = 8 * kBlock;
  options.request_timeout = std::chrono::milliseconds(300);
  options.attempts = attempts;
  options.backoff = std::chrono::milliseconds(10);
  return options;
}

// The message of the DatasetError `action` throws (the test fails when it throws none).
template <typename Action>
std::string failure_of(Action&& action) {
  try {
    action();
  } catch (const DatasetError& e) {
    return e.what();
  }
  FAIL("no DatasetError");
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("http faults: 404 and 403 fail at once, naming URL, status and one attempt") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const auto start = Clock::now();
  const std::string missing = fixture.nginx_url("files", "no-such-shard.tar");
  CHECK(failure_of([&] { HttpByteSource(missing, quick_failures(4)); }) ==
        missing + ": opening (bytes 0-0): HTTP 404 after 1 attempt");
  const std::string forbidden = fixture.nginx_url("forbidden", "shard.tar");
  CHECK(failure_of([&] { HttpByteSource(forbidden, quick_failures(4)); }) ==
        forbidden + ": opening (bytes 0-0): HTTP 403 after 1 attempt");
  CHECK(seconds_since(start) < 1.0);
}

TEST_CASE("http faults: a bad URL fails at once with curl's reason") {
  const std::string bad = "http://127.0.0.1:99999/shard.tar";
  const std::string message = failure_of([&] { HttpByteSource(bad, quick_failures(3)); });
  CAPTURE(message);
  CHECK(message.starts_with(bad + ": opening (bytes 0-0): "));
  CHECK(contains(message, "(curl 3) after 1 attempt"));
}

TEST_CASE("http faults: HTTP 500 is retried `attempts` times, then fails naming it") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const auto start = Clock::now();
  const std::string url = fixture.nginx_url("error", "shard.tar");
  CHECK(failure_of([&] { HttpByteSource(url, quick_failures(3)); }) ==
        url + ": opening (bytes 0-0): HTTP 500 after 3 attempts");

  // Opened (byte 0 is served), then every block fails.
  const std::string name = fixture.serve("error.tar", random_bytes(3 * kBlock, 1));
  const std::string after_open = fixture.nginx_url("error-after-open", name);
  const HttpByteSource source(after_open, quick_failures(4));
  char byte = 0;
  CHECK(failure_of([&] { source.read_at(&byte, 1, kBlock + 5); }) ==
        after_open + ": bytes 262144-524287: HTTP 500 after 4 attempts");
  CHECK(source.counters().requests == 1 + 4);
  CHECK(source.counters().retries == 3);
  CHECK(seconds_since(start) < 2.0);
}

TEST_CASE("http faults: a dropped connection is retried, then fails naming curl's error") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const auto start = Clock::now();
  const std::string url = fixture.nginx_url("drop", "shard.tar");
  const std::string opening = failure_of([&] { HttpByteSource(url, quick_failures(3)); });
  CAPTURE(opening);
  CHECK(opening.starts_with(url + ": opening (bytes 0-0): "));
  CHECK(contains(opening, "(curl 52) after 3 attempts"));  // empty reply from server

  const std::string name = fixture.serve("drop.tar", random_bytes(3 * kBlock, 2));
  const std::string after_open = fixture.nginx_url("drop-after-open", name);
  const HttpByteSource source(after_open, quick_failures(2));
  std::string sink;
  const std::string reading = failure_of([&] {
    source.read_sequentially(0, [&](std::string_view chunk) {
      sink.append(chunk);
      return true;
    });
  });
  CAPTURE(reading);
  CHECK(reading.starts_with(after_open + ": bytes 0-786431 (sequential read): "));
  CHECK(contains(reading, "(curl 52) after 2 attempts"));
  CHECK(sink.empty());
  CHECK(seconds_since(start) < 2.0);
}

TEST_CASE("http faults: a stalled server is detected within the timeout") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  // No response at all.
  auto start = Clock::now();
  const std::string url = fixture.nginx_url("stall", "shard.tar");
  const std::string opening = failure_of([&] { HttpByteSource(url, quick_failures(2)); });
  CAPTURE(opening);
  CHECK(opening.starts_with(url + ": opening (bytes 0-0): "));
  CHECK(contains(opening, "(curl 28) after 2 attempts"));  // timed out
  CHECK(seconds_since(start) < 1.5);

  // 64 KiB at once, then 1 KiB/s: a ranged read times out, a sequential pass falls below a
  // block per request timeout.
  const std::string name = fixture.serve("slow.tar", random_bytes(3 * kBlock, 3));
  const std::string slow = fixture.nginx_url("slow", name);
  const HttpByteSource source(slow, quick_failures(2));
  start = Clock::now();
  std::string block(kBlock, '\0');
  const std::string ranged = failure_of([&] { source.read_at(block.data(), kBlock, 0); });
  CAPTURE(ranged);
  CHECK(ranged.starts_with(slow + ": bytes 0-262143: "));
  CHECK(contains(ranged, "(curl 28) after 2 attempts"));
  CHECK(seconds_since(start) < 1.5);

  start = Clock::now();
  std::uint64_t received = 0;
  const std::string sequential = failure_of([&] {
    source.read_sequentially(0, [&](std::string_view chunk) {
      received += chunk.size();
      return true;
    });
  });
  CAPTURE(sequential);
  CHECK(sequential.starts_with(slow + ": bytes "));
  CHECK(contains(sequential,
                 "(sequential read): stalled: fewer than 262144 bytes in 300 ms "
                 "after 2 attempts"));
  CHECK(received > 0);
  CHECK(seconds_since(start) < 3.5);
}

TEST_CASE("http faults: a server failing its first requests recovers within the attempts") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(3 * kBlock + 17, 4);
  const std::string name = fixture.serve("flaky.tar", bytes);
  // 503 twice, then the file.
  const HttpByteSource source(fixture.flaky_url("fail", 2, name), quick_failures(3));
  std::string read(bytes.size(), '\0');
  CHECK(source.read_at(read.data(), read.size(), 0) == bytes.size());
  CHECK(read == bytes);
  CHECK(source.counters().retries == 2);
  CHECK(source.counters().requests == 3 + 4);

  // One more failure than attempts allow.
  const std::string other = fixture.serve("flakier.tar", bytes);
  const std::string url = fixture.flaky_url("fail", 3, other);
  CHECK(failure_of([&] { HttpByteSource(url, quick_failures(3)); }) ==
        url + ": opening (bytes 0-0): HTTP 503 after 3 attempts");
}

TEST_CASE("http faults: a body cut off mid-way is fetched again, a pass resumes where it was") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string bytes = random_bytes(3 * kBlock + 17, 5);
  const std::string name = fixture.serve("cut.tar", bytes);
  // The first response of more than a byte carries half its body, then the connection closes.
  const HttpByteSource sequential(fixture.flaky_url("drop", 1, name), quick_failures(2));
  std::string passed;
  sequential.read_sequentially(0, [&](std::string_view chunk) {
    passed.append(chunk);
    return true;
  });
  CHECK(passed == bytes);
  HttpTransferCounters counters = sequential.counters();
  CHECK(counters.retries == 1);
  CHECK(counters.requests == 3);
  // Nothing fetched twice: byte 0 when opening, half the file, then the rest.
  CHECK(counters.bytes_fetched == 1 + bytes.size());

  const std::string other = fixture.serve("cut-block.tar", bytes);
  const HttpByteSource ranged(fixture.flaky_url("drop", 1, other), quick_failures(2));
  std::string block(kBlock, '\0');
  CHECK(ranged.read_at(block.data(), kBlock, kBlock) == kBlock);
  CHECK(block == bytes.substr(kBlock, kBlock));
  counters = ranged.counters();
  CHECK(counters.retries == 1);
  CHECK(counters.bytes_fetched == 1 + kBlock / 2 + kBlock);
}

TEST_CASE("http faults: what the consumer of a pass throws reaches the caller") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string name = fixture.serve("throws.tar", random_bytes(kBlock, 6));
  const HttpByteSource source(fixture.nginx_url("files", name), quick_failures(2));
  CHECK_THROWS_WITH_AS(
      source.read_sequentially(
          0, [](std::string_view) -> bool { throw std::runtime_error("bad member"); }),
      "bad member", std::runtime_error);
  CHECK(source.counters().retries == 0);
}

TEST_CASE("http faults: a body longer than the file it declared is cut at its end, named") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const std::string lines = "{\"a\": 1}\n{\"a\": 2}\n";
  const std::string name = fixture.serve("endless.jsonl", lines);
  const std::string url = fixture.flaky_url("endless", 0, name);
  const HttpByteSource source(url, quick_failures(2));
  std::uint64_t consumed = 0;
  const std::string error = failure_of([&] {
    source.read_sequentially(0, [&](std::string_view chunk) {
      consumed += chunk.size();
      return true;
    });
  });
  CHECK(error == url + ": the server sent more than the " + std::to_string(lines.size()) +
                     " bytes it declared for the file (sequential read from byte 0)");
  CHECK(consumed == lines.size());
  // A ranged read of it (indexing begins with one) is cut at once too.
  CHECK(failure_of([&] { DatasetIndex::build(std::vector{url}); }) ==
        url + ": bytes 0-" + std::to_string(lines.size() - 1) + ": the server sent more than the " +
            std::to_string(lines.size()) + " bytes asked for");
}

}  // namespace
}  // namespace odbatch
