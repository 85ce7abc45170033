// End-to-end tests of `odbatch stats` on the bundled dataset (skipped when tools/prepare-data.sh
// has not built it): lengths of every sample, rejections, the trace file `simulate` reads back.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "json_convention.hpp"
#include "test_skip.hpp"

namespace {

namespace fs = std::filesystem;
using namespace odbatch::test;
using nlohmann::json;

const fs::path kData = ODBATCH_DATA_DIR;
const fs::path kModel = kData / "tokenizer" / "odbatch-unigram-8k.model";

bool data_built() {
  if (fs::exists(kData / "dirty" / "dirty.jsonl") && fs::exists(kModel) &&
      fs::exists(kData / "sft" / "mixed.jsonl"))
    return true;
  ::odbatch::test::report_skip("dataset",
                               kData.string() + " is not built (tools/prepare-data.sh builds it)");
  return false;
}

// The example pipeline over the dataset's dirty subset (good and bad records), window 32, with
// `replaced` lines (a key's whole line, by the key) instead of the example's.
fs::path dirty_pipeline(const std::map<std::string, std::string>& replaced = {}) {
  std::istringstream example(read_file(fs::path(ODBATCH_EXAMPLES_DIR) / "pipeline.toml"));
  std::string config, line;
  while (std::getline(example, line)) {
    if (line.rfind("files =", 0) == 0)
      line = "files = [\"" + (kData / "dirty" / "dirty.jsonl").string() + "\"]";
    else if (line.rfind("image_root =", 0) == 0)
      line = "image_root = \"" + (kData / "dirty" / "images").string() + "\"";
    else if (line.rfind("model =", 0) == 0)
      line = "model = \"" + kModel.string() + "\"";
    else if (line.rfind("window =", 0) == 0)
      line = "window = 32";
    else if (line.rfind("lookahead =", 0) == 0)
      continue;
    for (const auto& [key, replacement] : replaced)
      if (line.rfind(key + " =", 0) == 0) line = replacement;
    config += line + "\n";
  }
  return scratch().write(replaced.empty() ? "stats-dirty.toml" : "stats-dirty-limited.toml",
                         config);
}

std::size_t line_count(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("stats reports every sample's lengths and the rejections of a pipeline") {
  if (!data_built()) return;
  const auto trace = scratch().path("dirty-trace.csv");
  const auto report = scratch().path("dirty-stats.json");
  const auto run = run_cli("stats " + shell_quoted(dirty_pipeline()) + " --bins 5 --trace " +
                           shell_quoted(trace) + " --json " + shell_quoted(report));
  REQUIRE_MESSAGE(run.status == 0, run.out, run.err);
  const json j = json::parse(read_file(report));
  odbatch::test::check_report_convention(read_file(report), "stats");
  const auto samples = j["samples"].get<std::size_t>();
  CHECK(samples > 0);
  CHECK(j["rejected"]["total"].get<std::size_t>() > 0);
  CHECK(samples + j["rejected"]["total"].get<std::size_t>() == j["records"].get<std::size_t>());
  CHECK(j["samples_with_images"].get<std::size_t>() > 0);
  CHECK(j["tokens"]["count"] == samples);
  CHECK(j["tokens"]["min"].get<int>() >= 1);
  CHECK(j["tokens"]["histogram"].size() == 5);
  CHECK(j["patches"]["max"].get<int>() > 0);
  CHECK(run.out.find("tokens histogram") != std::string::npos);
  CHECK(run.out.find("token_budget") != std::string::npos);
  // One line per sample after the header, read back by simulate.
  CHECK(line_count(read_file(trace)) == samples + 1);
  const auto simulated =
      run_cli("simulate --trace " + shell_quoted(trace) + " --ranks 2 --window 16");
  CHECK_MESSAGE(simulated.status == 0, simulated.out, simulated.err);
}

TEST_CASE("stats says how many samples exceed max_seq_len, for an image or for their text") {
  if (!data_built()) return;
  // The model's real max_pixels makes photos thousands of tokens; a short max_seq_len under
  // over_length = "reject" rejects long texts too.
  const auto config =
      dirty_pipeline({{"max_pixels", "max_pixels = 12845056"},
                      {"max_seq_len", "max_seq_len = 300\nover_length = \"reject\""}});
  const auto report = scratch().path("dirty-limited-stats.json");
  const auto run = run_cli("stats " + shell_quoted(config) + " --json " + shell_quoted(report));
  REQUIRE_MESSAGE(run.status == 0, run.out, run.err);
  const json j = json::parse(read_file(report));
  const auto& over = j["over_max_seq_len"];
  CHECK(over["max_seq_len"] == 300);
  CHECK(over["images"].get<int>() > 0);
  CHECK(over["text"].get<int>() > 0);
  CHECK(over["images"].get<int>() + over["text"].get<int>() ==
        j["rejected"]["by_reason"]["over_length"].get<int>());
  CHECK(run.out.find("over max_seq_len 300: " + std::to_string(over["images"].get<int>()) +
                     " for an image (lower images.max_pixels), " +
                     std::to_string(over["text"].get<int>()) + " for their text") !=
        std::string::npos);
}

TEST_CASE("stats reads a JSONL dataset with the pipeline's defaults") {
  if (!data_built()) return;
  // More records than the default window (1024), so the first round fills a whole window.
  std::istringstream all(read_file(kData / "sft" / "mixed.jsonl"));
  std::string subset, line;
  for (int i = 0; i < 1100 && std::getline(all, line); ++i) subset += line + "\n";
  const auto dataset = scratch().write("subset.jsonl", subset);
  const auto report = scratch().path("subset-stats.json");
  const auto run = run_cli("stats " + shell_quoted(dataset) + " --tokenizer " +
                           shell_quoted(kModel) + " --image-root " +
                           shell_quoted(kData / "images") + " --json " + shell_quoted(report));
  REQUIRE_MESSAGE(run.status == 0, run.out, run.err);
  const json j = json::parse(read_file(report));
  CHECK(j["records"] == 1100);
  CHECK(j["samples"].get<int>() + j["rejected"]["total"].get<int>() == 1100);
}

TEST_CASE("stats refuses inputs it cannot run") {
  auto run = run_cli("stats " + shell_quoted(scratch().write("plain.jsonl", "{}\n")));
  CHECK(run.status == 2);
  CHECK_MESSAGE(run.err.find("needs --tokenizer MODEL") != std::string::npos, run.err);
  run = run_cli("stats " + shell_quoted(scratch().path("absent.toml")));
  CHECK(run.status == 2);
  CHECK_MESSAGE(run.err.find("absent.toml") != std::string::npos, run.err);
}

TEST_CASE("stats --plot draws the token-length histogram with gnuplot as SVG or PNG") {
  if (!data_built()) return;
  REQUIRE_MESSAGE(std::system("command -v gnuplot >/dev/null") == 0,
                  "gnuplot is not installed (tools/install-deps.sh installs gnuplot-nox)");
  const auto svg = scratch().path("dirty-lengths.svg");
  const auto drawn =
      run_cli("stats " + shell_quoted(dirty_pipeline()) + " --plot " + shell_quoted(svg));
  REQUIRE_MESSAGE(drawn.status == 0, drawn.out, drawn.err);
  const auto text = read_file(svg);
  CHECK(text.size() > 4000);
  CHECK((text.rfind("<?xml", 0) == 0 || text.rfind("<svg", 0) == 0));
  CHECK((text.find("<path") != std::string::npos || text.find("<polyline") != std::string::npos));
  // The example pipeline's budget and the test's window of 32 are marked.
  CHECK(text.find("token budget 4096") != std::string::npos);
  CHECK(text.find("window 32 samples per round") != std::string::npos);

  const auto png = scratch().path("dirty-lengths.png");
  const auto drawn_png =
      run_cli("stats " + shell_quoted(dirty_pipeline()) + " --plot " + shell_quoted(png));
  REQUIRE_MESSAGE(drawn_png.status == 0, drawn_png.out, drawn_png.err);
  const auto image = read_file(png);
  CHECK(image.size() > 4000);
  CHECK(image.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
}

TEST_CASE("stats --plot refuses a file that is neither .svg nor .png") {
  const auto pdf = scratch().path("lengths.pdf");
  const auto refused =
      run_cli("stats " + shell_quoted(dirty_pipeline()) + " --plot " + shell_quoted(pdf));
  CHECK(refused.status == 2);
  CHECK(refused.err.find("--plot writes .svg or .png") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(pdf));
}
