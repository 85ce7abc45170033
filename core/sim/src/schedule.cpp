#include "odbatch/sim/schedule.hpp"

#include <algorithm>

namespace odbatch {

ScheduleAccounting account_schedule(const Schedule& schedule, std::uint64_t sample_count) {
  ScheduleAccounting a;
  a.expected = sample_count;
  std::vector<bool> seen(sample_count, false);
  for (const auto& rank : schedule.ranks) {
    a.steps_equal = a.steps_equal && rank.size() == schedule.ranks.front().size();
    a.steps = std::max<std::uint64_t>(a.steps, rank.size());
    for (const auto& step : rank)
      for (auto i : step) {
        if (i >= sample_count) {
          ++a.unknown;
        } else if (seen[i]) {
          ++a.duplicated;
        } else {
          seen[i] = true;
          ++a.emitted;
        }
      }
  }
  return a;
}

}  // namespace odbatch
