#include "odbatch/dist/round_coordinator.hpp"

#include "odbatch/proto_msgs/proposal_codec.hpp"

namespace odbatch {
namespace {

std::string round_name(const Proposal& p) {
  return "epoch " + std::to_string(p.epoch) + " round " + std::to_string(p.round);
}

}  // namespace

RoundCoordinator::RoundCoordinator(Collective& collective, BatchingConfig config,
                                   std::chrono::milliseconds round_deadline,
                                   FlightRecorder* recorder, std::vector<RunSetting> settings)
    : collective_(collective),
      config_(config),
      round_deadline_(round_deadline),
      recorder_(recorder),
      fingerprint_(fingerprint(config, collective.world_size())),
      settings_(std::move(settings)) {}

RoundPlan RoundCoordinator::run_round(Proposal proposal) {
  proposal.version = kProtocolVersion;
  proposal.fingerprint = fingerprint_;
  proposal.prev_digest = prev_digest_;
  if (!settings_sent_) proposal.settings = settings_;
  settings_sent_ = true;
  RoundTrace record;
  record.epoch = proposal.epoch;
  record.round = proposal.round;
  record.state = std::string(to_string(proposal.state));
  record.window_samples = static_cast<std::uint32_t>(proposal.samples.size());
  if (recorder_) record.started_seconds = recorder_->seconds_since_start();
  try {
    RoundPlan plan = exchange_and_plan(proposal, record);
    record.steps = plan.steps;
    record.digest = plan.digest;
    record.epoch_over = plan.epoch_over;
    if (recorder_) recorder_->record(std::move(record));
    return plan;
  } catch (const std::exception& e) {
    record.failure = e.what();
    if (recorder_) recorder_->record(std::move(record));
    throw;
  }
}

RoundPlan RoundCoordinator::exchange_and_plan(const Proposal& proposal, RoundTrace& record) {
  using Clock = Collective::Clock;
  const auto milliseconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  const auto where = round_name(proposal);
  const auto fail = [&](const std::string& why) -> RoundError {
    const std::string reason =
        "rank " + std::to_string(collective_.rank()) + ", " + where + ": " + why;
    collective_.abort(reason);
    return RoundError(reason);
  };

  std::vector<std::vector<std::byte>> frames;
  const auto exchange_start = Clock::now();
  try {
    frames = collective_.allgather(encode_proposal(proposal), Clock::now() + round_deadline_);
  } catch (const CollectiveError& e) {
    record.exchange_ms = milliseconds_since(exchange_start);
    throw RoundError("rank " + std::to_string(collective_.rank()) + ", " + where +
                     ": proposal exchange failed: " + e.what());
  }
  record.exchange_ms = milliseconds_since(exchange_start);
  for (const auto& frame : frames) record.proposal_bytes.push_back(frame.size());
  const auto plan_start = Clock::now();
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
  record.plan_ms = milliseconds_since(plan_start);
  prev_digest_ = plan.digest;
  return plan;
}

}  // namespace odbatch
