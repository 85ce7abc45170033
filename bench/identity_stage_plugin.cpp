// Stages that keep every record and sample unchanged, as a plugin: what a stage costs the
// pipeline beyond its own work (stage_overhead_bench.py).
#include <memory>

#include "odbatch/stage.hpp"

namespace {

class IdentityRecord final : public odbatch::RecordStage {
 public:
  odbatch::StageVerdict process(odbatch::StageRecord&, odbatch::StageContext&) override {
    return odbatch::keep();
  }
};

class IdentitySample final : public odbatch::SampleStage {
 public:
  odbatch::StageVerdict process(odbatch::StageSample&, odbatch::StageContext&) override {
    return odbatch::keep();
  }
};

void register_stages(odbatch::StageRegistry& registry) {
  registry.add_record_stage("identity_record", "1", [](const odbatch::StageParams&) {
    return std::make_unique<IdentityRecord>();
  });
  registry.add_sample_stage("identity_sample", "1", [](const odbatch::StageParams&) {
    return std::make_unique<IdentitySample>();
  });
}

}  // namespace

ODBATCH_STAGE_PLUGIN(register_stages)
