// An image augmentation as a stage plugin: mirrors each image left to right with probability
// params.probability (0.5 by default), drawn from the sample's own generator, so that a rerun, any
// rank and a resume flip the same images. The grid stays, so the sample's cost does too.
#include <memory>
#include <utility>

#include "odbatch/stage.hpp"

namespace {

void mirror(odbatch::StageSampleImage& image) {
  const std::size_t row_bytes = std::size_t{image.width} * 3;
  for (std::uint32_t y = 0; y < image.height; ++y) {
    auto* row = image.rgb.data() + y * row_bytes;
    for (std::uint32_t left = 0, right = image.width - 1; left < right; ++left, --right)
      for (int c = 0; c < 3; ++c) std::swap(row[left * 3 + c], row[right * 3 + c]);
  }
}

class RandomFlip final : public odbatch::SampleStage {
 public:
  explicit RandomFlip(double probability) : probability_(probability) {}

  odbatch::StageVerdict process(odbatch::StageSample& sample,
                                odbatch::StageContext& context) override {
    for (auto& image : sample.images)
      if (context.random().bernoulli(probability_)) mirror(image);
    return odbatch::keep();
  }

 private:
  double probability_;
};

void register_stages(odbatch::StageRegistry& registry) {
  registry.add_sample_stage("random_flip", "1.0", [](const odbatch::StageParams& params) {
    const double probability = params.number("probability", 0.5);
    if (!(probability >= 0.0 && probability <= 1.0))
      throw odbatch::StageParamError("params.probability: must be between 0 and 1");
    return std::make_unique<RandomFlip>(probability);
  });
}

}  // namespace

ODBATCH_STAGE_PLUGIN(register_stages)
