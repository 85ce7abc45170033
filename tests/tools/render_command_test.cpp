// `odbatch render` end to end on the dataset: the rendered chat template, token ids, pieces and
// supervised positions of a record, as text and as JSON, and a record the template refuses.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "json_convention.hpp"
#include "tar_builder.hpp"
#include "test_skip.hpp"

namespace {

namespace fs = std::filesystem;
using namespace odbatch::test;
using nlohmann::json;

const fs::path kData = ODBATCH_DATA_DIR;
const fs::path kTemplates = ODBATCH_CHAT_TEMPLATE_DIR;

bool data_built() {
  if (fs::exists(kData / "sft" / "mixed.jsonl")) return true;
  ::odbatch::test::report_skip("dataset", "the dataset is not built (tools/prepare-data.sh)");
  return false;
}

fs::path config_with_template(const std::string& name, const std::string& template_file) {
  return scratch().write(name + ".toml",
                         source_and_tokenizer_toml(kData / "sft" / "mixed.jsonl", kData) +
                             "template_file = \"" + (kTemplates / template_file).string() +
                             "\"\ntemplate_date = \"2024-07-26\"\n");
}

// The line number of the first record that is one plain exchange: a user turn then an assistant
// turn, no system turn and no image. Which record that is depends on the sources the dataset
// was built from on this machine.
std::size_t first_plain_exchange(const fs::path& records) {
  std::ifstream in(records);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const json record = json::parse(line);
    if (record.contains("image") || record.contains("images")) continue;
    const bool sharegpt = record.contains("conversations");
    const auto& turns = sharegpt ? record["conversations"] : record["messages"];
    const char* role = sharegpt ? "from" : "role";
    if (turns.size() == 2 && turns[0][role] == (sharegpt ? "human" : "user")) return number;
  }
  FAIL("no plain two-turn record in " << records);
  return 0;
}

}  // namespace

TEST_CASE("render shows a record's text, tokens and supervised positions, as JSON too") {
  if (!data_built()) return;
  const auto config = config_with_template("render-chatml", "chatml.jinja");
  const auto records = kData / "sft" / "mixed.jsonl";
  const auto record = shell_quoted(records) + ":" + std::to_string(first_plain_exchange(records));
  const auto run = run_cli("render " + shell_quoted(config) + " --record " + record + " --json");
  REQUIRE(run.status == 0);
  odbatch::test::check_report_convention(run.out, "render");
  // The image settings in effect: the config's defaults here.
  const json images = json::parse(run.out)["images"];
  CHECK(images["max_pixels"] == 1003520);
  CHECK(images["patch_size"] == 14);
  CHECK(images["image_mean"].size() == 3);
  CHECK(images["jpeg_dct_scaling"] == false);
  const json out = json::parse(run.out)["records"];
  REQUIRE(out.size() == 1);
  const auto& r = out[0];
  CHECK(r["record"].get<std::string>().starts_with(records.string() + ":"));
  const std::string text = r["text"];
  CHECK(text.starts_with("<|im_start|>user\n"));
  REQUIRE(r["supervised_ranges"].size() == 1);
  const auto begin = r["supervised_ranges"][0][0].get<std::size_t>();
  const auto end = r["supervised_ranges"][0][1].get<std::size_t>();
  CHECK(text.substr(end - 10, 10) == "<|im_end|>");
  CHECK(text.substr(0, begin).ends_with("<|im_start|>assistant\n"));
  const auto ids = r["input_ids"].get<std::vector<int>>();
  const auto labels = r["labels"].get<std::vector<int>>();
  REQUIRE(ids.size() == labels.size());
  REQUIRE(r["pieces"].size() == ids.size());
  std::size_t supervised = 0;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (labels[i] != -100) {
      CHECK(labels[i] == ids[i]);
      ++supervised;
    }
  CHECK(supervised > 0);
  CHECK(r["pieces"].back() == "<|im_end|>");

  // The same record as text: the supervised span bracketed (no terminal here), a token table.
  const auto plain = run_cli("render " + shell_quoted(config) + " --record " + record);
  REQUIRE(plain.status == 0);
  CHECK(plain.out.find("\u27e6") != std::string::npos);
  CHECK(plain.out.find("supervised targets") != std::string::npos);
  CHECK(plain.out.find("\x1b[") == std::string::npos);
}

TEST_CASE("render says why a template refuses a record, and exits 1") {
  if (!data_built()) return;
  // Gemma-2's template raises on a system message; the default system prompt adds one.
  const auto config =
      scratch().write("render-gemma.toml",
                      read_file(config_with_template("render-gemma-base", "gemma-2-2b-it.jinja")) +
                          "system_prompt = \"Be brief.\"\nbos_token = \"<bos>\"\n");
  const auto run = run_cli("render " + shell_quoted(config) + " --json");
  CHECK(run.status == 1);
  odbatch::test::check_report_convention(run.out, "render");
  const json out = json::parse(run.out)["records"];
  REQUIRE(out.size() == 1);
  CHECK(out[0]["error"]["reason"] == "template_refused");
  CHECK(out[0]["error"]["message"].get<std::string>().find("System role not supported") !=
        std::string::npos);
  CHECK(run_cli("render " + shell_quoted(config) + " --record nowhere.jsonl:x").status == 2);
}

TEST_CASE("render reads a tar shard's samples, with their image members, by key or position") {
  if (!data_built()) return;
  // A real photo as the image member of sample "a"; sample "b" is text only.
  fs::path photo;
  for (const auto& entry : fs::recursive_directory_iterator(kData / "images"))
    if (entry.path().extension() == ".jpg") {
      photo = entry.path();
      break;
    }
  REQUIRE(!photo.empty());
  const std::string turns = R"("conversations": [{"from": "human", "value": "What is this?"}, )"
                            R"({"from": "gpt", "value": "A photo."}])";
  const auto shard =
      scratch().write("render-shard.tar",
                      odbatch::test::tar_bytes({{"a.json", "{\"image\": \"jpg\", " + turns + "}"},
                                                {"a.jpg", read_file(photo)},
                                                {"b.json", "{" + turns + "}"}}));
  // ChatML's template takes text contents: the image becomes its placeholder text.
  const auto config = scratch().write(
      "render-tar.toml", read_file(config_with_template("render-tar-base", "chatml.jinja")) +
                             "image_content = \"text\"\n");

  const auto by_key = run_cli("render " + shell_quoted(config) + " --record " +
                              shell_quoted(shard.string() + ":a") + " --json");
  REQUIRE(by_key.status == 0);
  const json a = json::parse(by_key.out)["records"].at(0);
  CHECK(a["record"] == shard.string() + ":a");
  REQUIRE(a["image_spans"].size() == 1);
  CHECK(a["image_spans"][0]["length"].get<int>() > 0);

  const auto by_position = run_cli("render " + shell_quoted(config) + " --record " +
                                   shell_quoted(shard.string() + "[1]"));
  REQUIRE(by_position.status == 0);
  CHECK(by_position.out.starts_with("== " + shard.string() + ":b (2 messages, 0 images)"));

  const auto all =
      run_cli("render " + shell_quoted(config) + " " + shell_quoted(shard) + " --json");
  REQUIRE(all.status == 0);
  CHECK(json::parse(all.out)["records"].size() == 2);

  const auto missing = run_cli("render " + shell_quoted(config) + " --record " +
                               shell_quoted(shard.string() + ":zz"));
  CHECK(missing.status == 2);
  CHECK(missing.err.find("no record with the key zz") != std::string::npos);
}
