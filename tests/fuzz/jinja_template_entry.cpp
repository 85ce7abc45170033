// A chat template from a model repository, parsed and rendered as the chat tokenizer does. The
// input is the template's text; after a NUL byte, if there is one, come the variables as a JSON
// object (else a short real-shaped conversation), so that mutations reach the data too.
#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/text/jinja_budgets.hpp"
#include "odbatch/text/jinja_template.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "jinja_template";

constexpr std::string_view kConversation =
    R"({"messages": [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": "What is free software?"},
                     {"role": "assistant", "content": "Software that respects freedom."}],
        "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
        "tools": null, "documents": null})";

// The variables after the NUL, or the conversation when they are absent or not a JSON object.
jinja::Value variables_of(std::string_view input) {
  const auto nul = input.find('\0');
  if (nul != std::string_view::npos) {
    try {
      jinja::Value given = jinja::Value::from_json(input.substr(nul + 1));
      if (given.is_dict()) return given;
    } catch (const std::invalid_argument&) {
      // Not this target's concern: the conversation parser has its own.
    }
  }
  return jinja::Value::from_json(kConversation);
}

// A JinjaError keeps its promises: its message is cut to the budget, plus the size noted.
void check_error(const jinja::JinjaError& e) {
  expect(e.message().size() <= jinja::kMaxErrorTextBytes + 40, kTarget,
         "an error's message is cut to kMaxErrorTextBytes");
  expect(e.line() >= 1 && e.column() >= 1, kTarget, "an error names its line and column");
}

}  // namespace

Outcome jinja_template(Input input) {
  const std::string_view bytes(reinterpret_cast<const char*>(input.data()), input.size());
  const std::string_view source = bytes.substr(0, std::min(bytes.find('\0'), bytes.size()));
  const jinja::Value variables = variables_of(bytes);
  try {
    const jinja::Template chat_template(source);
    try {
      const jinja::RenderResult result = chat_template.render(variables.as_dict());
      expect(result.text.size() <= jinja::kMaxTextBytes, kTarget,
             "the rendered text is held to kMaxTextBytes");
      std::size_t previous_end = 0;
      for (const auto& range : result.generation_ranges) {
        expect(range.begin <= range.end && range.end <= result.text.size(), kTarget,
               "a generation range lies inside the rendered text");
        expect(range.begin >= previous_end, kTarget, "generation ranges come in order");
        previous_end = range.end;
      }
      return Outcome::accepted;
    } catch (const jinja::JinjaError& e) {
      expect(e.kind() != jinja::JinjaError::Kind::syntax, kTarget,
             "rendering fails with a render error or the template's own exception");
      check_error(e);
      return Outcome::rejected;
    }
  } catch (const jinja::JinjaError& e) {
    expect(e.kind() == jinja::JinjaError::Kind::syntax, kTarget,
           "parsing fails with a syntax error");
    check_error(e);
    return Outcome::rejected;
  } catch (const std::exception& e) {
    contract_broken(kTarget, std::string("only a JinjaError escapes the engine, not: ") + e.what());
  }
}

}  // namespace odbatch::fuzz
