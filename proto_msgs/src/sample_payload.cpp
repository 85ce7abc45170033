#include "odbatch/proto_msgs/sample_payload.hpp"

namespace odbatch {

SampleCost SamplePayload::cost() const {
  SampleCost c;
  c.id = id;
  c.tokens = static_cast<std::uint32_t>(input_ids.size());
  c.labels = supervised_targets;
  for (const auto& image : images) c.patches += image.grid.patches();
  return c;
}

}  // namespace odbatch
