// The flight recorder: it keeps the last rounds only, RoundCoordinator records every round (done
// or failed) in it, and it writes them as JSON.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "odbatch/dist/flight_recorder.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/dist/round_coordinator.hpp"
#include "round_test_support.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;

using test::small_config;

Proposal window_of(std::uint64_t round, std::vector<ProposedSample> samples) {
  return test::proposal_of(round, RankState::active, std::move(samples));
}

TEST_CASE("only the last rounds are kept, oldest first") {
  FlightRecorder recorder(3, 2);
  for (std::uint64_t round = 0; round < 5; ++round) {
    RoundTrace trace;
    trace.round = round;
    recorder.record(trace);
  }
  const auto rounds = recorder.rounds();
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0].round == 3);
  CHECK(rounds[1].round == 4);
}

TEST_CASE("the coordinator records done and failed rounds, and they are written as JSON") {
  const auto config = small_config();
  auto group = InprocGroup::create(2);
  FlightRecorder recorder(0, 16);
  std::vector<RoundPlan> plans;
  std::thread other([&] {
    auto member = group->member(1);
    RoundCoordinator coordinator(*member, config, 5s);
    coordinator.run_round(window_of(0, {{30, 3, 0, 0}}));
    // Round 1 never comes from this rank: it aborts instead.
    member->abort("rank 1 stopped");
  });
  auto member = group->member(0);
  RoundCoordinator coordinator(*member, config, 5s, &recorder);
  plans.push_back(coordinator.run_round(window_of(0, {{50, 10, 0, 0}, {20, 5, 0, 0}})));
  CHECK_THROWS_AS(coordinator.run_round(window_of(1, {{50, 10, 0, 0}})), RoundError);
  other.join();

  const auto rounds = recorder.rounds();
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0].round == 0);
  CHECK(rounds[0].state == "ACTIVE");
  CHECK(rounds[0].window_samples == 2);
  CHECK(rounds[0].proposal_bytes.size() == 2);
  CHECK(rounds[0].steps == plans[0].steps);
  CHECK(rounds[0].digest == plans[0].digest);
  CHECK(rounds[0].failure.empty());
  CHECK(rounds[1].round == 1);
  CHECK(rounds[1].proposal_bytes.empty());
  CHECK(rounds[1].failure.find("rank 1 stopped") != std::string::npos);

  const auto file = std::filesystem::temp_directory_path() /
                    ("odbatch-flight-test-" + std::to_string(::getpid()) + ".json");
  recorder.write(file);
  std::ifstream in(file);
  const auto json = nlohmann::json::parse(in);
  std::filesystem::remove(file);
  CHECK(json["rank"] == 0);
  REQUIRE(json["rounds"].size() == 2);
  CHECK(json["rounds"][0]["digest"] == plans[0].digest);
  CHECK(json["rounds"][0]["proposal_bytes"].size() == 2);
  CHECK(!json["rounds"][0].contains("failure"));
  CHECK(json["rounds"][1]["failure"].get<std::string>().find("rank 1 stopped") !=
        std::string::npos);
}

}  // namespace
}  // namespace odbatch
