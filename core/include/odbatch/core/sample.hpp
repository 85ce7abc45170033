#pragma once
// Per-sample costs as known after preprocessing: the only thing batching decisions look at.
#include <cstdint>

namespace odbatch {

using SampleId = std::uint64_t;

// A preprocessed sample's cost. `labels` counts the target positions the loss sees (after the
// next-token shift); `patches` counts vision patches (0 for text).
struct SampleCost {
  SampleId id = 0;
  std::uint32_t tokens = 0;
  std::uint32_t labels = 0;
  std::uint32_t patches = 0;

  friend bool operator==(const SampleCost&, const SampleCost&) = default;
};

// A sample held in a rank's window; `age` counts the rounds it has been deferred.
struct WindowSample {
  SampleCost cost;
  std::uint32_t age = 0;

  friend bool operator==(const WindowSample&, const WindowSample&) = default;
};

}  // namespace odbatch
