#pragma once
// What the pipeline's actors send each other. Payloads travel as shared pointers to immutable
// objects: every actor lives in one process, so nothing is copied or serialised between stages.
#include <caf/all.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "odbatch/batch/batch.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/core/proposal.hpp"
#include "odbatch/core/rejection.hpp"
#include "odbatch/core/round_record.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/proto_msgs/sample_payload.hpp"
#include "odbatch/source/conversation.hpp"

namespace odbatch::actors {

// The reader announces every shard position it read, and how many parts (text plus one per
// image) will reach the joiner for it; a record rejected at the reader has no parts.
struct SampleStart {
  std::uint64_t seq = 0;  // position in this rank's epoch shard
  SampleId id = 0;
  std::uint32_t source_file = 0;
  std::uint64_t line = 0;
  std::uint32_t parts = 0;
  std::optional<Rejection> rejection;
};

struct TextTask {
  std::uint64_t seq = 0;
  SampleId id = 0;
  std::string where;  // "file:line"
  Conversation conversation;
  std::vector<std::uint32_t> visual_tokens;  // per image
};

struct ImageTask {
  std::uint64_t seq = 0;
  SampleId id = 0;
  std::uint32_t image = 0;  // index within the sample
  std::string path;
  std::shared_ptr<const std::vector<std::uint8_t>> jpeg;
};

struct TextDone {
  std::uint64_t seq = 0;
  std::shared_ptr<SamplePayload> sample;  // tokenized, its images still to come; null when rejected
  std::optional<Rejection> rejection;
};

struct ImageDone {
  std::uint64_t seq = 0;
  std::uint32_t image = 0;
  std::shared_ptr<DecodedImage> decoded;  // null when rejected
  std::optional<Rejection> rejection;
};

// A sample leaving the joiner in shard order: complete, or rejected.
struct Joined {
  std::shared_ptr<const SamplePayload> sample;  // null when rejected
  std::optional<Rejection> rejection;
};

// One step for the emitter: its rows (none when IDLE), metadata, and its round's record.
struct StepWork {
  std::vector<std::shared_ptr<const SamplePayload>> rows;
  StepInfo info;
  std::shared_ptr<const RoundRecord> round;
};

using SampleStartPtr = std::shared_ptr<const SampleStart>;
using TextTaskPtr = std::shared_ptr<const TextTask>;
using ImageTaskPtr = std::shared_ptr<const ImageTask>;
using TextDonePtr = std::shared_ptr<const TextDone>;
using ImageDonePtr = std::shared_ptr<const ImageDone>;
using JoinedPtr = std::shared_ptr<const Joined>;
using StepWorkPtr = std::shared_ptr<const StepWork>;
using ProposalPtr = std::shared_ptr<const Proposal>;
using RoundPlanPtr = std::shared_ptr<const RoundPlan>;

using text_demand_atom = caf::atom_constant<caf::atom("tdemand")>;
using image_demand_atom = caf::atom_constant<caf::atom("idemand")>;
using read_atom = caf::atom_constant<caf::atom("read")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using want_atom = caf::atom_constant<caf::atom("want")>;
using admit_atom = caf::atom_constant<caf::atom("admit")>;
using restore_atom = caf::atom_constant<caf::atom("restore")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using open_atom = caf::atom_constant<caf::atom("open")>;
using primed_atom = caf::atom_constant<caf::atom("primed")>;
using propose_atom = caf::atom_constant<caf::atom("propose")>;
using round_end_atom = caf::atom_constant<caf::atom("roundend")>;
using emitted_atom = caf::atom_constant<caf::atom("emitted")>;
using epoch_end_atom = caf::atom_constant<caf::atom("epochend")>;

}  // namespace odbatch::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::SampleStartPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::TextTaskPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::ImageTaskPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::TextDonePtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::ImageDonePtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::JoinedPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::StepWorkPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::ProposalPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::actors::RoundPlanPtr)
