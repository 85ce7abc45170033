// [[source.mix]]: further sources, each read once every epochs_per_pass epochs (or a fraction of
// it per epoch), with located errors for bad values, fractions that are not 1/n, and weights.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "toml_snippet.hpp"

namespace odbatch {
namespace {

constexpr std::string_view kMinimal = R"([source]
files = ["main.jsonl"]

[tokenizer]
model = "spm.model"
)";

PipelineConfig parse(const std::string& extra) {
  return test::parse_snippet(kMinimal, extra);
}

std::string error_of(const std::string& extra) {
  return test::snippet_error(kMinimal, extra);
}

}  // namespace

TEST_CASE("source.mix tables add sources in order, fraction = 1/n reads a source over n epochs") {
  CHECK(parse("").source.mix.empty());
  const auto c = parse(R"(
[[source.mix]]
files = ["more/*.jsonl", "https://example.org/shard-{0..3}.tar"]
epochs_per_pass = 4

[[source.mix]]
files = ["@list.txt"]

[[source.mix]]
files = ["third.json"]
fraction = 0.25
)");
  REQUIRE(c.source.mix.size() == 3);
  // The same syntax as source.files, resolved against the file's directory alike.
  const auto as_files = PipelineConfig::from_toml(
      "[source]\nfiles = [\"more/*.jsonl\", \"https://example.org/shard-{0..3}.tar\"]\n"
      "[tokenizer]\nmodel = \"spm.model\"\n",
      "q.toml", "/base");
  CHECK(c.source.mix[0].files == as_files.source.files);
  CHECK(c.source.mix[0].files.front() == "/base/more/*.jsonl");
  CHECK(c.source.mix[0].epochs_per_pass == 4);
  CHECK(c.source.mix[1].files == std::vector<std::string>{"/base/@list.txt"});
  CHECK(c.source.mix[1].epochs_per_pass == 1);
  CHECK(c.source.mix[2].epochs_per_pass == 4);
  CHECK(parse("[[source.mix]]\nfiles = [\"x\"]\nfraction = 1\n").source.mix[0].epochs_per_pass ==
        1);
  CHECK(parse("[[source.mix]]\nfiles = [\"x\"]\nfraction = 0.1\n").source.mix[0].epochs_per_pass ==
        10);
}

TEST_CASE("bad source.mix entries name the file, line and key") {
  // kMinimal holds 5 lines; the extra text starts on line 6.
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\nepochs_per_pass = 0\n") ==
        "p.toml:8:19: source.mix[0].epochs_per_pass: expected an integer between 1 and "
        "4294967296, got 0");
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\n[[source.mix]]\nfiles = [\"y\"]\n"
                 "epochs_per_pass = \"2\"\n") ==
        "p.toml:10:19: source.mix[1].epochs_per_pass: expected an integer");
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\nfraction = 0.4\n")
            .starts_with("p.toml:8:12: source.mix[0].fraction: expected 1 divided by a whole "
                         "number (0.5, 0.25, ...), got 0.4"));
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\nfraction = 1.5\n")
            .starts_with("p.toml:8:12: source.mix[0].fraction: expected a number above 0 and at "
                         "most 1"));
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\nfraction = 0.5\nepochs_per_pass = 2\n") ==
        "p.toml:8:12: source.mix[0].fraction: set either epochs_per_pass or fraction, not both");
  // A fraction below 1/2^32 is past epochs_per_pass's range, and the error names the key written.
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\nfraction = 1e-300\n") ==
        "p.toml:8:12: source.mix[0].fraction: expected at least 1/4294967296 "
        "(2.3283064365386963e-10), got 1e-300: a pass may take at most 4294967296 epochs");
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\nfraction = 9.094947017729282e-13\n") ==
        "p.toml:8:12: source.mix[0].fraction: expected at least 1/4294967296 "
        "(2.3283064365386963e-10), got 9.094947017729282e-13: a pass may take at most "
        "4294967296 epochs");
  CHECK(parse("[[source.mix]]\nfiles = [\"x\"]\nfraction = 2.3283064365386963e-10\n")
            .source.mix[0]
            .epochs_per_pass == 4294967296);
  const auto weight = error_of("[[source.mix]]\nfiles = [\"x\"]\nweight = 2.0\n");
  CHECK(
      weight.starts_with("p.toml:8:10: source.mix[0].weight: weights are not supported: a "
                         "source read more than once in an epoch would repeat sample ids"));
  CHECK(weight.find("epochs_per_pass above 1") != std::string::npos);
  CHECK(error_of("[[source.mix]]\nfiles = [\"x\"]\nepochs = 2\n") ==
        "p.toml:8:10: source.mix[0].epochs: unknown key");
  CHECK(error_of("[[source.mix]]\nepochs_per_pass = 2\n") ==
        "p.toml: source.mix[0].files: names no file");
  CHECK(error_of("[source.mix]\nfiles = [\"x\"]\n") ==
        "p.toml:6:1: source.mix: expected [[source.mix]] tables, each a further source with its "
        "files and epochs_per_pass");
}

TEST_CASE("the index holds source.files, then each mix entry's files, ids count on across them") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("odbatch-mix-config-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, int lines) {
    std::ofstream out(dir / name);
    for (int i = 0; i < lines; ++i) out << "{\"messages\": []}\n";
    return (dir / name).string();
  };
  const auto a = write("a.jsonl", 3), b = write("b.jsonl", 2), c = write("c.jsonl", 4);
  SourceConfig source;
  source.files = {a};
  CHECK(mixed_sources(source, build_dataset_index(source)).empty());
  source.mix = {{{b, c}, 3}, {{dir.string() + "/nothing*.jsonl"}, 1}};
  CHECK_THROWS_AS(build_dataset_index(source), DatasetError);  // a pattern that matches nothing
  source.mix.pop_back();
  const auto index = build_dataset_index(source);
  CHECK(index.record_count() == 9);
  CHECK(mixed_sources(source, index) == std::vector<MixedSource>{{0, 3, 1}, {3, 6, 3}});
  // The same file in two sources would be two records with one content: refused, named.
  source.mix.push_back({{a}, 2});
  try {
    build_dataset_index(source);
    FAIL("a file named by two sources was indexed");
  } catch (const DatasetError& e) {
    CHECK(std::string(e.what()).find("a.jsonl") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace odbatch

namespace odbatch {

TEST_CASE("[[source.mix]]: a source's own template and system prompt, over [tokenizer]'s") {
  const auto c = PipelineConfig::from_toml(
      "[source]\nfiles = [\"a.jsonl\"]\n[tokenizer]\nmodel = \"m.model\"\n"
      "system_prompt = \"base\"\n"
      "[[source.mix]]\nfiles = [\"b.jsonl\"]\nsystem_prompt = \"for b\"\n"
      "[[source.mix]]\nfiles = [\"c.jsonl\"]\ntemplate_file = \"chat.jinja\"\n"
      "template_name = \"tool_use\"\n"
      "[[source.mix]]\nfiles = [\"d.jsonl\"]\n",
      "mix.toml", "/base");
  CHECK(effective_tokenizer_options(c).default_system_prompt == "base");
  CHECK(effective_tokenizer_options(c, 1).default_system_prompt == "for b");
  CHECK(effective_tokenizer_options(c, 1).chat_template == ChatTemplate::chatml);
  const auto jinja = effective_tokenizer_options(c, 2);
  CHECK(jinja.chat_template == ChatTemplate::jinja);
  CHECK(jinja.template_file == "/base/chat.jinja");
  CHECK(jinja.template_name == "tool_use");
  CHECK(jinja.default_system_prompt == "base");
  CHECK(effective_tokenizer_options(c, 3) == effective_tokenizer_options(c));
  CHECK_THROWS_WITH_AS(
      PipelineConfig::from_toml("[source]\nfiles = [\"a\"]\n[tokenizer]\nmodel = \"m\"\n"
                                "[[source.mix]]\nfiles = [\"b\"]\ntemplate = \"mustache\"\n",
                                "bad.toml", "/"),
      "bad.toml:7:12: source.mix[0].template: expected one of chatml, llama2, jinja",
      ConfigFileError);
}

}  // namespace odbatch
