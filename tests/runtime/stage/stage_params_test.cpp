#include <doctest/doctest.h>

#include "odbatch/stage/stage_params.hpp"
#include "odbatch/stage/stage_registry.hpp"

using namespace odbatch;

TEST_CASE("stage params give typed values with fallbacks and name the key on a wrong type") {
  StageParams params;
  params.set("min_tokens", std::int64_t{8});
  params.set("p", 0.25);
  params.set("label", std::string("x"));
  params.set("on", true);
  params.set("words", std::vector<StageParamScalar>{std::string("a"), std::string("b")});
  CHECK(params.integer("min_tokens", 1) == 8);
  CHECK(params.integer("absent", 3) == 3);
  CHECK(params.number("p", 0.0) == 0.25);
  CHECK(params.number("min_tokens", 0.0) == 8.0);  // an integer is a number too
  CHECK(params.text("label", "") == "x");
  CHECK(params.flag("on", false));
  CHECK(params.texts("words") == std::vector<std::string>{"a", "b"});
  CHECK(params.texts("absent").empty());
  CHECK_THROWS_WITH_AS(params.integer("label", 0),
                       "params.label: expected an integer, got a string", StageParamError);
  CHECK_THROWS_WITH_AS(params.integer("nope"), "params.nope: missing (expected an integer)",
                       StageParamError);
  CHECK_THROWS_WITH_AS(params.flag("p", false), "params.p: expected true or false, got a float",
                       StageParamError);
  CHECK_THROWS_AS(params.texts("label"), StageParamError);
}

TEST_CASE("stage params' canonical text is key-ordered, exact and escapes what it quotes") {
  StageParams params;
  params.set("z", std::string("a\"b\n"));
  params.set("a", 0.1);
  params.set("m", std::vector<StageParamScalar>{std::int64_t{1}, false});
  CHECK(params.canonical() == "{ a = 0.10000000000000001, m = [1, false], z = \"a\\\"b\\u000a\" }");
  CHECK(StageParams().canonical() == "{}");
  StageParams other = params;
  other.set("a", 0.1);
  CHECK(other.canonical() == params.canonical());
  other.set("a", 0.10000000000000002);  // the next double
  CHECK(other.canonical() != params.canonical());
}

namespace {

class Identity : public RecordStage {
 public:
  StageVerdict process(StageRecord&, StageContext&) override { return keep(); }
};

}  // namespace

TEST_CASE("the stage registry finds types by name, replaces a name registered again, merges") {
  StageRegistry registry;
  registry.add_record_stage("identity", "1",
                            [](const StageParams&) { return std::make_unique<Identity>(); });
  REQUIRE(registry.find("identity") != nullptr);
  CHECK(registry.find("identity")->kind == StageKind::record);
  CHECK(registry.find("identity")->version == "1");
  CHECK(registry.find("other") == nullptr);
  registry.add_record_stage("identity", "2",
                            [](const StageParams&) { return std::make_unique<Identity>(); });
  CHECK(registry.find("identity")->version == "2");
  StageRegistry more;
  more.add_sample_stage("s", "1",
                        [](const StageParams&) -> std::unique_ptr<SampleStage> { return nullptr; });
  registry.merge(more);
  CHECK(registry.names() == std::vector<std::string>{"identity", "s"});
  StageType no_factory;
  no_factory.name = "broken";
  no_factory.kind = StageKind::sample;
  CHECK_THROWS_AS(registry.add(no_factory), std::invalid_argument);
}
