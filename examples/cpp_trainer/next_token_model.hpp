#pragma once
// A small next-token model, written plainly so that a step's cost grows with its tokens: an
// embedding of the current token, a linear layer and a softmax cross-entropy over the next
// token's class. Classes are the `classes - 1` lowest token ids (sentencepiece numbers its pieces
// from the most to the least likely) and one class for every other id.
#include <cstdint>
#include <filesystem>
#include <random>
#include <span>
#include <vector>

#include "odbatch/batch.hpp"

namespace odbatch_example {

struct ModelShape {
  std::uint32_t vocab = 0;  // rows of the embedding: token ids are below it
  std::uint32_t dim = 32;
  std::uint32_t classes = 512;
};

// The loss of the targets seen: its sum, and how many (for a mean).
struct LossSum {
  double sum = 0.0;
  std::uint64_t targets = 0;
};

class NextTokenModel {
 public:
  NextTokenModel(ModelShape shape, std::uint64_t seed);

  // Parameters and gradients share one flat layout: embedding [vocab x dim], weight
  // [dim x classes], bias [classes]; one allreduce sums a whole gradient.
  std::size_t parameter_count() const { return parameters_.size(); }
  std::span<const float> parameters() const { return parameters_; }

  // Adds `weight` times the gradient of the summed cross-entropy of every target of the batch
  // (position t predicts labels[t + 1] within its row; -100 is ignored) to `gradient`, and
  // returns the unweighted loss. A rank's mean loss times its loss scale is weight =
  // loss_scale / targets.
  LossSum accumulate(const odbatch::Batch& batch, float weight, std::span<float> gradient) const;

  // The targets of a batch as accumulate() counts them: labels other than -100 after the shift.
  static std::uint64_t count_targets(const odbatch::Batch& batch);

  void sgd_step(std::span<const float> gradient, float learning_rate);

  // The parameters as raw little-endian floats after their count; load() throws
  // std::runtime_error naming the file when it is unreadable or of another shape.
  void save(const std::filesystem::path& file) const;
  void load(const std::filesystem::path& file);

  const ModelShape& shape() const { return shape_; }

 private:
  std::uint32_t class_of(std::int32_t token) const;
  // Forward and backward of one target: input token, target class.
  double train_one(std::int32_t input, std::uint32_t target, float weight,
                   std::span<float> gradient, std::vector<float>& scratch) const;

  ModelShape shape_;
  std::vector<float> parameters_;
  std::size_t weight_offset_ = 0;
  std::size_t bias_offset_ = 0;
};

}  // namespace odbatch_example
