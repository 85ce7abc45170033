// `odbatch graph`: the graph it draws is the one the pipeline spawns (node for node, actor for
// actor), in every format; with a metrics endpoint each stage gets a rate and a blocked share.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "cli_test_support.hpp"
#include "odbatch/actors/pipeline.hpp"
#include "odbatch/stage/stage.hpp"

namespace odbatch {
namespace {

class Keep : public RecordStage {
 public:
  StageVerdict process(StageRecord&, StageContext&) override { return keep(); }
};

// A pipeline file with a record stage registered in code ("keep", 3 workers) and the example
// quality filter plugin (2 workers), over the dataset's first records.
std::filesystem::path stages_config(const std::string& extra = "") {
  const auto& s = test::scratch();
  std::string records;
  {
    std::ifstream in(std::filesystem::path(ODBATCH_DATA_DIR) / "sft/mixed.jsonl");
    std::string line;
    for (int i = 0; i < 300 && std::getline(in, line); ++i) records += line + "\n";
  }
  const auto data = s.write("graph-records.jsonl", records);
  return s.write("graph.toml",
                 test::source_and_tokenizer_toml(data, ODBATCH_DATA_DIR) +
                     "[images]\nworkers = 2\nmax_pixels = 200704\n"
                     "[batching]\ntoken_budget = 4096\nwindow = 64\n" +
                     extra +
                     "[[stage]]\nname = \"keep\"\nkind = \"record\"\nworkers = 3\n"
                     "[[stage]]\nname = \"quality\"\nkind = \"sample\"\ntype = \"quality_filter\"\n"
                     "plugin = \"" ODBATCH_QUALITY_FILTER
                     "\"\nworkers = 2\n"
                     "[stage.params]\nmin_tokens = 4\n");
}

PipelineOptions keep_stage() {
  PipelineOptions options;
  options.stages.add_record_stage("keep", "1",
                                  [](const StageParams&) { return std::make_unique<Keep>(); });
  return options;
}

}  // namespace

TEST_CASE("odbatch graph draws the actors the pipeline spawns") {
  const auto config = stages_config();
  const auto run = test::run_cli("graph " + test::shell_quoted(config) + " --format json");
  INFO(run.err);
  REQUIRE(run.status == 0);
  const auto report = run.report();
  Pipeline pipeline(PipelineConfig::from_toml_file(config), DistEnv::single(), keep_stage());
  pipeline.start_epoch(0);
  const auto spawned = pipeline.spawned_actors();
  REQUIRE(spawned.size() == report["nodes"].size());
  std::uint32_t actors = 0;
  for (std::size_t i = 0; i < spawned.size(); ++i) {
    CAPTURE(spawned[i].first);
    CHECK(report["nodes"][i]["name"] == spawned[i].first);
    CHECK(report["nodes"][i]["actors"] == spawned[i].second);
    actors += spawned[i].second;
  }
  // reader, a tokenizer, 2 decoders, joiner, packer, aligner, coordinator, emitter, and the
  // stages' dispatchers and workers.
  CHECK(actors == 9 + 4 + 3);
  CHECK(report["nodes"][1]["name"] == "keep");
  CHECK(report["nodes"][1]["role"] == "record_stage");
  bool staged_back = false;
  for (const auto& edge : report["edges"])
    staged_back |= edge["from"] == "quality" && edge["to"] == "joiner";
  CHECK(staged_back);
  while (pipeline.next_batch()) {
  }
}

TEST_CASE("odbatch graph writes text, Graphviz DOT and SVG, and refuses a bad config") {
  const auto config = stages_config();
  const auto text = test::run_cli("graph " + test::shell_quoted(config));
  CHECK(text.status == 0);
  CHECK(text.out.find("16 actors") != std::string::npos);
  CHECK(text.out.find("quality          sample_stage") != std::string::npos);
  const auto dot = test::run_cli("graph " + test::shell_quoted(config) + " --format dot");
  CHECK(dot.status == 0);
  CHECK(dot.out.starts_with("digraph odbatch {"));
  CHECK(dot.out.find("\"joiner\" -> \"reader\" [label=\"credits <= ") != std::string::npos);
  const auto svg_file = test::scratch().path("graph.svg");
  const auto svg = test::run_cli("graph " + test::shell_quoted(config) + " --format svg --output " +
                                 test::shell_quoted(svg_file));
  CHECK(svg.status == 0);
  const auto drawn = test::read_file(svg_file);
  CHECK(drawn.find("<svg") != std::string::npos);
  CHECK(drawn.find(">quality</text>") != std::string::npos);
  const auto bad = test::scratch().write("bad-graph.toml", "[[stage]]\nname = \"x\"\n");
  const auto refused = test::run_cli("graph " + test::shell_quoted(bad));
  CHECK(refused.status == 2);
  CHECK(refused.err.find("stage[0].kind") != std::string::npos);
}

TEST_CASE("odbatch graph --metrics adds each stage's rate and blocked share") {
  const auto config = stages_config("[metrics]\nenabled = true\n");
  Pipeline pipeline(PipelineConfig::from_toml_file(config), DistEnv::single(), keep_stage());
  const auto url = "http://127.0.0.1:" + std::to_string(pipeline.metrics_port()) + "/metrics";
  pipeline.start_epoch(0);
  const auto run = test::run_cli("graph " + test::shell_quoted(config) +
                                 " --format json --interval-ms 300 " + "--metrics " + url);
  INFO(run.err);
  REQUIRE(run.status == 0);
  const auto report = run.report();
  for (const auto& node : report["nodes"]) {
    if (node["role"] == "trainer") continue;
    CAPTURE(node["name"]);
    CHECK(node.contains("items_per_second"));
    CHECK(node["items_per_second"].get<double>() >= 0.0);
    CHECK(node.contains("blocked_share"));
  }
  while (pipeline.next_batch()) {
  }
  const auto unreachable = test::run_cli("graph " + test::shell_quoted(config) +
                                         " --metrics http://127.0.0.1:1/metrics");
  CHECK(unreachable.status == 2);
  CHECK(unreachable.err.find("http://127.0.0.1:1/metrics") != std::string::npos);
}

}  // namespace odbatch
