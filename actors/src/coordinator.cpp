#include <chrono>
#include <optional>
#include <string>

#include "odbatch/dist/round_coordinator.hpp"
#include "odbatch/log/logger.hpp"
#include "round_actors.hpp"

namespace odbatch::actors {
namespace {

// "epoch 0 round 3: 512 proposed, 7 steps (2 idle here), 40 deferred, 3.1 ms"
std::string round_line(const Proposal& proposal, const RoundPlan& plan, std::uint32_t rank,
                       std::chrono::steady_clock::duration took) {
  const auto& mine = plan.ranks.at(rank);
  std::size_t idle = 0;
  for (const auto& step : mine.steps) idle += step.idle() ? 1 : 0;
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
  return "epoch " + std::to_string(plan.epoch) + " round " + std::to_string(plan.round) + ": " +
         std::to_string(proposal.samples.size()) + " proposed, " + std::to_string(plan.steps) +
         " steps (" + std::to_string(idle) + " idle here), " +
         std::to_string(mine.deferred.size()) + " deferred, " + std::to_string(micros / 1000) +
         "." + std::to_string(micros % 1000 / 100) + " ms" +
         (plan.epoch_over ? ", epoch over" : "");
}

// Marks the epoch in a round while it lives.
class InRound {
 public:
  explicit InRound(EpochContext& context) : context_(context) { context_.set_in_round(true); }
  ~InRound() { context_.set_in_round(false); }
  InRound(const InRound&) = delete;
  InRound& operator=(const InRound&) = delete;

 private:
  EpochContext& context_;
};

}  // namespace

struct CoordinatorState {
  EpochContextPtr context;
  std::optional<RoundCoordinator> rounds;
};

coordinator_actor::behavior_type coordinator_behavior(
    coordinator_actor::stateful_pointer<CoordinatorState> self, EpochContextPtr context) {
  report_exceptions_to(self, context, "coordinator");
  self->state.context = context;
  self->state.rounds.emplace(context->collective(), context->config().batching,
                             context->config().flow.round_timeout, context->recorder(),
                             context->resources().settings);
  return {
      [=](propose_atom, const Proposal& proposal) -> RoundPlan {
        auto& s = self->state;
        auto& stats = s.context->stats();
        StageTimer timer(stats.coordinator);
        const auto round_start = std::chrono::steady_clock::now();
        std::optional<RoundPlan> planned;
        const InRound in_round(*s.context);
        try {
          planned = s.rounds->run_round(proposal);
        } catch (const RoundError& e) {
          // The ranks cannot go on together: a peer failure, in this round.
          s.context->fail(std::string("coordinator: ") + e.what(), PipelineFailure::Cause::peer,
                          proposal.round);
          throw;
        }
        auto plan = std::move(*planned);
        const auto took = std::chrono::steady_clock::now() - round_start;
        stats.round_latency.record(took);
        const auto rank = s.context->resources().rank;
        if (log_enabled(LogLevel::debug))
          Logger(rank).debug(round_line(proposal, plan, rank, took));
        return plan;
      },
  };
}

coordinator_actor spawn_coordinator(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn<caf::detached>(coordinator_behavior, std::move(context));
}

}  // namespace odbatch::actors
