#include "next_token_model.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

namespace odbatch_example {
namespace {

constexpr std::int32_t kIgnored = -100;

// Calls visit(input, target_label) for every supervised target of the batch, in row order.
template <typename Visit>
void for_each_target(const odbatch::Batch& batch, Visit&& visit) {
  const auto ids = batch.input_ids();
  const auto labels = batch.labels();
  const auto visit_row = [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t + 1 < end; ++t)
      if (labels[t + 1] != kIgnored) visit(ids[t], labels[t + 1]);
  };
  if (batch.layout() == odbatch::BatchLayout::padded) {
    const std::size_t width = batch.seq_len();
    for (std::size_t row = 0; row < batch.rows(); ++row) visit_row(row * width, (row + 1) * width);
  } else {
    const auto bounds = batch.cu_seqlens();
    for (std::size_t row = 0; row + 1 < bounds.size(); ++row)
      visit_row(static_cast<std::size_t>(bounds[row]), static_cast<std::size_t>(bounds[row + 1]));
  }
}

}  // namespace

NextTokenModel::NextTokenModel(ModelShape shape, std::uint64_t seed) : shape_(shape) {
  if (shape_.vocab == 0 || shape_.dim == 0 || shape_.classes < 2)
    throw std::invalid_argument("model shape: vocab and dim must be positive, classes at least 2");
  weight_offset_ = std::size_t{shape_.vocab} * shape_.dim;
  bias_offset_ = weight_offset_ + std::size_t{shape_.dim} * shape_.classes;
  parameters_.assign(bias_offset_ + shape_.classes, 0.0f);
  std::mt19937_64 random(seed);
  std::normal_distribution<float> embedding(0.0f, 1.0f);
  std::normal_distribution<float> weight(0.0f, 1.0f / std::sqrt(static_cast<float>(shape_.dim)));
  for (std::size_t i = 0; i < weight_offset_; ++i) parameters_[i] = embedding(random);
  for (std::size_t i = weight_offset_; i < bias_offset_; ++i) parameters_[i] = weight(random);
}

std::uint32_t NextTokenModel::class_of(std::int32_t token) const {
  const auto other = shape_.classes - 1;
  return token >= 0 && static_cast<std::uint32_t>(token) < other ? static_cast<std::uint32_t>(token)
                                                                 : other;
}

std::uint64_t NextTokenModel::count_targets(const odbatch::Batch& batch) {
  std::uint64_t targets = 0;
  for_each_target(batch, [&](std::int32_t, std::int32_t) { ++targets; });
  return targets;
}

double NextTokenModel::train_one(std::int32_t input, std::uint32_t target, float weight,
                                 std::span<float> gradient, std::vector<float>& logits) const {
  if (input < 0 || static_cast<std::uint32_t>(input) >= shape_.vocab)
    throw std::out_of_range("token id " + std::to_string(input) + " outside the vocabulary of " +
                            std::to_string(shape_.vocab));
  const std::size_t dim = shape_.dim, classes = shape_.classes;
  const float* h = parameters_.data() + static_cast<std::size_t>(input) * dim;
  const float* w = parameters_.data() + weight_offset_;
  const float* b = parameters_.data() + bias_offset_;
  // logits = h W + b, row-major W [dim x classes] so the inner loops run over classes.
  std::copy(b, b + classes, logits.begin());
  for (std::size_t d = 0; d < dim; ++d) {
    const float hd = h[d];
    const float* w_row = w + d * classes;
    for (std::size_t c = 0; c < classes; ++c) logits[c] += hd * w_row[c];
  }
  const float top = *std::max_element(logits.begin(), logits.end());
  const double target_logit = static_cast<double>(logits[target] - top);
  double total = 0.0;
  for (auto& z : logits) {
    z = std::exp(z - top);
    total += z;
  }
  const double loss = std::log(total) - target_logit;  // -log softmax(target)
  // dlogits = softmax - onehot(target), scaled by the target's weight.
  const auto inverse_total = static_cast<float>(1.0 / total);
  for (auto& z : logits) z *= inverse_total * weight;
  logits[target] -= weight;
  float* g_h = gradient.data() + static_cast<std::size_t>(input) * dim;
  float* g_w = gradient.data() + weight_offset_;
  float* g_b = gradient.data() + bias_offset_;
  for (std::size_t c = 0; c < classes; ++c) g_b[c] += logits[c];
  for (std::size_t d = 0; d < dim; ++d) {
    const float hd = h[d];
    const float* w_row = w + d * classes;
    float* g_w_row = g_w + d * classes;
    float back = 0.0f;
    for (std::size_t c = 0; c < classes; ++c) {
      g_w_row[c] += hd * logits[c];
      back += w_row[c] * logits[c];
    }
    g_h[d] += back;
  }
  return loss;
}

LossSum NextTokenModel::accumulate(const odbatch::Batch& batch, float weight,
                                   std::span<float> gradient) const {
  if (gradient.size() != parameters_.size())
    throw std::invalid_argument("gradient of " + std::to_string(gradient.size()) +
                                " values for a model of " + std::to_string(parameters_.size()));
  std::vector<float> scratch(shape_.classes);
  LossSum loss;
  for_each_target(batch, [&](std::int32_t input, std::int32_t label) {
    loss.sum += train_one(input, class_of(label), weight, gradient, scratch);
    ++loss.targets;
  });
  return loss;
}

void NextTokenModel::sgd_step(std::span<const float> gradient, float learning_rate) {
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i] -= learning_rate * gradient[i];
}

void NextTokenModel::save(const std::filesystem::path& file) const {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  const std::uint64_t count = parameters_.size();
  out.write(reinterpret_cast<const char*>(&count), sizeof count);
  out.write(reinterpret_cast<const char*>(parameters_.data()),
            static_cast<std::streamsize>(count * sizeof(float)));
  if (!out.flush()) throw std::runtime_error(file.string() + ": cannot write the model");
}

void NextTokenModel::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::uint64_t count = 0;
  in.read(reinterpret_cast<char*>(&count), sizeof count);
  if (!in || count != parameters_.size())
    throw std::runtime_error(file.string() + ": not a model of " +
                             std::to_string(parameters_.size()) + " parameters");
  in.read(reinterpret_cast<char*>(parameters_.data()),
          static_cast<std::streamsize>(count * sizeof(float)));
  if (!in) throw std::runtime_error(file.string() + ": the model is cut short");
}

}  // namespace odbatch_example
