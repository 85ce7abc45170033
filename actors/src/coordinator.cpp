#include <optional>

#include "odbatch/runtime/round_coordinator.hpp"
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
                             context->config().flow.round_timeout, context->recorder());
  return {
      [=](propose_atom, const ProposalPtr& proposal) -> RoundPlanPtr {
        auto& s = self->state;
        StageTimer timer(s.context->stats().coordinator);
        return std::make_shared<const RoundPlan>(s.rounds->run_round(*proposal));
      },
  };
}

caf::actor spawn_coordinator(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn<caf::detached>(coordinator_behavior, std::move(context));
}

}  // namespace odbatch::actors
