#include <chrono>
#include <optional>

#include "odbatch/dist/round_coordinator.hpp"
#include "pipeline_messages.hpp"
#include "round_actors.hpp"

namespace odbatch::actors {

struct CoordinatorState {
  EpochContextPtr context;
  std::optional<RoundCoordinator> rounds;
};

caf::behavior coordinator_behavior(caf::stateful_actor<CoordinatorState>* self,
                                   EpochContextPtr context) {
  report_exceptions_to(self, context, "coordinator");
  self->state.context = context;
  self->state.rounds.emplace(context->collective(), context->config().batching,
                             context->config().flow.round_timeout, context->recorder(),
                             context->resources().settings);
  return {
      [=](propose_atom, const ProposalPtr& proposal) -> RoundPlanPtr {
        auto& s = self->state;
        auto& stats = s.context->stats();
        StageTimer timer(stats.coordinator);
        const auto round_start = std::chrono::steady_clock::now();
        auto plan = std::make_shared<const RoundPlan>(s.rounds->run_round(*proposal));
        stats.round_latency.record(std::chrono::steady_clock::now() - round_start);
        return plan;
      },
  };
}

caf::actor spawn_coordinator(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn<caf::detached>(coordinator_behavior, std::move(context));
}

}  // namespace odbatch::actors
