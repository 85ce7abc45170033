#include <doctest/doctest.h>

#include <string>

#include "odbatch/stage/stage_plugin.hpp"

using namespace odbatch;

namespace {

std::string load_error(const std::filesystem::path& file) {
  try {
    load_stage_plugin(file);
  } catch (const StagePluginError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a stage plugin's types load with their versions, reasons and factories") {
  const auto registry = load_stage_plugin(TEST_PLUGIN);
  CHECK(registry.names() == std::vector<std::string>{"max_tokens", "shout"});
  const auto* shout = registry.find("shout");
  REQUIRE(shout != nullptr);
  CHECK(shout->kind == StageKind::record);
  CHECK(shout->version == "2.1");
  CHECK(shout->origin == std::string("plugin ") + TEST_PLUGIN);
  auto stage = shout->make_record({});
  StageRecord record;
  record.messages = {{Role::user, "hi"}, {Role::assistant, "hello"}};
  StageContext context("shout", 1, 0, 5);
  CHECK(!stage->process(record, context));
  CHECK(record.messages[1].content == "HELLO");
  const auto* max_tokens = registry.find("max_tokens");
  REQUIRE(max_tokens != nullptr);
  CHECK(max_tokens->reasons == std::vector<std::string>{"too_long"});
  CHECK_THROWS_AS(max_tokens->make_sample({}), StageParamError);
}

TEST_CASE("a plugin built for another odbatch version is refused, naming both versions") {
  const auto error = load_error(OTHER_VERSION_PLUGIN);
  CAPTURE(error);
  CHECK(error.find(OTHER_VERSION_PLUGIN) != std::string::npos);
  CHECK(error.find("built for odbatch 0.0.1-other, this is odbatch " ODBATCH_VERSION) !=
        std::string::npos);
}

TEST_CASE("what is not a loadable stage plugin is refused naming the file and why") {
  const auto missing = load_error("/nonexistent/plugin.so");
  CHECK(missing.find("/nonexistent/plugin.so: cannot load") != std::string::npos);
  const auto not_plugin = load_error(NOT_A_PLUGIN);
  CAPTURE(not_plugin);
  CHECK(not_plugin.find("cannot load") != std::string::npos);
}
