#include <chrono>
#include <optional>

#include "odbatch/dist/round_coordinator.hpp"
#include "round_actors.hpp"

namespace odbatch::actors {

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
        try {
          planned = s.rounds->run_round(proposal);
        } catch (const RoundError& e) {
          // The ranks cannot go on together: a peer failure, in this round.
          s.context->fail(std::string("coordinator: ") + e.what(), PipelineFailure::Cause::peer,
                          proposal.round);
          throw;
        }
        auto plan = std::move(*planned);
        stats.round_latency.record(std::chrono::steady_clock::now() - round_start);
        return plan;
      },
  };
}

coordinator_actor spawn_coordinator(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn<caf::detached>(coordinator_behavior, std::move(context));
}

}  // namespace odbatch::actors
