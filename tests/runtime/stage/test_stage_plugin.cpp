// A stage plugin as ODBATCH_STAGE_PLUGIN makes one, with the version it claims set by the build:
// a record stage that upper-cases the assistant's text and a sample stage that rejects samples
// longer than params.max_tokens.
#include <algorithm>
#include <cctype>

#include "odbatch/stage/stage_plugin.hpp"

namespace {

class Shout : public odbatch::RecordStage {
 public:
  odbatch::StageVerdict process(odbatch::StageRecord& record, odbatch::StageContext&) override {
    for (auto& message : record.messages)
      if (message.role == odbatch::Role::assistant)
        std::transform(message.content.begin(), message.content.end(), message.content.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return odbatch::keep();
  }
};

class MaxTokens : public odbatch::SampleStage {
 public:
  explicit MaxTokens(std::int64_t max) : max_(max) {}
  odbatch::StageVerdict process(odbatch::StageSample& sample, odbatch::StageContext&) override {
    if (static_cast<std::int64_t>(sample.input_ids.size()) > max_)
      return odbatch::reject("too_long", std::to_string(sample.input_ids.size()) + " tokens");
    return odbatch::keep();
  }

 private:
  std::int64_t max_;
};

void register_stages(odbatch::StageRegistry& registry) {
  registry.add_record_stage("shout", "2.1",
                            [](const odbatch::StageParams&) { return std::make_unique<Shout>(); });
  registry.add_sample_stage("max_tokens", "1",
                            [](const odbatch::StageParams& params) {
                              return std::make_unique<MaxTokens>(params.integer("max_tokens"));
                            },
                            {"too_long"});
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const odbatch::StagePluginInfo*
odbatch_stage_plugin_v1() {
  static const odbatch::StagePluginInfo info{odbatch::kStagePluginAbi, PLUGIN_BUILT_FOR,
                                             &register_stages};
  return &info;
}
