#include "odbatch/stage/stage.hpp"

#include "odbatch/core/stable_hash.hpp"
#include "odbatch/core/stage_seed.hpp"

namespace odbatch {

std::uint64_t StageRandom::below(std::uint64_t n) {
  return reduce_to_range(generator_.next(), n);
}

StageRandom& StageContext::random() {
  if (!random_) random_.emplace(stage_seed(seed_, epoch_, id_, stage_));
  return *random_;
}

}  // namespace odbatch
