// The [source.remote] table: how files named by URLs are read (block cache, timeouts, retries).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "toml_snippet.hpp"

namespace odbatch {
namespace {

constexpr std::string_view kMinimal = R"(
[source]
files = ["https://example.org/shard-{000..003}.tar"]

[tokenizer]
model = "spm.model"
)";

PipelineConfig parse(const std::string& extra) {
  return test::parse_snippet(kMinimal, extra);
}

std::string error_of(const std::string& extra) {
  return test::snippet_error(kMinimal, extra);
}

TEST_CASE("[source.remote] sets the remote options, and without it they keep their defaults") {
  const RemoteSourceOptions defaults;
  const auto plain = parse("");
  CHECK(plain.source.remote.cache_dir.empty());
  CHECK(plain.source.remote.cache_bytes == defaults.cache_bytes);
  CHECK(plain.source.remote.attempts == defaults.attempts);

  const auto c = parse(R"(
[source.remote]
cache_dir = "remote-cache"
cache_bytes = 0
block_bytes = 65536
request_timeout_ms = 2500
attempts = 7
backoff_ms = 0
ca_file = "/etc/private-ca.pem"
)");
  CHECK(c.source.remote.cache_dir == "/base/remote-cache");
  CHECK(c.source.remote.cache_bytes == 0);
  CHECK(c.source.remote.block_bytes == 65536);
  CHECK(c.source.remote.request_timeout == std::chrono::milliseconds(2500));
  CHECK(c.source.remote.attempts == 7);
  CHECK(c.source.remote.backoff == std::chrono::milliseconds(0));
  CHECK(c.source.remote.ca_file == "/etc/private-ca.pem");
  // The dataset index reads remote files with them.
  CHECK(dataset_index_options(c.source).remote.attempts == 7);
  CHECK(dataset_index_options(c.source).remote.cache_dir == "/base/remote-cache");

  const auto keys = pipeline_config_keys();
  for (const char* key :
       {"source.remote.cache_dir", "source.remote.cache_bytes", "source.remote.block_bytes",
        "source.remote.request_timeout_ms", "source.remote.attempts", "source.remote.backoff_ms",
        "source.remote.ca_file"}) {
    CAPTURE(key);
    CHECK(std::find(keys.begin(), keys.end(), key) != keys.end());
  }
}

TEST_CASE("[source.remote]: bad values, unknown keys and unknown inner tables name the key") {
  const auto zero_attempts = error_of("[source.remote]\nattempts = 0\n");
  CHECK(zero_attempts.find("source.remote.attempts") != std::string::npos);
  CHECK(zero_attempts.find("between 1 and 100") != std::string::npos);
  const auto unknown = error_of("[source.remote]\ncache_size = 1\n");
  CHECK(unknown.find("source.remote.cache_size") != std::string::npos);
  CHECK(unknown.find("unknown key") != std::string::npos);
  const auto inner = error_of("[source.remot]\nattempts = 2\n");
  CHECK(inner.find("source.remot") != std::string::npos);
  CHECK(inner.find("unknown table") != std::string::npos);
  CHECK(error_of("[source.remote]\nrequest_timeout_ms = \"5s\"\n").find("expected an integer") !=
        std::string::npos);
}

}  // namespace
}  // namespace odbatch
