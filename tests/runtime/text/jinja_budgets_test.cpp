// The Jinja engine's budgets (jinja_budgets.hpp): a hostile chat template costs one JinjaError
// naming the budget it exceeded, never a crash, a hang or gigabytes.
#include <doctest/doctest.h>

#include <string>

#include "odbatch/text/jinja_budgets.hpp"
#include "odbatch/text/jinja_template.hpp"

namespace odbatch::test {
namespace {

using jinja::JinjaError;
using jinja::Template;
using jinja::Value;

std::string render(const std::string& source) {
  return Template(source).render({}).text;
}

JinjaError error_of(const std::string& source) {
  try {
    render(source);
  } catch (const JinjaError& e) {
    return e;
  }
  FAIL("no JinjaError for a template of " << source.size() << " bytes: " << source.substr(0, 200));
  return JinjaError(JinjaError::Kind::render, "", 0, 0);
}

bool says(const JinjaError& e, std::string_view fragment) {
  return std::string(e.what()).find(fragment) != std::string::npos;
}

std::string repeated(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

TEST_CASE("jinja budgets: expression trees deeper than 200 levels fail to parse") {
  // Chains the parser builds in a loop made trees 30,000 levels deep, which crashed evaluating
  // and destroying them.
  const std::string chains[] = {
      "{{ 1" + repeated(" + 1", 30000) + " }}",
      "{{ " + repeated("not ", 30000) + "1 }}",
      "{{ 'a'" + repeated(" | trim", 30000) + " }}",
      "{{ x" + repeated(".a", 30000) + " }}",
      "{{ x" + repeated("[0]", 30000) + " }}",
      "{{ " + repeated("1 if x else ", 30000) + "1 }}",
      "{{ " + repeated("-", 30000) + "1 }}",
      "{{ " + repeated("[", 30000) + repeated("]", 30000) + " }}",
  };
  for (const auto& chain : chains) {
    INFO(chain.substr(0, 40));
    const JinjaError e = error_of(chain);
    CHECK(e.kind() == JinjaError::Kind::syntax);
    CHECK(e.line() == 1);
    CHECK(says(e, "nested more than 200 levels deep"));
  }
  const JinjaError e = error_of("\n{{ 1" + repeated(" + 1", 300) + " }}");
  CHECK(e.line() == 2);
  CHECK(e.column() == 4 * 200 + 2);  // the operator that makes the 201st level
  CHECK(render("{{ 0" + repeated(" + 1", 150) + " }}") == "150");
  CHECK(render("{{ 'a'" + repeated(" | upper | lower", 90) + " }}") == "a");
}

TEST_CASE("jinja budgets: an error quotes at most 1 KiB of the template's text") {
  const JinjaError raised = error_of("{{ raise_exception('x' * 60000000) }}");
  CHECK(raised.kind() == JinjaError::Kind::raised);
  CHECK(raised.message().size() == jinja::kMaxErrorTextBytes + 27);
  CHECK(raised.message().ends_with("x... (60000000 bytes in all)"));
  CHECK(std::string(raised.what()).size() < 2 * jinja::kMaxErrorTextBytes);
  const JinjaError undefined = error_of("{{ " + std::string(100000, 'u') + ".x }}");
  CHECK(undefined.message().ends_with("(100015 bytes in all)"));
  CHECK(error_of("{{ raise_exception('short') }}").message() == "short");
}

}  // namespace
}  // namespace odbatch::test
