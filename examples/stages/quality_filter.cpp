// A quality filter as a stage plugin: rejects samples whose assistant text is shorter than
// params.min_tokens tokens (the positions the loss supervises), reason "too_short". A sample
// stage, so it counts the model's own tokens after the chat template.
#include <algorithm>
#include <memory>
#include <string>

#include "odbatch/stage.hpp"

namespace {

class QualityFilter final : public odbatch::SampleStage {
 public:
  explicit QualityFilter(std::int64_t min_tokens) : min_tokens_(min_tokens) {}

  odbatch::StageVerdict process(odbatch::StageSample& sample, odbatch::StageContext&) override {
    const auto tokens =
        std::count_if(sample.labels.begin(), sample.labels.end(),
                      [](std::int32_t label) { return label != odbatch::kIgnoreLabel; });
    if (tokens < min_tokens_)
      return odbatch::reject(
          "too_short",
          std::to_string(tokens) + " assistant tokens, fewer than " + std::to_string(min_tokens_));
    return odbatch::keep();
  }

 private:
  std::int64_t min_tokens_;
};

void register_stages(odbatch::StageRegistry& registry) {
  registry.add_sample_stage(
      "quality_filter", "1.0",
      [](const odbatch::StageParams& params) {
        const auto min_tokens = params.integer("min_tokens", 8);
        if (min_tokens < 0) throw odbatch::StageParamError("params.min_tokens: must be at least 0");
        return std::make_unique<QualityFilter>(min_tokens);
      },
      {"too_short"});
}

}  // namespace

ODBATCH_STAGE_PLUGIN(register_stages)
