// Checkpoint parts join into one checkpoint only when they are complete and agree; settings that
// differ are named; re-sharding gives every pending sample to exactly one new rank.
#include "odbatch/core/checkpoint.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <set>

namespace odbatch {
namespace {

Checkpoint part(std::uint32_t rank, std::uint32_t world, std::uint64_t cursor,
                std::vector<CheckpointWindowSample> window) {
  Checkpoint c;
  c.epoch = 2;
  c.steps_taken = 17;
  c.progress = {400, 90'000};
  c.world_size = world;
  c.settings = {{"batching.window", "64"}, {"dataset", "abc"}};
  RankCheckpoint r;
  r.rank = rank;
  r.round = 5;
  r.round_first_step = 15;
  r.cursor = cursor;
  r.shard_size = 100;
  r.before_round = {350, 80'000};
  r.window = std::move(window);
  c.ranks.push_back(std::move(r));
  return c;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("parts join in rank order when complete and consistent") {
  const auto joined = join_checkpoint_parts(
      {part(1, 2, 40, {{7, 1, true}}), part(0, 2, 30, {{3, 2, false}, {4, 0, true}})});
  REQUIRE(joined.ranks.size() == 2);
  CHECK(joined.ranks[0].rank == 0);
  CHECK(joined.ranks[1].rank == 1);
  CHECK(joined.ranks[0].window.size() == 2);
  CHECK(joined.steps_taken == 17);
}

TEST_CASE("a missing, doubled or disagreeing part is named") {
  CHECK(error_of([] {
          join_checkpoint_parts({part(0, 3, 1, {}), part(2, 3, 1, {})});
        }).find("rank 1 of 3 is missing") != std::string::npos);
  CHECK(error_of([] {
          join_checkpoint_parts({part(0, 2, 1, {}), part(0, 2, 1, {})});
        }).find("rank 0: given twice") != std::string::npos);
  auto late = part(1, 2, 1, {});
  late.steps_taken = 18;
  CHECK(error_of([&] {
          join_checkpoint_parts({part(0, 2, 1, {}), late});
        }).find("rank 1: epoch 2 step 18, another part: epoch 2 step 17") != std::string::npos);
  auto other_round = part(1, 2, 1, {});
  other_round.ranks[0].round = 6;
  CHECK(error_of([&] {
          join_checkpoint_parts({part(0, 2, 1, {}), other_round});
        }).find("round 6") != std::string::npos);
  auto other_settings = part(1, 2, 1, {});
  other_settings.settings[0].value = "32";
  CHECK(error_of([&] {
          join_checkpoint_parts({part(0, 2, 1, {}), other_settings});
        }).find("settings differ") != std::string::npos);
}

TEST_CASE("a part that contradicts itself is rejected naming the field") {
  CHECK(error_of([] {
          join_checkpoint_parts({part(0, 1, 101, {})});
        }).find("cursor 101 past the shard's 100 records") != std::string::npos);
  CHECK(error_of([] {
          join_checkpoint_parts({part(3, 2, 1, {})});
        }).find("rank not below the world size 2") != std::string::npos);
  CHECK(error_of([] {
          join_checkpoint_parts({part(0, 1, 1, {{1, 0, false}, {2, 1, false}})});
        }).find("deferred after samples the round admitted") != std::string::npos);
}

TEST_CASE("setting mismatches name the setting and both values") {
  const std::vector<RunSetting> saved = {{"batching.window", "64"}, {"dataset", "abc"}};
  CHECK(setting_mismatches(saved, saved).empty());
  const auto mismatches = setting_mismatches(
      saved, {{"batching.window", "32"}, {"dataset", "abc"}, {"tokenizer", "t"}});
  REQUIRE(mismatches.size() == 2);
  CHECK(mismatches[0] == "batching.window: 64 in the checkpoint, 32 now");
  CHECK(mismatches[1] == "tokenizer: not in the checkpoint, t now");
}

TEST_CASE("re-sharding gives every pending sample to exactly one new rank, balanced") {
  for (std::uint32_t old_world : {1u, 2u, 3u, 4u}) {
    std::vector<Checkpoint> parts;
    for (std::uint32_t r = 0; r < old_world; ++r) {
      std::vector<CheckpointWindowSample> window;
      for (std::uint32_t w = 0; w < r + 3; ++w) window.push_back({w, w < 1 ? 1u : 0u, w % 2 == 0});
      parts.push_back(part(r, old_world, 10 * r + 5, std::move(window)));
    }
    const auto checkpoint = join_checkpoint_parts(parts);
    std::uint64_t total = 0;
    for (const auto& rank : checkpoint.ranks) total += pending_samples(rank);
    for (std::uint32_t new_world : {1u, 2u, 3u, 5u, 7u}) {
      CAPTURE(old_world);
      CAPTURE(new_world);
      std::set<std::pair<std::uint32_t, std::uint64_t>> seen;
      std::uint64_t smallest = total, largest = 0;
      for (std::uint32_t r = 0; r < new_world; ++r) {
        std::uint64_t mine = 0;
        for (const auto& slice : reshard_pending(checkpoint, new_world, r)) {
          CHECK(slice.begin < slice.end);
          CHECK(slice.end <= pending_samples(checkpoint.ranks[slice.old_rank]));
          for (auto p = slice.begin; p < slice.end; ++p)
            CHECK(seen.insert({slice.old_rank, p}).second);
          mine += slice.end - slice.begin;
        }
        smallest = std::min(smallest, mine);
        largest = std::max(largest, mine);
      }
      CHECK(seen.size() == total);
      CHECK(largest - smallest <= 1);
    }
  }
  CHECK(pending_samples(part(0, 1, 95, {{1, 1, true}, {2, 0, false}}).ranks[0]) == 6);
}

}  // namespace
}  // namespace odbatch
