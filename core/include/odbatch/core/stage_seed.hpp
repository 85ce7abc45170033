#pragma once
// The seed of a user stage's random generator for one sample: a function of the run's seed, the
// epoch, the sample id and the stage's name alone, so that a random augmentation makes the same
// choice on a rerun, on whichever rank reads the sample, and after a resume onto any world size.
#include <cstdint>
#include <string_view>

#include "odbatch/core/sample.hpp"

namespace odbatch {

std::uint64_t stage_seed(std::uint64_t seed, std::uint64_t epoch, SampleId id,
                         std::string_view stage);

}  // namespace odbatch
