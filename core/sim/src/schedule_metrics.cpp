#include "odbatch/sim/schedule_metrics.hpp"

#include <algorithm>
#include <vector>

namespace odbatch {
namespace {

double real(std::uint64_t v) {
  return static_cast<double>(v);
}

}  // namespace

ScheduleMetrics measure_schedule(const Schedule& schedule, std::span<const SampleCost> samples,
                                 const StepCostModel& model, const ClusterShape& cluster,
                                 const BatchingConfig& config) {
  ScheduleMetrics m;
  const std::size_t world = schedule.ranks.size();
  for (const auto& rank : schedule.ranks) m.steps = std::max<std::uint64_t>(m.steps, rank.size());
  const BudgetMode layout = config.budget_mode;
  double fill_sum = 0.0, mean_rank_seconds_sum = 0.0;
  std::vector<SampleCost> group;
  for (std::uint64_t step = 0; step < m.steps; ++step) {
    double slowest = 0.0, rank_sum = 0.0;
    for (const auto& rank : schedule.ranks) {
      RankWork work = idle_work();
      if (step < rank.size() && !rank[step].empty()) {
        group.clear();
        for (auto i : rank[step]) group.push_back(samples[i]);
        work = group_work(group);
        const std::uint64_t padded = std::uint64_t{work.rows} * work.max_tokens;
        const double cost = real(layout == BudgetMode::padded ? padded : work.sum_tokens);
        const double fill = cost / config.token_budget;
        ++m.groups;
        m.samples += work.rows;
        m.tokens += work.sum_tokens;
        m.padded_tokens += padded;
        fill_sum += fill;
        ++m.fill_histogram[fill > 1.0 ? kFillBins - 1
                                      : std::min<std::size_t>(static_cast<std::size_t>(fill * 10),
                                                              kFillBins - 2)];
      } else {
        ++m.idle_rank_steps;
      }
      const double t = rank_seconds(model, work, layout);
      slowest = std::max(slowest, t);
      rank_sum += t;
    }
    m.compute_seconds += slowest;
    mean_rank_seconds_sum += world ? rank_sum / real(world) : 0.0;
  }
  m.communication_seconds = real(m.steps) * allreduce_seconds(model, cluster);
  m.optimizer_seconds = real(m.steps) * optimizer_seconds(model, cluster);
  m.seconds = m.compute_seconds + m.communication_seconds + m.optimizer_seconds;
  if (m.seconds > 0) {
    m.samples_per_second = real(m.samples) / m.seconds;
    m.tokens_per_second = real(m.tokens) / m.seconds;
  }
  if (m.padded_tokens > 0) m.padding_efficiency = real(m.tokens) / real(m.padded_tokens);
  const std::uint64_t rank_steps = m.groups + m.idle_rank_steps;
  if (rank_steps > 0) m.idle_fraction = real(m.idle_rank_steps) / real(rank_steps);
  if (mean_rank_seconds_sum > 0) m.rank_imbalance = m.compute_seconds / mean_rank_seconds_sum;
  if (m.groups > 0) m.mean_fill = fill_sum / real(m.groups);
  return m;
}

}  // namespace odbatch
