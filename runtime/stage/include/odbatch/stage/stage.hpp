#pragma once
// User stages: code a pipeline runs on every record or sample, at one of two places of the actor
// graph (docs/stages.md):
//   record stages, after parsing and before tokenization: see and change the conversation, its
//     images (named, with their header's size) and other fields, set template variables, or
//     reject the record;
//   sample stages, after tokenization and image decoding and before the packer: see and change
//     token ids, labels and uint8 pixels, or reject the sample. The sample's shape (its token
//     count, images and their grids) decided its cost and is fixed here: a cropping augmentation
//     changes the image list or names its box in a record stage.
// Each [[stage]] runs as a pool of `workers` actors, each with its own instance made by the
// stage's factory, so an instance is only ever called from one thread at a time. A stage rejects
// with a reason (counted as "<stage>:<reason>", in the ledger and the metrics); an exception it
// throws rejects the sample with the exception's message as "<stage>:exception".
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/core/split_mix64.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"
#include "odbatch/proto_msgs/stage_record.hpp"
#include "odbatch/proto_msgs/tokenized_sample.hpp"

namespace odbatch {

// One sample's random draws at one stage, seeded by (batching.seed, epoch, sample id, stage
// name): the same on a rerun, on any rank and after a resume onto any world size. A standard
// UniformRandomBitGenerator; its own helpers give the same values on every platform, which the
// standard library's distributions do not promise.
class StageRandom {
 public:
  using result_type = std::uint64_t;
  explicit StageRandom(std::uint64_t seed) : generator_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return generator_.next(); }

  double uniform() { return generator_.uniform(); }              // [0, 1)
  bool bernoulli(double p) { return generator_.uniform() < p; }  // true with probability p
  std::uint64_t below(std::uint64_t n);                          // [0, n), n > 0

 private:
  SplitMix64 generator_;
};

// What a stage call knows beside its input.
class StageContext {
 public:
  StageContext(std::string_view stage, std::uint64_t seed, std::uint64_t epoch, SampleId id)
      : stage_(stage), seed_(seed), epoch_(epoch), id_(id) {}

  std::string_view stage() const { return stage_; }  // the [[stage]] entry's name
  std::uint64_t epoch() const { return epoch_; }
  SampleId sample_id() const { return id_; }
  // This sample's generator at this stage, made on first use.
  StageRandom& random();

 private:
  std::string_view stage_;
  std::uint64_t seed_;
  std::uint64_t epoch_;
  SampleId id_;
  std::optional<StageRandom> random_;
};

// A stage's rejection: `reason` a short name (letters, digits, '_', '-', '.'; at most 64
// bytes), counted as "<stage>:<reason>"; `detail` says what and why for the log and the ledger
// (cut at 1024 bytes).
struct StageReject {
  std::string reason;
  std::string detail;
};

// What a stage returns: keep() the (possibly changed) input, or reject(reason, detail).
using StageVerdict = std::optional<StageReject>;
inline StageVerdict keep() {
  return std::nullopt;
}
inline StageVerdict reject(std::string reason, std::string detail = {}) {
  return StageReject{std::move(reason), std::move(detail)};
}

// An image of a sample at a sample stage: its size and grid are fixed, its pixels may change.
struct StageSampleImage {
  ImageGrid grid;
  std::uint32_t width = 0;      // resized
  std::uint32_t height = 0;     // resized
  std::span<std::uint8_t> rgb;  // height * width * 3 bytes, row-major HWC, RGB
};

// A tokenized and decoded sample at a sample stage. Values may change, lengths may not.
struct StageSample {
  SampleId id = 0;
  std::string_view where;    // "file:line"
  std::uint32_t source = 0;  // 0: source.files; i: the i-th [[source.mix]] entry
  std::span<std::int32_t> input_ids;
  // kIgnoreLabel (-100) where the loss ignores a position; not shifted. Masking a turn here
  // lowers the sample's label count, which the packer sees.
  std::span<std::int32_t> labels;
  std::span<const ImageSpan> image_spans;  // where each image's tokens sit in input_ids
  std::span<StageSampleImage> images;
};

// A stage broke its contract in a way no sample can be blamed for (an adapter found a sample's
// shape changed): fails the epoch naming the stage, where any other exception rejects the one
// sample.
class StageContractError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class RecordStage {
 public:
  virtual ~RecordStage() = default;
  virtual StageVerdict process(StageRecord& record, StageContext& context) = 0;
};

class SampleStage {
 public:
  virtual ~SampleStage() = default;
  virtual StageVerdict process(StageSample& sample, StageContext& context) = 0;
};

}  // namespace odbatch
