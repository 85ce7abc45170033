// Real chat templates (Qwen2-VL, Qwen2.5, Llama-3.1, Llama-3.2, Mistral-Nemo, Gemma-2, ChatML,
// Hermes-3 tool use, DeepSeek-R1-Distill, Mixtral, Phi-3.5)
// rendered by odbatch byte-equal to @huggingface/jinja on the dataset's conversations, with and
// without system messages, multi-image content lists, tools, and add_generation_prompt both ways.
// The cases and their expected texts come from chat_template_oracle.js (a CTest fixture).
//
// Deliberate differences from @huggingface/jinja, where odbatch follows Python's jinja2 as
// transformers runs it: none of them occurs in these cases, each has an engine unit test instead.
//  - floats print as Python does (1.0, 1e-05), also inside tojson; JavaScript prints 1 and 0.00001.
//  - a name that is undefined fails when used as an object (`x.y`), as jinja2's Undefined does.
//  - filters on undefined act on "" as jinja2's do (`undefined | trim` is ""); @huggingface/jinja
//    raises. The tool schemas here give every parameter the description Hermes-3's template trims.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "odbatch/text/jinja_template.hpp"

namespace odbatch::test {
namespace {

using jinja::JinjaError;
using jinja::Template;
using jinja::Value;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string first_difference(const std::string& expected, const std::string& actual) {
  std::size_t at = 0;
  while (at < expected.size() && at < actual.size() && expected[at] == actual[at]) ++at;
  const auto around = [&](const std::string& s) {
    const std::size_t from = at > 40 ? at - 40 : 0;
    return s.substr(from, 80);
  };
  return "first difference at byte " + std::to_string(at) + "\n  expected: " + around(expected) +
         "\n  actual:   " + around(actual);
}

TEST_CASE("chat templates: odbatch renders the real templates byte-equal to @huggingface/jinja") {
  const Value root = Value::from_json(read_file(
      std::filesystem::path(ODBATCH_CHAT_TEMPLATE_ORACLE_DIR) / "chat_template_cases.json"));
  const auto& cases = root.as_dict().find("cases")->as_list().items;
  std::map<std::string, Template> templates;
  std::map<std::string, int> rendered_per_template;
  int raised = 0;
  for (const Value& entry : cases) {
    const jinja::Dict& c = entry.as_dict();
    const std::string& name = c.find("name")->as_string();
    const std::string& file = c.find("template")->as_string();
    auto found = templates.find(file);
    if (found == templates.end())
      found =
          templates
              .emplace(file,
                       Template(read_file(std::filesystem::path(ODBATCH_CHAT_TEMPLATE_DIR) / file)))
              .first;
    jinja::RenderOptions options;
    const auto seconds = c.find("clock_epoch_seconds")->as_int();
    options.clock = [seconds] {
      return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
    };
    const jinja::Dict& variables = c.find("variables")->as_dict();
    if (const Value* expected_error = c.find("error")) {
      std::string message = "no exception";
      try {
        found->second.render(variables, options);
      } catch (const JinjaError& e) {
        CHECK_MESSAGE(e.kind() == JinjaError::Kind::raised, name << ": " << e.what());
        message = e.message();
      }
      CHECK_MESSAGE(message == expected_error->as_string(), name);
      ++raised;
      continue;
    }
    const std::string& expected = c.find("expected")->as_string();
    std::string actual;
    try {
      actual = found->second.render(variables, options).text;
    } catch (const JinjaError& e) {
      FAIL_CHECK(name << ": " << e.what());
      continue;
    }
    CHECK_MESSAGE(actual == expected, name << ": " << first_difference(expected, actual));
    ++rendered_per_template[file];
  }
  MESSAGE(cases.size() << " cases, " << raised << " raise an exception");
  // Every template is exercised on dozens of conversations.
  REQUIRE(rendered_per_template.size() == 11);
  for (const auto& [file, count] : rendered_per_template) CHECK_MESSAGE(count >= 40, file);
}

}  // namespace
}  // namespace odbatch::test
