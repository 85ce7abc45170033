#pragma once
// How much a pinned buffer or a device slot allocates for a request.
#include <cstddef>

namespace odbatch {

// A quarter more than `bytes`, in whole MiB (at least one): token-budgeted batches vary a little
// from step to step, and a buffer sized exactly for one batch would be reallocated for the next.
constexpr std::size_t capacity_with_headroom(std::size_t bytes) {
  constexpr std::size_t kGranule = std::size_t{1} << 20;
  const std::size_t wanted = bytes + bytes / 4;
  return wanted == 0 ? kGranule : (wanted + kGranule - 1) / kGranule * kGranule;
}

}  // namespace odbatch
