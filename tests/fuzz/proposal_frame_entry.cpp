// A round proposal frame as a peer rank's bytes reach RoundCoordinator::run_round.
#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/proto_msgs/proposal_codec.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "proposal_frame";

// Every window index of a rank is either in one step's group or deferred, once.
void expect_each_sample_placed_once(const RankPlan& rank, std::size_t window) {
  std::vector<int> placed(window, 0);
  for (const auto index : rank.members) {
    expect(index < window, kTarget, "a plan's group names a sample inside the window");
    ++placed[index];
  }
  for (const auto index : rank.deferred) {
    expect(index < window, kTarget, "a plan defers a sample inside the window");
    ++placed[index];
  }
  expect(std::ranges::all_of(placed, [](int times) { return times == 1; }), kTarget,
         "a plan emits or defers every window sample exactly once");
}

}  // namespace

Outcome proposal_frame(Input input) {
  const std::span frame(reinterpret_cast<const std::byte*>(input.data()), input.size());
  // The built-in batching settings, with the limits RoundCoordinator decodes under.
  const BatchingConfig config;
  DecodeLimits limits;
  if (config.policy == Policy::balanced)
    limits.max_samples = config.window * (config.max_defer_rounds + 1);

  Proposal proposal;
  if (const auto error = decode_proposal(frame, proposal, limits)) {
    expect(!error->message.empty(), kTarget, "a decode error says what is wrong");
    return Outcome::rejected;
  }
  expect(proposal.samples.size() <= limits.max_samples, kTarget,
         "a decoded proposal holds no more samples than the limit");
  const auto encoded = encode_proposal(proposal);
  expect(std::ranges::equal(encoded, frame), kTarget,
         "only a proposal's one encoding decodes (the re-encoding differs)");
  expect(encoded_proposal_size(proposal) == encoded.size(), kTarget,
         "encoded_proposal_size is the encoding's size");

  // Two ranks that sent this proposal, checked against a view with the same header (so that
  // mutations of the header's values still reach the checks of the samples and the plan).
  Proposal expected = proposal;
  expected.version = kProtocolVersion;
  expected.samples.clear();
  const std::array proposals{proposal, proposal};
  if (const auto divergence = check_proposals(proposals, expected, config)) {
    expect(!divergence->field.empty() && !divergence->message.empty(), kTarget,
           "a divergence names its field and says what differs");
    return Outcome::accepted;
  }
  const RoundPlan plan = plan_round(proposals, config, proposal.epoch, proposal.round);
  expect(plan.ranks.size() == proposals.size(), kTarget, "a plan has one part per rank");
  for (const RankPlan& rank : plan.ranks) {
    expect(rank.steps.size() == plan.steps, kTarget, "every rank has the plan's step count");
    expect_each_sample_placed_once(rank, proposal.samples.size());
  }
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
