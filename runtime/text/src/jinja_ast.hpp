#pragma once
// The parsed form of a Jinja template, shared by the parser (jinja_parser.cpp) and the renderer
// (jinja_render.cpp). Filters and tests are resolved to functions while parsing, so an unknown
// name fails at parse time with its line:column, as jinja2 does.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "odbatch/text/jinja_template.hpp"
#include "odbatch/text/jinja_value.hpp"

namespace odbatch::jinja::detail {

struct Location {
  int line = 1;
  int column = 1;
};

class Renderer;
struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// Arguments as written in a call, filter or test: positional, then name=value.
struct ArgumentExprs {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

using FilterFunction = Value (*)(Renderer&, const Location&, Value&, CallArguments&);
using TestFunction = bool (*)(Renderer&, const Location&, const Value&, CallArguments&);

// nullptr when no filter or test has that name.
FilterFunction find_filter(std::string_view name);
TestFunction find_test(std::string_view name);

struct Expr {
  enum class Type : std::uint8_t {
    literal,      // value
    name,         // name
    list,         // operands
    tuple,        // operands
    dict,         // operands: key, value, key, value...
    attribute,    // operands[0].name
    subscript,    // operands[0][operands[1]]
    slice,        // operands[0][operands[1]:operands[2]:operands[3]] (null parts absent)
    call,         // operands[0](arguments)
    filter,       // operands[0] | name(arguments); operands[0] null inside {% filter %}
    test,         // operands[0] is [not] name(arguments)
    unary,        // name in {"-", "+", "not"}, operands[0]
    binary,       // operands[0] name operands[1]; name in + - * / // % ** ~ and or
    compare,      // operands[0] ops[0] operands[1] ops[1] operands[2]... (chained)
    conditional,  // operands[0] if operands[1] else operands[2] (null: undefined)
  };
  Type type;
  Location location;
  // Levels of the tree below and including this node: the parser refuses a node deeper than
  // kMaxNesting, so evaluating and destroying the tree recurse a bounded number of times.
  int depth = 1;
  Value value;
  std::string name;
  std::vector<ExprPtr> operands;
  std::vector<std::string> ops;
  ArgumentExprs arguments;
  bool negated = false;
  FilterFunction filter = nullptr;
  TestFunction test = nullptr;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct MacroParameter {
  std::string name;
  ExprPtr default_value;  // null: undefined when not passed
};

struct Stmt {
  enum class Type : std::uint8_t {
    text,          // text
    output,        // {{ expr }}
    if_chain,      // branches: (condition, body)...; a null condition is the else branch
    for_loop,      // for targets in expr [if condition] body [else else_body]
    set,           // set targets = expr, or set targets[0].attribute = expr
    set_block,     // {% set targets[0] %}body{% endset %} [filtered by filters]
    macro,         // macro name(parameters) body
    call_block,    // {% call [(parameters)] expr %}body{% endcall %}
    filter_block,  // {% filter filters %}body{% endfilter %}
    loop_break,
    loop_continue,
    generation,  // {% generation %}body{% endgeneration %}
  };
  Type type;
  Location location;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<std::string> targets;
  std::string attribute;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::vector<MacroParameter> parameters;
  std::vector<ExprPtr> filters;
};

struct ParsedTemplate {
  Body body;
};

// Builds the tree; throws JinjaError(Kind::syntax) naming line:column.
Body parse_template(std::string_view source);

}  // namespace odbatch::jinja::detail
