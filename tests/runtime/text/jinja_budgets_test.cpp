// The Jinja engine's budgets (jinja_budgets.hpp): a hostile chat template costs one JinjaError
// naming the budget it exceeded, never a crash, a hang or gigabytes. Each case here crashed, hung
// or took 2 to 4 GB before the budgets; now each fails within a second.
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
  CHECK(says(error_of(std::string(2 << 20, 'x')), "more than 1024 KiB"));
  CHECK(render("{{ 'a'" + repeated(" | upper | lower", 90) + " }}") == "a");
}

TEST_CASE("jinja budgets: data nested 200,000 deep is built and dropped without a crash") {
  const std::string deep =
      "{% set ns = namespace(x=[]) %}{% for i in range(50000) %}{% set ns.x = [[[[ns.x]]]] %}"
      "{% endfor %}";
  CHECK(render(deep + "{{ ns.x | length }}") == "1");
  for (const char* walk : {"{{ ns.x }}", "{{ ns.x | tojson }}"}) {
    INFO(walk);
    const JinjaError e = error_of(deep + walk);
    CHECK(e.kind() == JinjaError::Kind::render);
    CHECK(says(e, "nested more than 200 levels deep"));
  }
  CHECK(says(error_of("{% set ns = namespace(x=[], y=[]) %}{% for i in range(1000) %}"
                      "{% set ns.x = [ns.x] %}{% set ns.y = [ns.y] %}{% endfor %}"
                      "{{ ns.x == ns.y }}"),
             "nested more than 200 levels deep"));
  // A namespace that holds itself prints as deep as the budget, not for ever.
  CHECK(says(error_of("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
             "nested more than 200 levels deep"));
  CHECK(render("{% set ns = namespace(a=1) %}{{ ns }}") == "<Namespace {'a': 1}>");
}

TEST_CASE("jinja budgets: loops and recursion without end stop at the step budget") {
  const std::string steps = "takes more than " + std::to_string(jinja::kMaxRenderSteps) + " steps";
  for (const char* endless : {
           "{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}",
           "{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}"
           "{{ f(60) }}",
           "{% set big = range(99999) | list %}{% for i in big %}{{ big | sort | length }}"
           "{% endfor %}",
           "{% set big = range(99999) | list %}{% for i in big %}{{ (big + big) | unique | "
           "length }}{% endfor %}",
       }) {
    INFO(endless);
    const JinjaError e = error_of(endless);
    CHECK(e.kind() == JinjaError::Kind::render);
    CHECK(says(e, steps));
  }
  // Macros 200 deep, each inside statements 12 deep: the renderer's recursion, not the stack.
  std::string deep_macro = "{% macro f(n) %}{% if n > 0 %}" + repeated("{% if true %}", 12) +
                           "{{ f(n-1) }}" + repeated("{% endif %}", 12) +
                           "{% endif %}{% endmacro %}{{ f(199) }}";
  CHECK(says(error_of(deep_macro), "more than 2000 levels deep"));
  // A dict's keys are looked up among those before them: 3,000 keys are some 4.5 million steps.
  std::string keys = "{{ {";
  for (int i = 0; i < 3000; ++i) keys += "'k" + std::to_string(i) + "': 0, ";
  CHECK(says(error_of(keys + "} | length }}"), steps));
  CHECK(says(error_of("{{ range(100001) | length }}"), "range too big"));
  CHECK(render("{{ 'abc'[::-9223372036854775807 - 1] }}{{ [1, 2, 3][1::9223372036854775807] }}") ==
        "c[2]");
  CHECK(render("{{ range(9223372036854775800, 9223372036854775807, 5) | list }}") ==
        "[9223372036854775800, 9223372036854775805]");
  // Repeating an empty string or list takes no time, however many times.
  CHECK(render("{{ '' * 1000000000000000000 }}{{ [] * 1000000000000000000 }}") == "[]");
}

TEST_CASE("jinja budgets: strings and lists are held to 64 MiB before they are allocated") {
  const char* growing[] = {
      "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}"
      "{% endfor %}",
      "{% set ns = namespace(s='a' * 1000000) %}{% for i in range(8) %}"
      "{% set ns.s = ns.s | replace('a', 'aaaaaaaaaaaaaaaa') %}{% endfor %}",
      "{{ ('a' * 1000000).replace('', "
      "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx') }}",
      "{{ (['a' * 1000000] * 100) | join('') }}",
      "{{ (['a' * 1000000] * 100) | join }}",
      "{{ ''.join(['a' * 1000000] * 100) }}",
      "{{ ('\\n' * 30000000) | indent(100) }}",
      "{{ 'x' | indent(100000000) }}",
      "{{ ([[1] * 1000] * 1000) | tojson(indent=100) }}",
      "{{ [1, [2]] | tojson(indent=1000000000000) }}",
      "{% set big = ['x' * 60] * 200000 %}{{ ([big] * 400) | string }}",
      "{% set big = ['x' * 60] * 200000 %}{{ ([big] * 400) ~ '' }}",
      "{{ ('&' * 20000000) | escape }}",
      "{{ ('a ' * 30000000).split() | length }}",
      "{{ ('a' * 60000000) | list | length }}",
      "{% for c in 'a' * 60000000 %}{% endfor %}",
      "{{ ('x' * 60000000) ~ ('x' * 60000000) }}",
      "{{ ['x'] * 3000000 }}",
  };
  for (const char* source : growing) {
    INFO(source);
    const JinjaError e = error_of(source);
    CHECK(e.kind() == JinjaError::Kind::render);
    CHECK(says(e, "grows past 64 MiB"));
  }
}

TEST_CASE("jinja budgets: many strings under 64 MiB cannot pile up past 512 MiB") {
  const JinjaError e = error_of(
      "{% set ns = namespace(kept=[]) %}{% for i in range(20) %}"
      "{% set ns.kept = ns.kept + ['x' * 60000000] %}{% endfor %}");
  CHECK(e.kind() == JinjaError::Kind::render);
  CHECK(says(e, "creates more than 512 MiB"));
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
