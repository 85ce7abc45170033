#include "odbatch/stage/stage_registry.hpp"

#include <stdexcept>

namespace odbatch {

std::string_view to_string(StageKind kind) {
  return kind == StageKind::record ? "record" : "sample";
}

namespace {

StageType type_of(std::string name, StageKind kind, std::string version,
                  std::vector<std::string> reasons) {
  StageType type;
  type.name = std::move(name);
  type.kind = kind;
  type.version = std::move(version);
  type.reasons = std::move(reasons);
  type.origin = "registered in code";
  return type;
}

}  // namespace

void StageRegistry::add_record_stage(std::string name, std::string version,
                                     RecordStageFactory factory, std::vector<std::string> reasons) {
  auto type = type_of(std::move(name), StageKind::record, std::move(version), std::move(reasons));
  type.make_record = std::move(factory);
  add(std::move(type));
}

void StageRegistry::add_sample_stage(std::string name, std::string version,
                                     SampleStageFactory factory, std::vector<std::string> reasons) {
  auto type = type_of(std::move(name), StageKind::sample, std::move(version), std::move(reasons));
  type.make_sample = std::move(factory);
  add(std::move(type));
}

void StageRegistry::add(StageType type) {
  if (type.name.empty()) throw std::invalid_argument("a stage type needs a name");
  if (type.kind == StageKind::record ? !type.make_record : !type.make_sample)
    throw std::invalid_argument("stage type " + type.name + ": no factory for a " +
                                std::string(to_string(type.kind)) + " stage");
  auto name = type.name;
  types_.insert_or_assign(std::move(name), std::move(type));
}

void StageRegistry::merge(const StageRegistry& other) {
  for (const auto& [name, type] : other.types_) types_.insert_or_assign(name, type);
}

const StageType* StageRegistry::find(std::string_view name) const {
  const auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}

std::vector<std::string> StageRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, type] : types_) out.push_back(name);
  return out;
}

}  // namespace odbatch
