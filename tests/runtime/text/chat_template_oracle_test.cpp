// Real chat templates (Qwen2-VL, Qwen2.5, Llama-3.1, Llama-3.2, Mistral-Nemo, Gemma-2, ChatML,
// Hermes-3 tool use, DeepSeek-R1-Distill, Mixtral, Phi-3.5) rendered by odbatch byte-equal to
// @huggingface/jinja and to Python's jinja2 (set up as transformers sets it up) on the dataset's
// conversations, with and without system messages, multi-image content lists, tools, and
// add_generation_prompt both ways. The cases and both engines' answers come from a CTest fixture
// (chat_template_oracle.js, then chat_template_jinja2_oracle.py).
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
#include <optional>
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

// What one reference engine answered for a case: its text, or the message the template raised.
struct Answer {
  const std::string* text = nullptr;
  const std::string* raised = nullptr;
};

Answer answer_of(const jinja::Dict& entry) {
  Answer answer;
  if (const Value* text = entry.find("expected")) answer.text = &text->as_string();
  if (const Value* raised = entry.find("error")) answer.raised = &raised->as_string();
  return answer;
}

// odbatch's rendering of one case agrees with a reference engine's answer.
void check_agrees(const std::string& name, std::string_view engine, const Answer& answer,
                  const std::optional<std::string>& text, const std::string& raised_message) {
  if (answer.raised != nullptr) {
    CHECK_MESSAGE(raised_message == *answer.raised, name << " (" << engine << ")");
    return;
  }
  REQUIRE_MESSAGE(answer.text != nullptr, name << ": " << engine << " gave no answer");
  if (!text.has_value()) {
    FAIL_CHECK(name << ": raised '" << raised_message << "' where " << engine << " renders");
    return;
  }
  CHECK_MESSAGE(*text == *answer.text,
                name << " (" << engine << "): " << first_difference(*answer.text, *text));
}

TEST_CASE(
    "chat templates: odbatch renders the real templates byte-equal to @huggingface/jinja "
    "and to Python's jinja2") {
  const std::filesystem::path oracle_dir = ODBATCH_CHAT_TEMPLATE_ORACLE_DIR;
  const Value root = Value::from_json(read_file(oracle_dir / "chat_template_cases.json"));
  const Value jinja2_root =
      Value::from_json(read_file(oracle_dir / "chat_template_cases_jinja2.json"));
  const auto& cases = root.as_dict().find("cases")->as_list().items;
  const auto& jinja2_cases = jinja2_root.as_dict().find("cases")->as_list().items;
  REQUIRE(jinja2_cases.size() == cases.size());
  std::map<std::string, Template> templates;
  std::map<std::string, int> rendered_per_template;
  int raised = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const jinja::Dict& c = cases[i].as_dict();
    const std::string& name = c.find("name")->as_string();
    REQUIRE(jinja2_cases[i].as_dict().find("name")->as_string() == name);
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
    std::optional<std::string> text;
    std::string raised_message = "no exception";
    try {
      text = found->second.render(c.find("variables")->as_dict(), options).text;
    } catch (const JinjaError& e) {
      CHECK_MESSAGE(e.kind() == JinjaError::Kind::raised, name << ": " << e.what());
      raised_message = e.message();
    }
    check_agrees(name, "@huggingface/jinja", answer_of(c), text, raised_message);
    check_agrees(name, "jinja2", answer_of(jinja2_cases[i].as_dict()), text, raised_message);
    if (text.has_value())
      ++rendered_per_template[file];
    else
      ++raised;
  }
  MESSAGE(cases.size() << " cases, " << raised << " raise an exception");
  // Every template is exercised on dozens of conversations.
  REQUIRE(rendered_per_template.size() == 11);
  for (const auto& [file, count] : rendered_per_template) CHECK_MESSAGE(count >= 40, file);
}

}  // namespace
}  // namespace odbatch::test
