// End-to-end tests of `odbatch simulate`: synthetic and trace workloads, the report's accounting,
// calibration, and every kind of bad input (status 2 with a message naming the problem).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "json_convention.hpp"

namespace {

using namespace odbatch::test;
using nlohmann::json;

// A hand-written trace: 40 samples of 10 to 400 tokens, every fifth with an image.
std::string small_trace() {
  std::string text = "id,tokens,labels,patches\n";
  for (int i = 0; i < 40; ++i)
    text += std::to_string(100 + i) + "," + std::to_string(10 + 10 * i) + "," +
            std::to_string(5 + i) + "," + std::to_string(i % 5 == 0 ? 256 : 0) + "\n";
  return text;
}

void check_input_error(const CliRun& run, const std::string& message) {
  CHECK(run.status == 2);
  CHECK_MESSAGE(run.err.find(message) != std::string::npos, run.err);
}

}  // namespace

TEST_CASE("simulate a synthetic workload: every schedule accounts for every sample") {
  const auto report = scratch().path("simulate.json");
  const auto run = run_cli(
      "simulate --dist lognormal:mean=400,cv=0.5 --samples 3000 --ranks 4 --nodes 2 "
      "--window 128 --token-budget 4096 --name small --json " +
      shell_quoted(report));
  REQUIRE_MESSAGE(run.status == 0, run.out, run.err);
  CHECK(run.out.find("SIMULATED") != std::string::npos);
  CHECK(run.out.find("ODB balanced") != std::string::npos);
  const json j = json::parse(read_file(report));
  odbatch::test::check_report_convention(read_file(report), "simulate");
  CHECK(j["simulated"] == true);
  CHECK(j["accounting_ok"] == true);
  CHECK(j["workload"]["name"] == "small");
  CHECK(j["workload"]["samples"] == 3000);
  CHECK(j["setting"]["world"] == 4);
  CHECK(j["setting"]["ranks_per_node"] == 2);
  CHECK(j["cost_model"]["name"] == "2b");
  REQUIRE(j["results"].size() == 8);
  CHECK(j["results"][0]["scheduler"] == "Standard bs=1");
  CHECK(j["results"][0]["speedup_over_standard"] == 1.0);
  for (const auto& r : j["results"]) {
    CAPTURE(r["scheduler"].get<std::string>());
    CHECK(r["samples_emitted"] == 3000);
    CHECK(r["samples_lost"] == 0);
    CHECK(r["samples_duplicated"] == 0);
    CHECK(r["steps_equal_across_ranks"] == true);
  }
  const auto& balanced = j["results"][7];
  CHECK(balanced["scheduler"] == "ODB balanced");
  CHECK(balanced["audit_problems"] == 0);
  CHECK(balanced["steps"].get<int>() >= j["oracles"]["lb_steps"].get<int>());
  // The headline puts ODB beside the best fixed batch size and the offline packing baselines,
  // with the ratios of the report's samples per second.
  double best_standard = 0;
  std::string best_name;
  for (const auto& r : j["results"])
    if (r["kind"] == "standard" && r["samples_per_second"].get<double>() > best_standard) {
      best_standard = r["samples_per_second"].get<double>();
      best_name = r["scheduler"].get<std::string>();
    }
  char expected[160];
  std::snprintf(expected, sizeof expected, "ODB balanced: %.2fx the best fixed batch size (%s), ",
                balanced["samples_per_second"].get<double>() / best_standard, best_name.c_str());
  CHECK_MESSAGE(run.out.find(expected) != std::string::npos, run.out);
  const auto& gmt = j["results"][4];
  CHECK(gmt["scheduler"] == "GMT");
  std::snprintf(
      expected, sizeof expected, ", %.2fx GMT (offline sorted token-budget packing",
      balanced["samples_per_second"].get<double>() / gmt["samples_per_second"].get<double>());
  CHECK_MESSAGE(run.out.find(expected) != std::string::npos, run.out);
  CHECK(run.out.find("x BMT (offline bucketed token-budget packing") != std::string::npos);
}

TEST_CASE("simulate a length trace, with a calibrated cost model") {
  const auto trace = scratch().write("lengths.csv", small_trace());
  const auto report = scratch().path("trace.json");
  const auto run = run_cli("simulate --trace " + shell_quoted(trace) +
                           " --ranks 2 --token-budget 1024 --window 16 --batch-sizes 1,4 "
                           "--calibrate 1:0.5,10:3 --json " +
                           shell_quoted(report));
  REQUIRE_MESSAGE(run.status == 0, run.out, run.err);
  const json j = json::parse(read_file(report));
  CHECK(j["workload"]["name"] == "lengths");
  CHECK(j["workload"]["samples"] == 40);
  CHECK(j["workload"]["tokens"]["max"] == 400);
  CHECK(j["cost_model"]["name"] == "2b calibrated");
  CHECK(j["cost_model"]["calibrated_from"] == "1:0.5,10:3");
  REQUIRE(j["results"].size() == 2 + 4);
  CHECK(j["results"][1]["scheduler"] == "Standard bs=4");
  CHECK(j["accounting_ok"] == true);
}

TEST_CASE("simulate refuses malformed traces, naming file and line") {
  const auto simulate = [](const std::string& name, const std::string& text) {
    return run_cli("simulate --trace " + shell_quoted(scratch().write(name, text)));
  };
  check_input_error(simulate("header.csv", "id,tokens\n1,2\n"),
                    "header.csv:1: expected the header");
  check_input_error(simulate("fields.csv", "id,tokens,labels,patches\n1,2,3,4\n5,6,7\n"),
                    "fields.csv:3: expected four unsigned integers");
  check_input_error(simulate("negative.csv", "id,tokens,labels,patches\n1,-2,3,4\n"),
                    "negative.csv:2: expected four unsigned integers");
  check_input_error(simulate("duplicate.csv", "id,tokens,labels,patches\n1,2,3,4\n1,5,6,7\n"),
                    "duplicate.csv:3: id 1 appears twice");
  check_input_error(simulate("zero.csv", "id,tokens,labels,patches\n1,0,0,0\n"),
                    "zero.csv:2: a sample needs at least one token");
  check_input_error(simulate("empty.csv", "id,tokens,labels,patches\n"), "holds no sample");
  check_input_error(run_cli("simulate --trace " + shell_quoted(scratch().path("absent.csv"))),
                    "cannot read");
}

TEST_CASE("simulate refuses bad arguments") {
  check_input_error(run_cli("simulate --dist gamma:mean=3"), "expected lognormal:mean=M,cv=C");
  check_input_error(run_cli("simulate --dist lognormal:mean=400,sigma=2"),
                    "\"sigma=2\" is not one of mean, cv");
  check_input_error(run_cli("simulate --dist lognormal:mean=abc"), "is not a number");
  check_input_error(run_cli("simulate --dist bimodal:short_weight=1.5"),
                    "short_weight must be between 0 and 1");
  check_input_error(run_cli("simulate --dist lognormal:mean=400 --ranks 6 --nodes 4"),
                    "must be a positive multiple of --nodes");
  check_input_error(run_cli("simulate --dist lognormal:mean=400 --calibrate 1:0.5"),
                    "expected two points");
  check_input_error(run_cli("simulate --dist lognormal:mean=400 --calibrate 1:0.5,1:3"),
                    "need different samples per step");
  check_input_error(run_cli("simulate"), "give --trace or --dist");
  CHECK(run_cli("simulate --trace a.csv --dist lognormal:mean=400").status == 2);
  CHECK(run_cli("simulate --dist lognormal:mean=400 --model 70b").status == 2);
}

TEST_CASE("simulate --plot draws each schedule's speedup and padding efficiency as SVG or PNG") {
  REQUIRE_MESSAGE(std::system("command -v gnuplot >/dev/null") == 0,
                  "gnuplot is not installed (tools/install-deps.sh installs gnuplot-nox)");
  const std::string workload =
      "simulate --dist lognormal:mean=400,cv=0.8 --samples 2000 --ranks 4 --window 128 "
      "--token-budget 4096 --batch-sizes 2,4 --name plotted --plot ";
  const auto svg = scratch().path("schedules.svg");
  const auto drawn = run_cli(workload + shell_quoted(svg));
  REQUIRE_MESSAGE(drawn.status == 0, drawn.out, drawn.err);
  const auto text = read_file(svg);
  CHECK(text.size() > 4000);
  CHECK((text.rfind("<?xml", 0) == 0 || text.rfind("<svg", 0) == 0));
  CHECK((text.find("<path") != std::string::npos || text.find("<polyline") != std::string::npos));
  // Every schedule is a labelled bar; speedups are over the first Standard batch size given.
  for (const char* schedule : {"Standard bs=4", "GMT", "BMT", "ODB reference", "ODB balanced"})
    CHECK_MESSAGE(text.find(schedule) != std::string::npos, schedule);
  CHECK(text.find("samples/s over Standard bs=2") != std::string::npos);
  CHECK(text.find("window 128") != std::string::npos);

  const auto png = scratch().path("schedules.png");
  const auto drawn_png = run_cli(workload + shell_quoted(png));
  REQUIRE_MESSAGE(drawn_png.status == 0, drawn_png.out, drawn_png.err);
  const auto image = read_file(png);
  CHECK(image.size() > 4000);
  CHECK(image.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
}

TEST_CASE("simulate --plot refuses a file that is neither .svg nor .png") {
  const auto jpeg = scratch().path("schedules.jpg");
  const auto refused = run_cli("simulate --dist lognormal:mean=400,cv=0.5 --samples 100 --plot " +
                               shell_quoted(jpeg));
  check_input_error(refused, "--plot writes .svg or .png");
  CHECK_FALSE(std::filesystem::exists(jpeg));
}
