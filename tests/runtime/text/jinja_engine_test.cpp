// The Jinja engine's pieces: whitespace control, expressions, statements, filters, tests,
// methods, globals, undefined semantics and errors with their line:column. Expected strings are
// what Python's jinja2 (trim_blocks, lstrip_blocks) renders.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/text/jinja_template.hpp"

namespace odbatch::test {
namespace {

using jinja::JinjaError;
using jinja::Template;
using jinja::Value;

std::string render(std::string_view source, std::string_view variables_json = "{}") {
  const Value variables = Value::from_json(variables_json);
  return Template(source).render(variables.as_dict()).text;
}

JinjaError error_of(std::string_view source, std::string_view variables_json = "{}") {
  try {
    render(source, variables_json);
  } catch (const JinjaError& e) {
    return e;
  }
  FAIL("no JinjaError for: " << source);
  return JinjaError(JinjaError::Kind::render, "", 0, 0);
}

TEST_CASE("jinja: trim_blocks, lstrip_blocks and whitespace markers") {
  CHECK(render("{% if true %}\n  yes\n{% endif %}\n") == "  yes\n");
  CHECK(render("a\n    {% if true %}b{% endif %}") == "a\nb");
  CHECK(render("a  {{- ' b ' -}}  c") == "a b c");
  CHECK(render("a\n  {%- if true %} b{% endif %}") == "a b");
  CHECK(render("x {%+ if true %}y{% endif +%}\nz") == "x y\nz");
  CHECK(render("{# note #}\n  {#- other -#}  a") == "a");
  CHECK(render("{{ 'v' }}\nw") == "v\nw");
  // One trailing newline of the source is dropped (keep_trailing_newline=False).
  CHECK(render("text\n\n") == "text\n");
  CHECK(render("a\r\nb") == "a\nb");
}

TEST_CASE("jinja: literals, arithmetic and Python printing") {
  CHECK(render("{{ 1 + 2 * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }}") ==
        "7 3 -4 2 1024");
  CHECK(render("{{ 3 / 2 }} {{ 4 / 2 }} {{ 1e-5 }} {{ 1e16 }} {{ 0.1 + 0.2 }}") ==
        "1.5 2.0 1e-05 1e+16 0.30000000000000004");
  CHECK(render("{{ none }} {{ true }} {{ False }} {{ [1, 'a', none] }} {{ {'k': \"it's\"} }}") ==
        "None True False [1, 'a', None] {'k': \"it's\"}");
  CHECK(render("{{ (1, 'b') }} {{ 'a' ~ 1 ~ none }} {{ 'ab' * 2 }} {{ [1] + [2] }}") ==
        "(1, 'b') a1None abab [1, 2]");
  CHECK(render("{{ 'a\\tb\\n\\u00e9\\x41' }}") ==
        "a\tb\n\xc3\xa9"
        "A");
  CHECK(render("{{ 'x' if false }}|{{ 'y' if 1 > 0 else 'z' }}") == "|y");
  CHECK(render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'b' in 'abc' }} {{ 2 not in [1] }}") ==
        "True False True True");
  CHECK(render("{{ 0 or 'd' }} {{ 1 and 'x' }} {{ not [] }}") == "d x True");
  // `}}` inside brackets belongs to the expression.
  CHECK(render("{{ {'a': {'b': [true]}} }}") == "{'a': {'b': [True]}}");
  CHECK(render("{{ 5e-324 }} {{ 1e400 }} {{ 7 | round }} {{ 2.675 | round(2) }}") ==
        "5e-324 inf 7 2.67");
  CHECK(render("{{ 'straße'.upper() }} {{ ' a b c '.split(none, 1) }}") == "STRASSE ['a', 'b c ']");
  CHECK(render("{{ '\x7f' | tojson(ensure_ascii=true) }}") == "\"\\u007f\"");
  CHECK(render("{{ [1][1.5] is defined }} {{ 'ab'[x] is defined }}") == "False False");
}

TEST_CASE("jinja: subscripts, slices and attributes") {
  const char* vars = R"({"m": [{"role": "user", "content": "héllo"}, {"role": "assistant"}],
                         "s": "abcdef"})";
  CHECK(render("{{ m[0].role }} {{ m[0]['content'] }} {{ m[-1].role }} {{ m.1.role }}", vars) ==
        "user héllo assistant assistant");
  CHECK(render("{{ s[1:3] }} {{ s[::-1] }} {{ s[:-1] }} {{ s[::2] }} {{ m[1:] | length }}", vars) ==
        "bc fedcba abcde ace 1");
  CHECK(render("{{ m[0].content[1] }}{{ m[0].content[::-1] }}", vars) == "éolléh");
  CHECK(render("{{ m[1].content is defined }} {{ m[5] is defined }}", vars) == "False False");
}

TEST_CASE("jinja: for loops, loop variables, else, filters, unpacking, break and continue") {
  CHECK(
      render("{% for x in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
             "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}") ==
      "1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;");
  CHECK(render("{% for x in [1, 2, 3] %}{{ loop.previtem }}-{{ loop.nextitem }},{% endfor %}") ==
        "-2,1-3,2-,");
  CHECK(render("{% for x in [] %}a{% else %}empty{% endfor %}") == "empty");
  CHECK(render("{% for x in range(10) if x is odd %}{{ x }}{{ loop.length }} {% endfor %}") ==
        "15 35 55 75 95 ");
  CHECK(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}") ==
        "a=1;b=2;");
  CHECK(render("{% for x in range(5) %}{% if x == 1 %}{% continue %}{% endif %}"
               "{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}") == "02");
  // Assignments in a loop body do not leak out, nor into the next iteration.
  CHECK(
      render(
          "{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}") ==
      "01020");
}

TEST_CASE("jinja: set, namespace, block set, macros, call, filter blocks, generation") {
  CHECK(render("{% set ns = namespace(n=0, found=false) %}{% for i in [1, 2, 3] %}"
               "{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }} {{ ns.found }}") == "6 False");
  CHECK(render("{% set a, b = 1, 2 %}{{ a }}{{ b }}") == "12");
  CHECK(render("{% set block %}x{{ 1 }}{% endset %}[{{ block }}]") == "[x1]");
  CHECK(render("{% macro greet(name, punct='!') %}hi {{ name }}{{ punct }}{% endmacro %}"
               "{{ greet('a') }} {{ greet('b', punct='?') }}") == "hi a! hi b?");
  CHECK(
      render("{% macro wrap() %}[{{ caller() }}]{% endmacro %}{% call wrap() %}in{% endcall %}") ==
      "[in]");
  CHECK(render("{% filter upper %}abc{{ 'd' }}{% endfilter %}") == "ABCD");
  CHECK(render("a\n  {% raw %}\n  {{ x }} {% if %}\n  {% endraw %}\nb") ==
        "a\n\n  {{ x }} {% if %}\nb");
  CHECK(render("a {%- raw -%}  {{ x }}  {%- endraw -%}  b") == "a{{ x }}b");
  const auto result =
      Template("a{% generation %}bc{% endgeneration %}d{% generation %}e{% endgeneration %}")
          .render({});
  CHECK(result.text == "abcde");
  REQUIRE(result.generation_ranges.size() == 2);
  CHECK(result.generation_ranges[0] == jinja::TextRange{1, 3});
  CHECK(result.generation_ranges[1] == jinja::TextRange{4, 5});
}

TEST_CASE("jinja: filters") {
  CHECK(render("{{ '  a b \\n' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ 'ab' | upper }}{{ 'AB' | "
               "lower }}") == "a b|a|ABab");
  CHECK(render("{{ 'hello big-world (x)' | title }} {{ 'hELLO' | capitalize }}") ==
        "Hello Big-World (X) Hello");
  CHECK(
      render("{{ 'aaa' | replace('a', 'b', 2) }} {{ [1, 2] | join(', ') }} {{ 'abc' | length }}") ==
      "bba 1, 2 3");
  CHECK(render("{{ [3, 1] | first }}{{ [3, 1] | last }} {{ x | default('d') }} {{ '' | d('e', "
               "true) }}") == "31 d e");
  CHECK(render("{{ {'a': [1, 2.5, 'é\"'], 'b': none} | tojson }}") ==
        "{\"a\": [1, 2.5, \"é\\\"\"], \"b\": null}");
  CHECK(render("{{ {'a': [1]} | tojson(indent=2) }}") == "{\n  \"a\": [\n    1\n  ]\n}");
  CHECK(render("{{ {'b': 1, 'a': 2} | tojson(separators=(',', ':'), sort_keys=true) }}") ==
        "{\"a\":2,\"b\":1}");
  CHECK(render("{{ 'é' | tojson(ensure_ascii=true) }}") == "\"\\u00e9\"");
  CHECK(render("{{ '12' | int + 1 }} {{ '2.5' | float }} {{ 'x' | int }} {{ 3.9 | int }} {{ 5 | "
               "string }}") == "13 2.5 0 3 5");
  CHECK(
      render("{{ 'ab' | list }} {{ {'b': 1, 'A': 2} | dictsort }} {{ {'k': 1} | items | list }}") ==
      "['a', 'b'] [('A', 2), ('b', 1)] [('k', 1)]");
  const char* people =
      R"({"p": [{"n": "b", "r": "user"}, {"n": "a", "r": "bot"}, {"n": "c", "r": "user"}]})";
  CHECK(render("{{ p | map(attribute='n') | join }} {{ p | selectattr('r', 'equalto', 'user') | "
               "map(attribute='n') | list }}",
               people) == "bac ['b', 'c']");
  CHECK(render("{{ p | rejectattr('r', 'eq', 'user') | map(attribute='n') | first }} {{ p | "
               "sort(attribute='n') | map(attribute='n') | join }}",
               people) == "a abc");
  CHECK(render("{{ [1, 2, 3, 4] | select('even') | list }} {{ [1, 0, 2] | reject | list }} {{ "
               "['a', 'A', 'b'] | unique | list }}") == "[2, 4] [0] ['a', 'b']");
  CHECK(render("{{ [1, 2] | reverse | list }} {{ 'abc' | reverse }} {{ [3, 1, 2] | "
               "sort(reverse=true) }}") == "[2, 1] cba [3, 2, 1]");
  CHECK(render("{{ -3 | abs }} {{ 2.567 | round(2) }} {{ 2.5 | round(method='floor') }} {{ [1] | "
               "map('string') | list }}") == "3 2.57 2.0 ['1']");
  CHECK(render("{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}") ==
        "a\n  b\n\n  c|  a\n  b");
  CHECK(render("{{ '<a & \"b\">' | escape }} {{ 'x' | safe }}") == "&lt;a &amp; &#34;b&#34;&gt; x");
  CHECK(render("{{ 'Hello, wörld! foo_bar 42 日本語 ½' | wordcount }}") == "6");
}

TEST_CASE("jinja: tests") {
  CHECK(render("{{ x is defined }}{{ x is undefined }}{{ none is none }}{{ true is boolean }}"
               "{{ 1 is number }}{{ 1 is integer }}{{ 1.0 is float }}{{ 'a' is string }}") ==
        "FalseTrueTrueTrueTrueTrueTrueTrue");
  CHECK(
      render(
          "{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is sequence }}{{ true is true }}"
          "{{ 0 is false }}{{ 3 is odd }}{{ 4 is even }}{{ 2 is in [1, 2] }}{{ 1 is not eq 2 }}") ==
      "TrueTrueTrueTrueFalseTrueTrueTrueTrue");
  CHECK(render("{{ 1 is ne 2 }}{{ 6 is divisibleby 3 }}{{ 'a' is equalto('a') }}") ==
        "TrueTrueTrue");
}

TEST_CASE("jinja: string and dict methods") {
  CHECK(render("{{ '  a  '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'xxaxx'.rstrip('x') }}") ==
        "a|axx|xxa");
  CHECK(render("{{ 'a b  c'.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a,b,c'.split(',', 1) }}") ==
        "['a', 'b', 'c'] ['a', 'b', '', 'c'] ['a', 'b,c']");
  CHECK(render("{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}{{ 'aBc'.upper() }}{{ "
               "'aBc'.lower() }}") == "TrueTrueABCabc");
  CHECK(render("{{ 'hello wORLD'.title() }} {{ 'ab'.replace('b', 'c') }} {{ 'héllo'.find('l') }} "
               "{{ '-'.join(['a', 'b']) }}") == "Hello World ac 2 a-b");
  CHECK(render("{% set d = {'a': 1, 'b': 2} %}{{ d.keys() | list }} {{ d.values() | list }} {{ "
               "d.get('a') }} "
               "{{ d.get('z', 9) }} {{ d.get('z') }}") == "['a', 'b'] [1, 2] 1 9 None");
}

TEST_CASE("jinja: globals and undefined semantics") {
  CHECK(render("{{ range(3) | list }} {{ range(1, 7, 2) | list }}") == "[0, 1, 2] [1, 3, 5]");
  jinja::RenderOptions options;
  options.clock = [] {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1721952000));
  };
  CHECK(Template("{{ strftime_now('%d %b %Y') }}").render({}, options).text == "26 Jul 2024");
  CHECK(render("[{{ missing }}]{% for x in missing %}a{% endfor %}{{ missing | length }}{{ missing "
               "is iterable }}") == "[]0True");
  CHECK(render("{{ missing == missing }} {{ missing ~ 'x' }} {{ not missing }}") == "True x True");
  CHECK(render("[{{ missing | trim }}|{{ missing | string }}|{{ missing | upper }}]") == "[||]");
  const JinjaError raised = error_of("line\n  {{ raise_exception('bad role') }}");
  CHECK(raised.kind() == JinjaError::Kind::raised);
  CHECK(raised.message() == "bad role");
  CHECK(raised.line() == 2);
}

TEST_CASE("jinja: values from JSON keep key order and refuse what they cannot hold") {
  const Value v = Value::from_json(R"({"b": 1, "a": [true, null, 2.5, "x"], "c": {}})");
  CHECK(jinja::to_json(v) == R"({"b": 1, "a": [true, null, 2.5, "x"], "c": {}})");
  CHECK(jinja::to_python_repr(v) == "{'b': 1, 'a': [True, None, 2.5, 'x'], 'c': {}}");
  CHECK_THROWS_AS(Value::from_json("[18446744073709551615]"), std::invalid_argument);
  CHECK_THROWS_AS(Value::from_json("{"), std::invalid_argument);
}

TEST_CASE("jinja: one parsed template renders from several threads at once") {
  const Template chat_template(
      "{% macro turn(m) %}<{{ m.role }}>{{ m.content | trim }}{% endmacro %}"
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
      "{{ turn(m) }}{% endfor %}{{ ns.n }}");
  const Value variables = Value::from_json(
      R"({"messages": [{"role": "user", "content": " hi "}, {"role": "assistant", "content": "yo"}]})");
  const std::string expected = "<user>hi<assistant>yo2";
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < mismatches.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i)
        if (chat_template.render(variables.as_dict()).text != expected) ++mismatches[t];
    });
  for (auto& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

TEST_CASE("jinja: errors name the construct and its line:column") {
  const auto check_error = [](std::string_view source, JinjaError::Kind kind, int line, int column,
                              std::string_view fragment) {
    const JinjaError e = error_of(source);
    CHECK(e.kind() == kind);
    CHECK(e.line() == line);
    CHECK(e.column() == column);
    CHECK_MESSAGE(std::string(e.what()).find(fragment) != std::string::npos, e.what());
    CHECK(std::string(e.what()).find("line " + std::to_string(line) + ", column " +
                                     std::to_string(column)) != std::string::npos);
  };
  check_error("a\n{{ x | nosuch }}", JinjaError::Kind::syntax, 2, 8, "no filter named 'nosuch'");
  check_error("{{ x is nosuch }}", JinjaError::Kind::syntax, 1, 9, "no test named 'nosuch'");
  check_error("{% include 'x' %}", JinjaError::Kind::syntax, 1, 4,
              "unsupported statement 'include'");
  check_error("{% if x %}a", JinjaError::Kind::syntax, 1, 4, "'if' is never closed");
  check_error("\n\n  {% endfor %}", JinjaError::Kind::syntax, 3, 6, "unexpected 'endfor'");
  check_error("{{ 'abc }}", JinjaError::Kind::syntax, 1, 4, "unterminated string");
  check_error("{{ 1 + }}", JinjaError::Kind::syntax, 1, 8, "unexpected end of expression");
  check_error("{% raw %}x", JinjaError::Kind::syntax, 1, 1, "'raw' is never closed");
  check_error("{% break %}", JinjaError::Kind::syntax, 1, 4, "'break' outside of a for loop");
  check_error("{{ x.y }}", JinjaError::Kind::render, 1, 5, "'x' is undefined");
  check_error("{{ 'a' + 1 }}", JinjaError::Kind::render, 1, 8, "can only concatenate str");
  check_error("{{ nosuch() }}", JinjaError::Kind::render, 1, 10, "'nosuch' is undefined");
  check_error("{{ 'a'.nosuch() }}", JinjaError::Kind::render, 1, 14, "has no attribute 'nosuch'");
  check_error("{% set x = 1 %}{% set x.a = 2 %}", JinjaError::Kind::render, 1, 19, "non-namespace");
  check_error("{{ 'a' | trim(1, 2) }}", JinjaError::Kind::render, 1, 10,
              "trim takes at most 1 argument(s), got 2");
  check_error("{{ [] | tojson(foo=1) }}", JinjaError::Kind::render, 1, 9,
              "tojson got an unexpected keyword argument 'foo'");
  check_error("{{ 'a'.strip('x', 'y') }}", JinjaError::Kind::render, 1, 13,
              "str.strip takes at most 1 argument(s), got 2");
  check_error("{{ 1 // 0 }}", JinjaError::Kind::render, 1, 6, "division or modulo by zero");
  check_error("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", JinjaError::Kind::render, 1, 20,
              "nested more than 200 calls deep");
  check_error("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}",
              JinjaError::Kind::syntax, 1, 204, "nested more than 200 levels deep");
  check_error("{{ 9223372036854775807 + 1 }}", JinjaError::Kind::render, 1, 24, "integer overflow");
  check_error("{{ 2 ** 64 }}", JinjaError::Kind::render, 1, 6, "integer overflow");
  check_error("{{ x | tojson }}", JinjaError::Kind::render, 1, 8, "'x' is undefined");
}

TEST_CASE("jinja: a template's text is held to 64 MiB instead of the process's memory") {
  // Repetition, doubling concatenation and output in a loop each stop with a located error.
  CHECK(std::string(error_of("{{ 'ab' * 40000000 }}").what()).find("grows past 64 MiB") !=
        std::string::npos);
  CHECK(error_of("{% set ns = namespace(s='x') %}{% for i in range(40) %}"
                 "{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
            .kind() == JinjaError::Kind::render);
  CHECK(error_of("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}").kind() ==
        JinjaError::Kind::render);
  CHECK(render("{{ 'ab' * 3 }}{{ [1] * 2 }}") == "ababab[1, 1]");
}

}  // namespace
}  // namespace odbatch::test
