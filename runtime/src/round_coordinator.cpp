#include "odbatch/runtime/round_coordinator.hpp"

#include "odbatch/proto_msgs/proposal_codec.hpp"

namespace odbatch {
namespace {

std::string round_name(const Proposal& p) {
  return "epoch " + std::to_string(p.epoch) + " round " + std::to_string(p.round);
}

}  // namespace

RoundCoordinator::RoundCoordinator(Collective& collective, BatchingConfig config,
                                   std::chrono::milliseconds round_deadline)
    : collective_(collective),
      config_(config),
      round_deadline_(round_deadline),
      fingerprint_(fingerprint(config, collective.world_size())) {}

RoundPlan RoundCoordinator::run_round(Proposal proposal) {
  proposal.version = kProtocolVersion;
  proposal.fingerprint = fingerprint_;
  proposal.prev_digest = prev_digest_;
  const auto where = round_name(proposal);
  const auto fail = [&](const std::string& why) -> RoundError {
    collective_.abort(where + ": " + why);
    return RoundError("rank " + std::to_string(collective_.rank()) + ", " + where + ": " + why);
  };

  std::vector<std::vector<std::byte>> frames;
  try {
    frames = collective_.allgather(encode_proposal(proposal),
                                   Collective::Clock::now() + round_deadline_);
  } catch (const CollectiveError& e) {
    throw RoundError("rank " + std::to_string(collective_.rank()) + ", " + where +
                     ": proposal exchange failed: " + e.what());
  }
  DecodeLimits limits;
  if (config_.policy == Policy::balanced)
    limits.max_samples = config_.window * (config_.max_defer_rounds + 1);
  std::vector<Proposal> proposals(frames.size());
  for (std::size_t r = 0; r < frames.size(); ++r)
    if (const auto error = decode_proposal(frames[r], proposals[r], limits))
      throw fail("malformed proposal from rank " + std::to_string(r) + ": " + error->message);
  if (const auto d = check_proposals(proposals, proposal, config_))
    throw fail("rank " + std::to_string(d->rank) + " diverges (" + d->field + "): " + d->message);

  RoundPlan plan = plan_round(proposals, config_, proposal.epoch, proposal.round);
  prev_digest_ = plan.digest;
  return plan;
}

}  // namespace odbatch
