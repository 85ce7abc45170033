// The pipeline over WebDataset tar shards served by HTTP: nginx on loopback, and a server that
// fails each shard's first requests (tests/runtime/source/http_fixture.py), give the very batches
// and ledger of the same shards read from local files, and a later run finds the blocks in the
// disk cache.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "http_test_fixture.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

const std::filesystem::path kShardDir = ODBATCH_WEBDATASET_DIR;

struct Epoch {
  std::vector<std::uint64_t> digests;
  test::LedgerContents ledger;
};

Epoch run_epoch(const PipelineConfig& config, const std::filesystem::path& ledger_file) {
  auto run = test::run_single_rank_epoch(config, ledger_file);
  return {test::batch_digests(run.batches), std::move(run.ledger)};
}

// The two small shards keep the test quick; small blocks make each one many.
std::vector<std::filesystem::path> shards() {
  auto found = test::webdataset_shards(kShardDir);
  found.resize(2);
  return found;
}

void check_same_epoch(const Epoch& remote, const Epoch& local) {
  CHECK(remote.digests == local.digests);
  CHECK(remote.ledger.steps == local.ledger.steps);
  REQUIRE(remote.ledger.rejected.size() == local.ledger.rejected.size());
  for (std::size_t i = 0; i < local.ledger.rejected.size(); ++i) {
    CHECK(remote.ledger.rejected[i].id == local.ledger.rejected[i].id);
    CHECK(remote.ledger.rejected[i].reason == local.ledger.rejected[i].reason);
  }
}

TEST_CASE("tar shards over HTTP give the batches of the same shards read locally") {
  ODBATCH_REQUIRE_HTTP_FIXTURE(fixture);
  const auto files = shards();
  const test::TempDir dir;
  const auto local_config = test::small_config(files);
  const Epoch local = run_epoch(local_config, dir.path() / "local-ledger.jsonl");
  REQUIRE(local.digests.size() > 4);

  std::vector<std::string> nginx_urls;
  std::vector<std::string> flaky_urls;
  for (const auto& file : files) {
    const std::string name = fixture.serve_link(file.filename().string(), file);
    nginx_urls.push_back(fixture.nginx_url("files", name));
    // 503 for the first request of each shard: every shard is opened after a retry.
    flaky_urls.push_back(fixture.flaky_url("fail", 1, name));
  }
  auto remote_config = local_config;
  remote_config.source.files = nginx_urls;
  remote_config.source.remote.block_bytes = 64 * 1024;
  remote_config.source.remote.cache_dir = dir.path() / "blocks";
  remote_config.source.remote.backoff = std::chrono::milliseconds(10);
  const Epoch cold = run_epoch(remote_config, dir.path() / "cold-ledger.jsonl");
  check_same_epoch(cold, local);
  CHECK(!std::filesystem::is_empty(remote_config.source.remote.cache_dir));

  // Another run on the same cache directory.
  const Epoch warm = run_epoch(remote_config, dir.path() / "warm-ledger.jsonl");
  check_same_epoch(warm, local);

  auto flaky_config = local_config;
  flaky_config.source.files = flaky_urls;
  flaky_config.source.remote.block_bytes = 64 * 1024;
  flaky_config.source.remote.attempts = 2;
  flaky_config.source.remote.backoff = std::chrono::milliseconds(10);
  const Epoch flaky = run_epoch(flaky_config, dir.path() / "flaky-ledger.jsonl");
  check_same_epoch(flaky, local);
}

}  // namespace
}  // namespace odbatch
