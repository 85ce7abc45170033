#include "odbatch/core/stage_seed.hpp"

#include "odbatch/core/stable_hash.hpp"

namespace odbatch {

std::uint64_t stage_seed(std::uint64_t seed, std::uint64_t epoch, SampleId id,
                         std::string_view stage) {
  return StableHasher(0x7374616765736565ULL)  // "stagesee"
      .add(seed)
      .add(epoch)
      .add(id)
      .add(stage)
      .digest();
}

}  // namespace odbatch
