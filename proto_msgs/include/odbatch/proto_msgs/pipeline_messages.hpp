#pragma once
// What the pipeline's actors send each other, as plain values (the actors' typed interfaces, and
// the atoms that tag the other messages: actor_interfaces.hpp). Large parts travel inside them
// as shared pointers: every actor lives in one process, so samples are never copied between
// stages.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "odbatch/core/conversation.hpp"
#include "odbatch/core/rejection.hpp"
#include "odbatch/core/round_record.hpp"
#include "odbatch/core/sample.hpp"
#include "odbatch/core/step_info.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"
#include "odbatch/proto_msgs/sample_payload.hpp"
#include "odbatch/proto_msgs/stage_record.hpp"

namespace odbatch {

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
  std::uint32_t source = 0;  // 0: source.files; i: the i-th [[source.mix]] entry
  std::string where;         // "file:line"
  Conversation conversation;
  std::vector<std::uint32_t> visual_tokens;               // per image
  std::map<std::string, std::string> template_variables;  // set by record stages
};

// An image file a record names, read before the record stages: its bytes and its header's size.
struct LoadedImage {
  std::string path;
  std::shared_ptr<const std::vector<std::uint8_t>> bytes;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

// A record on its way through the record stages, from the reader back to the reader; once
// rejected it skips the stages left.
struct RecordWork {
  std::uint64_t seq = 0;
  StageRecord record;
  std::vector<LoadedImage> loaded;  // the images the record named when it was read
  std::optional<Rejection> rejection;
};

// A complete sample on its way through the sample stages, from the joiner back to the joiner;
// once rejected it skips the stages left.
struct SampleWork {
  std::uint64_t seq = 0;
  std::uint32_t source = 0;               // 0: source.files; i: the i-th [[source.mix]] entry
  std::shared_ptr<SamplePayload> sample;  // null once rejected
  std::optional<Rejection> rejection;
};

struct ImageTask {
  std::uint64_t seq = 0;
  SampleId id = 0;
  std::uint32_t image = 0;  // index within the sample
  std::string path;
  std::shared_ptr<const std::vector<std::uint8_t>> jpeg;
  std::optional<ImageCrop> crop;  // a record stage's
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

}  // namespace odbatch
