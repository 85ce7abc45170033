// What `odbatch stress` reads in a rank's stderr (whether its error names the cause) and how it
// varies a pipeline TOML for one rank or run (config_variant).
#include <doctest/doctest.h>

#include "config_variant.hpp"
#include "stress_checks.hpp"

namespace odbatch::cli {
namespace {

TEST_CASE("stress: an error that names a symptom and not the cause is unnamed") {
  // The message survivors printed once rank 0, the store's host, was lost: the exchange
  // failed "after an abort", and why was lost with the store.
  const std::string symptom =
      "odbatch run: pipeline failed: rank 1, epoch 0: coordinator: rank 1, epoch 0 round 7: "
      "proposal exchange failed: exchange 7 after an abort (last rounds: "
      "/tmp/odbatch-flight-rank1.json)\n";
  const auto why = unnamed_cause(symptom, {"rank 0", "round "});
  REQUIRE(why);
  CHECK(why->find("'rank 0'") != std::string::npos);
  CHECK_FALSE(unnamed_cause(symptom, {"store", "round "}) == std::nullopt);

  const std::string named =
      "odbatch run: pipeline failed: rank 1, epoch 0: coordinator: rank 1, epoch 0 round 7: "
      "proposal exchange failed: exchange 7 after an abort (the run was aborted: rank 1: lost "
      "the store (rank 0 is dead or unreachable): store add 'run/x/heartbeat/1' at "
      "127.0.0.1:5: the server closed the connection)\n";
  CHECK_FALSE(unnamed_cause(named, {"rank 0", "round "}));
  CHECK_FALSE(unnamed_cause(named, {"store", "round "}));
}

TEST_CASE("stress: only the error lines count, and rank numbers match whole") {
  // The fault's announcement names the rank, but it is no error: the cause must be in the error.
  const std::string announced =
      "odbatch: rank 2: injecting fault kind=kill,rank=2,round=3 at unix_ms=1\n"
      "odbatch run: pipeline failed: rank 0, epoch 0 round 3: exchange 3 failed\n";
  CHECK(unnamed_cause(announced, {"rank 2", "round "}));
  CHECK(unnamed_cause("", {"rank 2"}) == "it reported no error");
  CHECK(unnamed_cause("odbatch run: saved its state ... rank 1 saved its state after 3 steps\n",
                      {"rank 1"}));
  CHECK_FALSE(mentions("rank 12 is dead", "rank 1"));
  CHECK(mentions("rank 1 is dead", "rank 1"));
  CHECK(mentions("ranks 0, 1 were", "round ") == false);
  const auto divergence = unnamed_cause(
      "odbatch run: pipeline failed: rank 0, epoch 0 round 0: rank 2 diverges (settings): "
      "source.shuffle: false on rank 2, true on ranks 0, 1 (the setting differs)\n",
      {"source.shuffle", "differ", "round 0"});
  CHECK_FALSE(divergence);
}

TEST_CASE("config variant: a key is replaced in its table, a missing one added after the header") {
  const std::string toml =
      "# the dataset\n"
      "[source]\n"
      "files = [\n"
      "  \"a.jsonl\",  # first ] not the end\n"
      "  \"b.jsonl\",\n"
      "]\n"
      "shuffle = true\n"
      "[batching]\n"
      "shuffle_note = 1\n";
  const auto varied = with_table_values(
      toml, "source",
      {{"shuffle", "false"}, {"files", "[\"/c.jsonl\"]"}, {"on_bad_record", "\"skip\""}});
  CHECK(varied ==
        "# the dataset\n"
        "[source]\n"
        "on_bad_record = \"skip\"\n"
        "files = [\"/c.jsonl\"]\n"
        "shuffle = false\n"
        "[batching]\n"
        "shuffle_note = 1\n");
  CHECK(with_table_values("[batching]\nwindow = 4\n", "source", {{"shuffle", "false"}}) ==
        "[batching]\nwindow = 4\n[source]\nshuffle = false\n");
}

}  // namespace
}  // namespace odbatch::cli
