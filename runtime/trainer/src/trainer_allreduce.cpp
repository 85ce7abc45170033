#include "odbatch/trainer/trainer_allreduce.hpp"

#include <gloo/allreduce.h>
#include <gloo/math.h>

#include <stdexcept>
#include <string>

#include "odbatch/dist/trainer_gloo_context.hpp"
#include "odbatch/trainer/trainer_store.hpp"

namespace odbatch {

struct TrainerAllreduce::Impl {
  std::uint32_t rank = 0;
  std::uint32_t world_size = 1;
  std::unique_ptr<TrainerStore> store;
  std::shared_ptr<gloo::Context> context;

  template <typename T>
  void sum(std::span<T> values) {
    if (!context || values.empty()) return;
    try {
      gloo::AllreduceOptions options(context);
      options.setInput(values.data(), values.size());
      options.setOutput(values.data(), values.size());
      options.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<T>));
      gloo::allreduce(options);
    } catch (const std::exception& e) {
      throw std::runtime_error("rank " + std::to_string(rank) + ": the trainer's allreduce of " +
                               std::to_string(values.size()) + " values failed: " + e.what());
    }
  }
};

TrainerAllreduce::TrainerAllreduce(const DistEnv& dist, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->rank = dist.rank;
  impl_->world_size = dist.world_size;
  if (dist.world_size <= 1) return;
  impl_->store = std::make_unique<TrainerStore>(dist, timeout);
  TrainerGlooOptions gloo;
  gloo.hostname = dist.gloo_hostname.empty() ? dist.master_addr : dist.gloo_hostname;
  gloo.timeout = timeout;
  impl_->context =
      connect_trainer_gloo_context(impl_->store->keys(), dist.rank, dist.world_size, gloo);
}

TrainerAllreduce::~TrainerAllreduce() = default;

void TrainerAllreduce::sum(std::span<float> values) {
  impl_->sum(values);
}
void TrainerAllreduce::sum(std::span<double> values) {
  impl_->sum(values);
}
std::uint32_t TrainerAllreduce::world_size() const {
  return impl_->world_size;
}

}  // namespace odbatch
