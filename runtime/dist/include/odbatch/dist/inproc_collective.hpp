#pragma once
// The in-process collective backend: ranks are threads of one process (tests, single-process
// multi-GPU). Create one group for all ranks and hand each rank its member.
#include <memory>

#include "odbatch/dist/collective.hpp"

namespace odbatch {

class InprocGroup {
 public:
  static std::shared_ptr<InprocGroup> create(std::uint32_t world_size);
  virtual ~InprocGroup() = default;
  virtual std::unique_ptr<Collective> member(std::uint32_t rank) = 0;
};

}  // namespace odbatch
