// The ledger of a rank that is killed keeps every line written before the kill: an aborted run's
// audit must see how far each rank got, not an empty file.
#include "odbatch/metrics/ledger_writer.hpp"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace odbatch {
namespace {

std::vector<nlohmann::json> ledger_lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

}  // namespace

TEST_CASE("a ledger keeps every line written before its process is killed") {
  const auto file = std::filesystem::temp_directory_path() /
                    ("odbatch_ledger_test_" + std::to_string(::getpid()) + ".jsonl");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // As a rank that SIGKILL ends mid-epoch: nothing is closed or flushed on the way out.
    LedgerWriter ledger(file);
    LedgerEpoch epoch;
    epoch.record_count = 10;
    epoch.shard.world_size = 1;
    epoch.settings = {{"images.max_pixels", "12845056"}, {"batching.max_seq_len", "4096"}};
    ledger.begin_epoch(epoch);
    const std::vector<SampleId> ids = {3, 1, 4};
    ledger.step(0, 0, 0, false, ids);
    ledger.rejection(0, Rejection{5, "malformed_json", "data.jsonl:6: malformed JSON"});
    ::kill(::getpid(), SIGKILL);
    std::_Exit(0);  // not reached
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  const auto lines = ledger_lines(file);
  std::filesystem::remove(file);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].at("kind") == "epoch");
  // What the samples were made with.
  CHECK(lines[0].at("settings") ==
        nlohmann::json{{"images.max_pixels", "12845056"}, {"batching.max_seq_len", "4096"}});
  CHECK(lines[1].at("kind") == "step");
  CHECK(lines[1].at("ids") == nlohmann::json::array({3, 1, 4}));
  CHECK(lines[2].at("kind") == "rejected");
  CHECK(lines[2].at("detail") == "data.jsonl:6: malformed JSON");
}

}  // namespace odbatch
