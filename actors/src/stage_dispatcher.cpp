#include <deque>

#include "stage_pools.hpp"

namespace odbatch::actors {
namespace {

template <class Work, class Worker>
struct DispatcherState {
  std::deque<Work> queue;
  std::vector<Worker> idle;
  QueueGauge* gauge = nullptr;
};

template <class Dispatcher, class Work, class Worker>
typename Dispatcher::behavior_type dispatcher_behavior(
    typename Dispatcher::template stateful_pointer<DispatcherState<Work, Worker>> self,
    EpochContextPtr context, QueueGauge* gauge) {
  report_exceptions_to(self, context, "stage dispatcher");
  self->state.gauge = gauge;
  // Whatever waits here holds one of the reader's credits: the reader's capacity bounds it.
  gauge->capacity.store(
      context->config().flow.reader_capacity + reader_lookahead(context->config()),
      std::memory_order_relaxed);
  gauge->depth.store(0, std::memory_order_relaxed);
  const auto dispatch = [self] {
    auto& s = self->state;
    while (!s.queue.empty() && !s.idle.empty()) {
      self->send(s.idle.back(), std::move(s.queue.front()));
      s.idle.pop_back();
      s.queue.pop_front();
    }
    s.gauge->depth.store(static_cast<std::int64_t>(s.queue.size()), std::memory_order_relaxed);
  };
  return {
      [=](Work& work) {
        self->state.queue.push_back(std::move(work));
        dispatch();
      },
      [=](stage_demand_atom, const Worker& worker) {
        self->state.idle.push_back(worker);
        dispatch();
      },
  };
}

}  // namespace

record_stage_dispatcher_actor spawn_record_stage_dispatcher(caf::actor_system& system,
                                                            EpochContextPtr context,
                                                            std::size_t stage) {
  auto* gauge = &context->resources().stages.record[stage].counters->queue;
  return system.spawn(
      dispatcher_behavior<record_stage_dispatcher_actor, RecordWork, record_stage_worker_actor>,
      std::move(context), gauge);
}

sample_stage_dispatcher_actor spawn_sample_stage_dispatcher(caf::actor_system& system,
                                                            EpochContextPtr context,
                                                            std::size_t stage) {
  auto* gauge = &context->resources().stages.sample[stage].counters->queue;
  return system.spawn(
      dispatcher_behavior<sample_stage_dispatcher_actor, SampleWork, sample_stage_worker_actor>,
      std::move(context), gauge);
}

}  // namespace odbatch::actors
