#pragma once
// A whole epoch's batches on every rank, as any batching scheme would emit them: per rank, per
// step, the indices of the step's samples in the epoch's sample list (none for an IDLE step).
// Every scheme the simulator compares produces one, so they are measured and checked alike.
#include <cstdint>
#include <vector>

namespace odbatch {

using StepSamples = std::vector<std::uint32_t>;  // empty: IDLE
using RankSchedule = std::vector<StepSamples>;

struct Schedule {
  std::vector<RankSchedule> ranks;
};

// Identity coverage and alignment of a schedule over an epoch of `sample_count` samples.
struct ScheduleAccounting {
  std::uint64_t expected = 0;
  std::uint64_t emitted = 0;     // distinct samples emitted
  std::uint64_t duplicated = 0;  // emissions beyond a sample's first
  std::uint64_t unknown = 0;     // indices outside the epoch
  std::uint64_t steps = 0;       // the longest rank's
  bool steps_equal = true;       // every rank has the same number of steps

  std::uint64_t lost() const { return expected - emitted; }
  bool ok() const { return lost() == 0 && duplicated == 0 && unknown == 0 && steps_equal; }
};

ScheduleAccounting account_schedule(const Schedule& schedule, std::uint64_t sample_count);

}  // namespace odbatch
