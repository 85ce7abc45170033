#include "odbatch/core/run_settings.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "odbatch/core/proposal.hpp"

namespace odbatch {
namespace {

using Settings = std::vector<RunSetting>;

const Settings kBase{
    {"dataset", "ab12 (100 records)"}, {"source.shuffle", "true"}, {"batching.seed", "1"}};

Settings with(Settings settings, const std::string& name, const std::string& value) {
  for (auto& setting : settings)
    if (setting.name == name) setting.value = value;
  return settings;
}

TEST_CASE("ranks that agree have no differences") {
  const std::vector<Settings> ranks{kBase, kBase, kBase};
  CHECK(rank_setting_differences(ranks).empty());
  CHECK(rank_setting_differences(std::vector<Settings>{}).empty());
}

TEST_CASE("a difference names the setting and which ranks hold which value") {
  const std::vector<Settings> ranks{kBase, kBase, with(kBase, "source.shuffle", "false")};
  const auto differences = rank_setting_differences(ranks);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0] == "source.shuffle: false on rank 2, true on ranks 0, 1");
}

TEST_CASE("every differing setting is listed, in rank 0's order, missing ones too") {
  Settings odd = with(with(kBase, "batching.seed", "7"), "dataset", "ffff (9 records)");
  odd.pop_back();  // rank 1 lists no seed at all
  const std::vector<Settings> ranks{kBase, odd};
  const auto differences = rank_setting_differences(ranks);
  REQUIRE(differences.size() == 2);
  CHECK(differences[0] == "dataset: ab12 (100 records) on rank 0, ffff (9 records) on rank 1");
  CHECK(differences[1] == "batching.seed: 1 on rank 0, (not set) on rank 1");
}

TEST_CASE("every rank computes the same message from the same settings") {
  const std::vector<Settings> ranks{with(kBase, "source.shuffle", "x"), kBase,
                                    with(kBase, "source.shuffle", "y"), kBase};
  const auto differences = rank_setting_differences(ranks);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0] == "source.shuffle: x on rank 0, y on rank 2, true on ranks 1, 3");
}

Proposal proposal_with(Settings settings) {
  Proposal p;
  p.settings = std::move(settings);
  return p;
}

TEST_CASE("check_proposals names a settings mismatch before the fingerprint") {
  BatchingConfig config;
  std::vector<Proposal> proposals{proposal_with(kBase), proposal_with(kBase),
                                  proposal_with(with(kBase, "source.shuffle", "false"))};
  proposals[2].fingerprint = 99;  // a differing fingerprint would be found too, but later
  const auto divergence = check_proposals(proposals, proposals[0], config);
  REQUIRE(divergence);
  CHECK(divergence->field == "settings");
  CHECK(divergence->rank == 2);
  CHECK(
      divergence->message ==
      "the ranks are configured differently: source.shuffle: false on rank 2, true on ranks 0, 1");
}

TEST_CASE("settings from some ranks but not others diverge") {
  BatchingConfig config;
  const std::vector<Proposal> proposals{proposal_with(kBase), proposal_with({})};
  const auto divergence = check_proposals(proposals, proposals[0], config);
  REQUIRE(divergence);
  CHECK(divergence->field == "settings");
  CHECK(divergence->rank == 1);
  CHECK(divergence->message.find("rank 1 sent no settings") != std::string::npos);
}

TEST_CASE("rounds without settings and rounds with equal settings pass") {
  BatchingConfig config;
  const std::vector<Proposal> none{proposal_with({}), proposal_with({})};
  CHECK(!check_proposals(none, none[0], config));
  const std::vector<Proposal> equal{proposal_with(kBase), proposal_with(kBase)};
  CHECK(!check_proposals(equal, equal[0], config));
}

}  // namespace
}  // namespace odbatch
