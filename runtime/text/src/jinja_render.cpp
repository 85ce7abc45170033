// Renders a parsed Jinja template: statements, expressions with Python's operator semantics,
// jinja2's default Undefined, and the filters, tests, string/dict methods and globals that
// Hugging Face chat templates use. Anything else fails with a JinjaError at its line:column.
#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "jinja_ast.hpp"
#include "odbatch/text/jinja_budgets.hpp"

namespace odbatch::jinja {
namespace detail {
namespace {

// ---- UTF-8 helpers: Python indexes, slices and measures strings by code point ----

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

// Throw std::length_error, which eval() turns into a JinjaError at the expression, when what a
// template computes would pass kMaxTextBytes: a string of `base` bytes plus `count` pieces of
// `piece` bytes each, or a list of `items` values. Checked before allocating.
void check_text_size(std::size_t base, std::size_t count, std::size_t piece) {
  if (base > kMaxTextBytes || (piece != 0 && count > (kMaxTextBytes - base) / piece))
    throw std::length_error("the template's text grows past " +
                            std::to_string(kMaxTextBytes >> 20) + " MiB");
}
void check_list_size(std::size_t items) {
  if (items > kMaxTextBytes / sizeof(Value))
    throw std::length_error("a list of " + std::to_string(items) + " items grows past " +
                            std::to_string(kMaxTextBytes >> 20) + " MiB");
}

// std::string::find in linear time (glibc's memmem is the two-way algorithm): the naive search
// takes the product of the lengths on text like "aaa...ab".
std::size_t find_text(std::string_view haystack, std::string_view needle, std::size_t from) {
  if (from > haystack.size()) return std::string::npos;
  if (needle.empty()) return from;
  if (needle.size() == 1) return haystack.find(needle[0], from);  // memchr
  const void* found =
      memmem(haystack.data() + from, haystack.size() - from, needle.data(), needle.size());
  return found == nullptr
             ? std::string::npos
             : static_cast<std::size_t>(static_cast<const char*>(found) - haystack.data());
}

bool is_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xc0) == 0x80;
}

// The offset after the code point starting at `at`, and before the one ending at `end`.
std::size_t next_code_point(std::string_view s, std::size_t at) {
  std::size_t next = at + 1;
  while (next < s.size() && is_continuation(s[next])) ++next;
  return next;
}
std::size_t previous_code_point(std::string_view s, std::size_t end) {
  std::size_t at = end - 1;
  while (at > 0 && is_continuation(s[at])) --at;
  return at;
}

// A string's code points as views, walked in place: a string of kMaxTextBytes would need a
// vector sixteen times its size to hold them.
class CodePoints {
 public:
  explicit CodePoints(std::string_view s) : s_(s) {}
  class iterator {
   public:
    iterator(std::string_view s, std::size_t at) : s_(s), at_(at) {}
    std::string_view operator*() const { return s_.substr(at_, next_code_point(s_, at_) - at_); }
    iterator& operator++() {
      at_ = next_code_point(s_, at_);
      return *this;
    }
    bool operator!=(const iterator& other) const { return at_ != other.at_; }

   private:
    std::string_view s_;
    std::size_t at_;
  };
  iterator begin() const { return {s_, 0}; }
  iterator end() const { return {s_, s_.size()}; }

 private:
  std::string_view s_;
};

char32_t decode(std::string_view cp) {
  utf8proc_int32_t code = 0;
  if (utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(cp.data()),
                       static_cast<utf8proc_ssize_t>(cp.size()), &code) <= 0)
    return 0xfffd;
  return static_cast<char32_t>(code);
}

void append_code(std::string& out, char32_t code) {
  utf8proc_uint8_t buffer[4];
  const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(code), buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

// Python's str.isspace.
bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
         c == 0x205f || c == 0x3000;
}

// str.strip/lstrip/rstrip: whitespace when chars is null, else any code point of chars.
std::string python_strip(std::string_view s, const std::string* chars, bool left, bool right) {
  std::unordered_set<char32_t> strip_set;
  if (chars != nullptr)
    for (const auto cp : CodePoints(*chars)) strip_set.insert(decode(cp));
  const auto strippable = [&](std::string_view cp) {
    if (chars == nullptr) return is_python_space(decode(cp));
    return strip_set.count(decode(cp)) != 0;
  };
  std::size_t begin = 0;
  std::size_t end = s.size();
  if (left)
    while (begin < end && strippable(s.substr(begin, next_code_point(s, begin) - begin)))
      begin = next_code_point(s, begin);
  if (right)
    while (end > begin &&
           strippable(s.substr(previous_code_point(s, end), end - previous_code_point(s, end))))
      end = previous_code_point(s, end);
  return std::string(s.substr(begin, end - begin));
}

enum class CaseMapping : std::uint8_t { upper, lower };

// The one-to-many mappings of Unicode's SpecialCasing.txt that Python applies and utf8proc's
// simple mappings lack, for the letters chat text plausibly holds (German sharp s, the Latin
// ligatures, dotted capital I). The remaining ones (Greek with iota subscript, Armenian
// ligatures, a few Latin letters with marks) map one-to-one here.
std::string_view special_case(char32_t code, CaseMapping mapping) {
  if (mapping == CaseMapping::lower) return code == 0x130 ? "i\xcc\x87" : "";
  switch (code) {
    case 0xdf:
      return "SS";
    case 0x149:
      return "\xca\xbcN";
    case 0xfb00:
      return "FF";
    case 0xfb01:
      return "FI";
    case 0xfb02:
      return "FL";
    case 0xfb03:
      return "FFI";
    case 0xfb04:
      return "FFL";
    case 0xfb05:
    case 0xfb06:
      return "ST";
    default:
      return "";
  }
}

std::string map_case(std::string_view s, CaseMapping mapping) {
  std::string out;
  out.reserve(s.size());
  for (const auto cp : CodePoints(s)) {
    if (cp.size() == 1) {
      const char c = cp[0];
      out += mapping == CaseMapping::upper ? static_cast<char>(std::toupper(c))
                                           : static_cast<char>(std::tolower(c));
      continue;
    }
    const char32_t code = decode(cp);
    if (const auto special = special_case(code, mapping); !special.empty()) {
      out += special;
      continue;
    }
    const auto code32 = static_cast<utf8proc_int32_t>(code);
    append_code(out,
                static_cast<char32_t>(mapping == CaseMapping::upper ? utf8proc_toupper(code32)
                                                                    : utf8proc_tolower(code32)));
  }
  return out;
}

bool is_cased_letter(char32_t code) {
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(code));
  return category == UTF8PROC_CATEGORY_LU || category == UTF8PROC_CATEGORY_LL ||
         category == UTF8PROC_CATEGORY_LT;
}

// Python's str.title: a cased letter after an uncased character starts a word.
std::string python_title(std::string_view s) {
  std::string out;
  bool previous_cased = false;
  for (const auto cp : CodePoints(s)) {
    const char32_t code = decode(cp);
    const bool cased = is_cased_letter(code);
    out += map_case(cp, previous_cased ? CaseMapping::lower : CaseMapping::upper);
    previous_cased = cased;
  }
  return out;
}

std::string python_capitalize(std::string_view s) {
  if (s.empty()) return {};
  const std::size_t first = next_code_point(s, 0);
  return map_case(s.substr(0, first), CaseMapping::upper) +
         map_case(s.substr(first), CaseMapping::lower);
}

std::string python_replace(const std::string& s, const std::string& old_text,
                           const std::string& new_text, std::int64_t count) {
  std::string out;
  if (old_text.empty()) {
    // Python inserts the replacement before every code point and at the end.
    const std::size_t slots = utf8_length(s) + 1;
    check_text_size(s.size(), count < 0 ? slots : std::min<std::size_t>(slots, count),
                    new_text.size());
    std::int64_t done = 0;
    for (const auto cp : CodePoints(s)) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
      }
      out += cp;
    }
    if (count < 0 || done < count) out += new_text;
    return out;
  }
  // The result's size first, so that a growing replacement fails before it allocates (and
  // stops counting as soon as it would).
  const std::size_t growth =
      new_text.size() > old_text.size() ? new_text.size() - old_text.size() : 0;
  std::size_t matches = 0;
  for (std::size_t at = find_text(s, old_text, 0);
       at != std::string::npos && (count < 0 || static_cast<std::int64_t>(matches) < count);
       at = find_text(s, old_text, at + old_text.size())) {
    ++matches;
    check_text_size(s.size(), matches, growth);
  }
  out.reserve(s.size() + matches * new_text.size() - matches * old_text.size());
  std::size_t from = 0;
  for (std::size_t done = 0; done < matches; ++done) {
    const std::size_t at = find_text(s, old_text, from);
    out.append(s, from, at - from);
    out += new_text;
    from = at + old_text.size();
  }
  out.append(s, from);
  return out;
}

// Python's str.splitlines (without keepends).
std::vector<std::string> python_splitlines(std::string_view s) {
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t at = 0; at < s.size();) {
    const std::size_t next = next_code_point(s, at);
    const char32_t c = decode(s.substr(at, next - at));
    const bool boundary = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c ||
                          c == 0x1d || c == 0x1e || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!boundary) {
      line += s.substr(at, next - at);
      at = next;
      continue;
    }
    at = (c == '\r' && next < s.size() && s[next] == '\n') ? next + 1 : next;
    check_list_size(lines.size() + 1);
    lines.push_back(std::move(line));
    line.clear();
  }
  if (!line.empty()) {
    check_list_size(lines.size() + 1);
    lines.push_back(std::move(line));
  }
  return lines;
}

// The indices a slice takes, start, start + step, ... (count of them), as Python's
// slice.indices gives them for a sequence of this length.
struct SliceIndices {
  std::int64_t start = 0;
  std::int64_t step = 1;
  std::size_t count = 0;
};
SliceIndices slice_indices(std::size_t length, const Value& start_value, const Value& stop_value,
                           const Value& step_value,
                           const std::function<void(const std::string&)>& fail) {
  const auto as_index = [&](const Value& v, const char* what) -> std::optional<std::int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (!v.is_int() && !v.is_bool())
      fail(std::string("slice ") + what + " must be an integer or none, not " + v.type_name());
    return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int();
  };
  const auto n = static_cast<std::int64_t>(length);
  // A step past the length takes one item either way; this one can be negated.
  const std::int64_t step =
      std::max(as_index(step_value, "step").value_or(1), -std::numeric_limits<std::int64_t>::max());
  if (step == 0) fail("slice step cannot be zero");
  const auto clamp = [&](std::optional<std::int64_t> v, std::int64_t if_absent) {
    if (!v) return if_absent;
    std::int64_t i = *v;
    if (i < 0) i += n;
    if (step > 0) return std::clamp<std::int64_t>(i, 0, n);
    return std::clamp<std::int64_t>(i, -1, n - 1);
  };
  const std::int64_t start = clamp(as_index(start_value, "start"), step > 0 ? 0 : n - 1);
  const std::int64_t stop = clamp(as_index(stop_value, "stop"), step > 0 ? n : -1);
  const std::int64_t span = step > 0 ? stop - start : start - stop;
  const std::int64_t stride = step > 0 ? step : -step;
  return {start, step, span <= 0 ? 0 : static_cast<std::size_t>((span - 1) / stride + 1)};
}

Value make_tuple(Value a, Value b) {
  return Value(std::vector<Value>{std::move(a), std::move(b)}, true);
}

std::vector<Value> dict_items(const Dict& dict) {
  std::vector<Value> items;
  items.reserve(dict.size());
  for (const auto& [key, value] : dict.entries()) items.push_back(make_tuple(Value(key), value));
  return items;
}

}  // namespace

// ---- the renderer ----

class Renderer {
 public:
  Renderer(const Dict& variables, const RenderOptions& options)
      : variables_(variables), options_(options) {}
  // A macro holds the frame it was defined in, and that frame holds the macro: clearing the
  // frames macros captured breaks those cycles so nothing outlives the render.
  // Namespaces can hold themselves (`ns.x = ns`), so they are emptied likewise.
  ~Renderer() {
    for (const auto& frame : macro_frames_) frame->variables = Dict();
    for (const Value& made : namespaces_) made.as_namespace().attributes = Dict();
  }
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  RenderResult run(const Body& body) {
    RenderResult result;
    root_ = &result;
    out_ = &result.text;
    frame_ = std::make_shared<Frame>();
    exec_body(body);
    return result;
  }

  [[noreturn]] void fail(const Location& at, std::string message) const {
    throw JinjaError(JinjaError::Kind::render, std::move(message), at.line, at.column);
  }

  void require_defined(const Location& at, const Value& v) const {
    if (v.is_undefined()) fail(at, v.undefined_name());
  }

  // Python's str(v), held to kMaxTextBytes and kMaxValueDepth (std::length_error otherwise).
  std::string str(const Value& v) const { return to_python_string(v); }

  // Counts `steps` units of work against kMaxRenderSteps.
  void charge_steps(std::uint64_t steps) {
    steps_ += steps;
    if (steps_ > kMaxRenderSteps)
      fail(location_, "the template takes more than " + std::to_string(kMaxRenderSteps) +
                          " steps (a loop or recursion without end?)");
  }

  // Counts `bytes` that the render created against kMaxRenderBytes, and their copying as work.
  void charge_bytes(std::uint64_t bytes) {
    bytes_ += bytes;
    if (bytes_ > kMaxRenderBytes)
      fail(location_, "the template creates more than " + std::to_string(kMaxRenderBytes >> 20) +
                          " MiB of strings and lists");
    charge_steps(bytes / kBytesPerStep);
  }

  // Python's ==, its work counted.
  bool equal(const Value& a, const Value& b) {
    charge_steps(1);
    return jinja::equal(a, b,
                        [this](std::size_t bytes) { charge_steps(1 + bytes / kBytesPerStep); });
  }

  Value call(const Location& at, const Value& callee, CallArguments& args) {
    charge_steps(1);
    if (callee.is_undefined()) fail(at, callee.undefined_name());
    if (!callee.is_callable()) fail(at, "'" + callee.type_name() + "' object is not callable");
    const Location saved = call_location_;
    call_location_ = at;
    Value result = callee.as_callable().function(args);
    call_location_ = saved;
    return result;
  }

  bool apply_test(const Location& at, const std::string& name, const Value& v,
                  CallArguments& args) {
    const TestFunction test = find_test(name);
    if (test == nullptr) fail(at, "no test named '" + name + "'");
    charge_steps(1 + (v.is_string() ? v.as_string().size() / kBytesPerStep : 0));
    return test(*this, at, v, args);
  }

  Value apply_filter(const Location& at, const std::string& name, Value v, CallArguments& args) {
    const FilterFunction filter = find_filter(name);
    if (filter == nullptr) fail(at, "no filter named '" + name + "'");
    Value result = filter(*this, at, v, args);
    charge_bytes(created_bytes(result));
    return result;
  }

  // jinja2's environment.getattr: a dict's methods first, then its keys; attributes of other
  // objects; undefined (with the reason kept for the error) when absent.
  Value get_attribute(const Location& at, const Value& object, const std::string& name) {
    if (object.is_undefined()) fail(at, object.undefined_name());
    if (has_method(object, name)) {
      return Value::callable(name, [this, object, name](CallArguments& args) {
        return call_method(call_location_, object, name, args);
      });
    }
    if (object.is_dict()) {
      if (const Value* found = object.as_dict().find(name)) return *found;
      return Value::undefined("'dict object' has no attribute '" + name + "'");
    }
    if (object.is_namespace()) {
      if (const Value* found = object.as_namespace().attributes.find(name)) return *found;
      return Value::undefined("'Namespace object' has no attribute '" + name + "'");
    }
    return Value::undefined("'" + object.type_name() + " object' has no attribute '" + name + "'");
  }

  // jinja2's environment.getitem: subscription, falling back to attributes for string keys.
  Value get_item(const Location& at, const Value& object, const Value& key) {
    if (object.is_undefined()) fail(at, object.undefined_name());
    if (object.is_dict()) {
      if (key.is_string()) {
        if (const Value* found = object.as_dict().find(key.as_string())) return *found;
        if (has_method(object, key.as_string())) return get_attribute(at, object, key.as_string());
      }
      return Value::undefined("'dict object' has no attribute " + to_python_repr(key));
    }
    if (object.is_list() || object.is_string()) {
      if (key.is_string()) return get_attribute(at, object, key.as_string());
      // jinja2 turns a failed subscription (a float or undefined index) into undefined.
      if (!key.is_int() && !key.is_bool())
        return Value::undefined(object.type_name() + " indices must be integers or slices, not " +
                                key.type_name());
      std::int64_t index = key.is_bool() ? std::int64_t{key.as_bool()} : key.as_int();
      if (object.is_list()) {
        const auto& items = object.as_list().items;
        const auto n = static_cast<std::int64_t>(items.size());
        if (index < 0) index += n;
        if (index < 0 || index >= n)
          return Value::undefined("list object has no element " + std::to_string(key.as_int()));
        return items[static_cast<std::size_t>(index)];
      }
      const std::string& s = object.as_string();
      const auto n = static_cast<std::int64_t>(utf8_length(s));
      if (index < 0) index += n;
      if (index < 0 || index >= n)
        return Value::undefined("str object has no element " + std::to_string(key.as_int()));
      std::size_t offset = 0;
      for (std::int64_t i = 0; i < index; ++i) offset = next_code_point(s, offset);
      return Value(s.substr(offset, next_code_point(s, offset) - offset));
    }
    if (object.is_namespace() && key.is_string()) return get_attribute(at, object, key.as_string());
    return Value::undefined("'" + object.type_name() + " object' has no attribute " +
                            to_python_repr(key));
  }

  // The items a for loop or a filter iterates: a list's items, a dict's keys, a string's
  // characters, nothing for undefined. Copying them and walking them are counted.
  std::vector<Value> iterate(const Location& at, const Value& v) {
    std::vector<Value> items = iterated(at, v);
    charge_steps(items.size());
    charge_bytes(items.size() * sizeof(Value));
    return items;
  }

  const RenderOptions& options() const { return options_; }

 private:
  std::vector<Value> iterated(const Location& at, const Value& v) const {
    switch (v.kind()) {
      case Value::Kind::undefined:
        return {};
      case Value::Kind::list:
        return v.as_list().items;
      case Value::Kind::dict: {
        std::vector<Value> keys;
        for (const auto& entry : v.as_dict().entries()) keys.emplace_back(entry.first);
        return keys;
      }
      case Value::Kind::string: {
        std::vector<Value> chars;
        check_list_size(utf8_length(v.as_string()));
        for (const auto cp : CodePoints(v.as_string())) chars.emplace_back(std::string(cp));
        return chars;
      }
      default:
        fail(at, "'" + v.type_name() + "' object is not iterable");
    }
  }

  struct Frame {
    Dict variables;
    std::shared_ptr<Frame> parent;
  };

  // What evaluating a statement or an expression costs: a level of the renderer's recursion,
  // held to kMaxRenderNesting, and a step. Budget errors name the innermost one being evaluated.
  class Visit {
   public:
    Visit(Renderer& renderer, const Location& at)
        : renderer_(renderer), saved_location_(renderer.location_) {
      renderer_.location_ = at;
      if (renderer_.nesting_ >= kMaxRenderNesting)
        renderer_.fail(at, "the template nests statements, expressions and macro calls more than " +
                               std::to_string(kMaxRenderNesting) + " levels deep");
      ++renderer_.nesting_;
      renderer_.charge_steps(1);
    }
    ~Visit() {
      --renderer_.nesting_;
      renderer_.location_ = saved_location_;
    }
    Visit(const Visit&) = delete;
    Visit& operator=(const Visit&) = delete;

   private:
    Renderer& renderer_;
    Location saved_location_;
  };

  // The bytes a computed value took to make: a string's, or a list's or dict's items. Values that
  // are only passed along (a variable, an item of another list) are shared, not created again.
  static std::uint64_t created_bytes(const Value& v) {
    if (v.is_string()) return v.as_string().size();
    if (v.is_list()) return v.as_list().items.size() * sizeof(Value);
    if (v.is_dict()) return v.as_dict().size() * sizeof(std::pair<std::string, Value>);
    return 0;
  }
  static bool creates_value(Expr::Type type) {
    return type != Expr::Type::name && type != Expr::Type::attribute &&
           type != Expr::Type::subscript && type != Expr::Type::conditional &&
           type != Expr::Type::literal;
  }
  enum class Flow : std::uint8_t { normal, loop_break, loop_continue };

  // ---- statements ----

  Flow exec_body(const Body& body) {
    for (const auto& stmt : body) {
      const Flow flow = exec(*stmt);
      if (flow != Flow::normal) return flow;
    }
    return Flow::normal;
  }

  // Every statement, with the size of what it wrote held to kMaxTextBytes and counted.
  Flow exec(const Stmt& stmt) {
    const Visit visit(*this, stmt.location);
    const std::size_t size_before = out_->size();
    Flow flow = Flow::normal;
    try {
      flow = exec_statement(stmt);
    } catch (const std::length_error& e) {
      fail(stmt.location, e.what());
    } catch (const std::bad_alloc&) {
      fail(stmt.location, "the template ran out of memory");
    }
    if (out_->size() > size_before) charge_bytes(out_->size() - size_before);
    return flow;
  }

  Flow exec_statement(const Stmt& stmt) {
    switch (stmt.type) {
      case Stmt::Type::text:
        write(stmt.text);
        return Flow::normal;
      case Stmt::Type::output: {
        const Value v = eval(*stmt.expr);
        write(v.is_string() ? v.as_string() : str(v));
        return Flow::normal;
      }
      case Stmt::Type::if_chain:
        for (const auto& [condition, body] : stmt.branches)
          if (condition == nullptr || eval(*condition).truthy()) return exec_body(body);
        return Flow::normal;
      case Stmt::Type::for_loop:
        exec_for(stmt);
        return Flow::normal;
      case Stmt::Type::set:
        exec_set(stmt);
        return Flow::normal;
      case Stmt::Type::set_block: {
        Value captured(capture(stmt.body));
        for (const auto& filter : stmt.filters) captured = apply_filter_expr(*filter, captured);
        frame_->variables.set(stmt.targets[0], std::move(captured));
        return Flow::normal;
      }
      case Stmt::Type::macro:
        frame_->variables.set(stmt.targets[0], make_macro(stmt));
        return Flow::normal;
      case Stmt::Type::call_block: {
        const Value caller = make_macro(stmt);
        const Expr& call_expr = *stmt.expr;
        const Value callee = eval(*call_expr.operands[0]);
        CallArguments args = eval_arguments(call_expr.arguments);
        args.keyword.emplace_back("caller", caller);
        write(str(call(call_expr.location, callee, args)));
        return Flow::normal;
      }
      case Stmt::Type::filter_block: {
        Value captured(capture(stmt.body));
        for (const auto& filter : stmt.filters) captured = apply_filter_expr(*filter, captured);
        write(str(captured));
        return Flow::normal;
      }
      case Stmt::Type::loop_break:
        return Flow::loop_break;
      case Stmt::Type::loop_continue:
        return Flow::loop_continue;
      case Stmt::Type::generation: {
        if (out_ != &root_->text)
          fail(stmt.location, "a generation block inside a captured block (set, filter, macro)");
        const std::size_t begin = out_->size();
        const Flow flow = exec_body(stmt.body);
        root_->generation_ranges.push_back({begin, out_->size()});
        return flow;
      }
    }
    return Flow::normal;
  }

  // Appends to the text being written, refusing to pass kMaxTextBytes before it allocates.
  void write(std::string_view text) {
    check_text_size(out_->size(), 1, text.size());
    *out_ += text;
  }

  std::string capture(const Body& body) {
    std::string buffer;
    std::string* saved = out_;
    out_ = &buffer;
    exec_body(body);
    out_ = saved;
    return buffer;
  }

  void assign_targets(const Location& at, const std::vector<std::string>& targets, const Value& v,
                      Dict& into) {
    if (targets.size() == 1) {
      into.set(targets[0], v);
      return;
    }
    if (!v.is_list())
      fail(at, "cannot unpack a '" + v.type_name() + "' into " + std::to_string(targets.size()) +
                   " names");
    const auto& items = v.as_list().items;
    if (items.size() != targets.size())
      fail(at, "cannot unpack " + std::to_string(items.size()) + " values into " +
                   std::to_string(targets.size()) + " names");
    for (std::size_t i = 0; i < targets.size(); ++i) into.set(targets[i], items[i]);
  }

  void exec_set(const Stmt& stmt) {
    Value v = eval(*stmt.expr);
    if (!stmt.attribute.empty()) {
      const Value target = lookup(stmt.targets[0]);
      if (!target.is_namespace())
        fail(stmt.location,
             "cannot assign attribute on non-namespace object '" + stmt.targets[0] + "'");
      target.as_namespace().attributes.set(stmt.attribute, std::move(v));
      return;
    }
    assign_targets(stmt.location, stmt.targets, v, frame_->variables);
  }

  void exec_for(const Stmt& stmt) {
    const Value iterable = eval(*stmt.expr);
    std::vector<Value> items = iterate(stmt.expr->location, iterable);
    if (stmt.condition) {
      // The inline `if` filters before loop.* is computed, as in jinja2.
      std::vector<Value> kept;
      for (auto& item : items) {
        auto scope = push_frame();
        assign_targets(stmt.location, stmt.targets, item, frame_->variables);
        const bool keep = eval(*stmt.condition).truthy();
        pop_frame(scope);
        if (keep) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      exec_body(stmt.else_body);
      return;
    }
    const auto n = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < n; ++i) {
      charge_steps(kFrameSteps);  // an empty body costs its iterations too
      auto scope = push_frame();
      Dict loop;
      loop.reserve(12);
      loop.set("index", Value(i + 1));
      loop.set("index0", Value(i));
      loop.set("revindex", Value(n - i));
      loop.set("revindex0", Value(n - i - 1));
      loop.set("first", Value(i == 0));
      loop.set("last", Value(i == n - 1));
      loop.set("length", Value(n));
      loop.set("previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)]
                                 : Value::undefined("there is no previous item"));
      loop.set("nextitem", i + 1 < n ? items[static_cast<std::size_t>(i + 1)]
                                     : Value::undefined("there is no next item"));
      loop.set("depth", Value(1));
      loop.set("depth0", Value(0));
      frame_->variables.set("loop", Value(std::move(loop)));
      assign_targets(stmt.location, stmt.targets, items[static_cast<std::size_t>(i)],
                     frame_->variables);
      const Flow flow = exec_body(stmt.body);
      pop_frame(scope);
      if (flow == Flow::loop_break) break;
    }
  }

  std::shared_ptr<Frame> push_frame() {
    auto saved = frame_;
    frame_ = std::make_shared<Frame>(Frame{{}, saved});
    return saved;
  }
  void pop_frame(std::shared_ptr<Frame>& saved) { frame_ = std::move(saved); }

  Value make_macro(const Stmt& stmt) {
    const std::string name = stmt.type == Stmt::Type::macro ? stmt.targets[0] : "caller";
    std::shared_ptr<Frame> closure = frame_;
    macro_frames_.push_back(closure);
    return Value::callable(name, [this, &stmt, closure, name](CallArguments& args) {
      const auto& parameters = stmt.parameters;
      if (args.positional.size() > parameters.size())
        fail(call_location_, "macro '" + name + "' takes not more than " +
                                 std::to_string(parameters.size()) + " argument(s)");
      // A macro calling itself without end would overflow the stack; jinja2 stops at Python's
      // recursion limit.
      if (macro_depth_ >= kMaxMacroDepth)
        fail(call_location_, "macro '" + name + "' nested more than " +
                                 std::to_string(kMaxMacroDepth) + " calls deep");
      ++macro_depth_;
      charge_steps(kFrameSteps);
      auto saved = frame_;
      frame_ = std::make_shared<Frame>(Frame{{}, closure});
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        const MacroParameter& parameter = parameters[i];
        std::optional<Value> given;
        if (i < args.positional.size()) given = args.positional[i];
        for (auto& [key, value] : args.keyword)
          if (key == parameter.name) given = value;
        if (given)
          frame_->variables.set(parameter.name, *given);
        else if (parameter.default_value)
          frame_->variables.set(parameter.name, eval(*parameter.default_value));
        else
          frame_->variables.set(parameter.name, Value::undefined("parameter '" + parameter.name +
                                                                 "' was not provided"));
      }
      for (auto& [key, value] : args.keyword) {
        const std::string& keyword = key;  // a structured binding is not captured before C++20
        const bool known = std::any_of(parameters.begin(), parameters.end(),
                                       [&](const MacroParameter& p) { return p.name == keyword; });
        if (key == "caller")
          frame_->variables.set("caller", value);
        else if (!known)
          fail(call_location_, "macro '" + name + "' takes no keyword argument '" + key + "'");
      }
      std::string rendered = capture(stmt.body);
      frame_ = saved;
      --macro_depth_;
      return Value(std::move(rendered));
    });
  }

  // ---- expressions ----

  Value lookup(const std::string& name) {
    for (const Frame* frame = frame_.get(); frame != nullptr; frame = frame->parent.get())
      if (const Value* found = frame->variables.find(name)) return *found;
    if (const Value* found = variables_.find(name)) return *found;
    if (const Value* found = global(name)) return *found;
    return Value::undefined("'" + name + "' is undefined");
  }

  CallArguments eval_arguments(const ArgumentExprs& arguments) {
    CallArguments args;
    args.positional.reserve(arguments.positional.size());
    for (const auto& expr : arguments.positional) args.positional.push_back(eval(*expr));
    for (const auto& [name, expr] : arguments.keyword) args.keyword.emplace_back(name, eval(*expr));
    return args;
  }

  Value apply_filter_expr(const Expr& expr, Value operand) {
    CallArguments args = eval_arguments(expr.arguments);
    return expr.filter(*this, expr.location, operand, args);
  }

 public:
  Value eval(const Expr& expr) {
    const Visit visit(*this, expr.location);
    try {
      Value v = eval_node(expr);
      // Operations whose growth is bounded (case mapping: 1.5 times at most) are held here.
      if (v.is_string()) check_text_size(v.as_string().size(), 0, 0);
      if (v.is_list()) check_list_size(v.as_list().items.size());
      if (creates_value(expr.type))
        charge_bytes(created_bytes(v));
      else if (v.is_string())
        charge_steps(v.as_string().size() / kBytesPerStep);  // what operations on it will scan
      return v;
    } catch (const std::length_error& e) {
      fail(expr.location, e.what());
    } catch (const std::bad_alloc&) {
      fail(expr.location, "the template ran out of memory");
    }
  }

 private:
  Value eval_node(const Expr& expr) {
    switch (expr.type) {
      case Expr::Type::literal:
        return expr.value;
      case Expr::Type::name:
        return lookup(expr.name);
      case Expr::Type::list:
      case Expr::Type::tuple: {
        std::vector<Value> items;
        items.reserve(expr.operands.size());
        for (const auto& operand : expr.operands) items.push_back(eval(*operand));
        return Value(std::move(items), expr.type == Expr::Type::tuple);
      }
      case Expr::Type::dict: {
        Dict dict;
        for (std::size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
          const Value key = eval(*expr.operands[i]);
          if (!key.is_string())
            fail(expr.operands[i]->location, "dict keys other than strings are not supported");
          charge_steps(dict.size());  // a key is looked up among those before it
          dict.set(key.as_string(), eval(*expr.operands[i + 1]));
        }
        return Value(std::move(dict));
      }
      case Expr::Type::attribute:
        return get_attribute(expr.location, eval(*expr.operands[0]), expr.name);
      case Expr::Type::subscript:
        return get_item(expr.location, eval(*expr.operands[0]), eval(*expr.operands[1]));
      case Expr::Type::slice:
        return eval_slice(expr);
      case Expr::Type::call:
        return eval_call(expr);
      case Expr::Type::filter:
        return apply_filter_expr(expr, eval(*expr.operands[0]));
      case Expr::Type::test: {
        const Value operand = eval(*expr.operands[0]);
        CallArguments args = eval_arguments(expr.arguments);
        return Value(expr.test(*this, expr.location, operand, args) != expr.negated);
      }
      case Expr::Type::unary:
        return eval_unary(expr);
      case Expr::Type::binary:
        return eval_binary(expr);
      case Expr::Type::compare: {
        Value left = eval(*expr.operands[0]);
        for (std::size_t i = 0; i < expr.ops.size(); ++i) {
          Value right = eval(*expr.operands[i + 1]);
          if (!compare(expr.location, expr.ops[i], left, right)) return Value(false);
          left = std::move(right);
        }
        return Value(true);
      }
      case Expr::Type::conditional:
        if (eval(*expr.operands[1]).truthy()) return eval(*expr.operands[0]);
        if (expr.operands[2]) return eval(*expr.operands[2]);
        return Value::undefined("the conditional expression had no else branch");
    }
    fail(expr.location, "unsupported expression");
  }

  Value eval_slice(const Expr& expr) {
    const Value object = eval(*expr.operands[0]);
    const auto part = [&](std::size_t i) {
      return expr.operands[i] ? eval(*expr.operands[i]) : Value::none();
    };
    const Value start = part(1);
    const Value stop = part(2);
    const Value step = part(3);
    const auto error = [&](const std::string& message) { fail(expr.location, message); };
    if (object.is_undefined()) fail(expr.location, object.undefined_name());
    if (object.is_list()) {
      const auto& items = object.as_list().items;
      const SliceIndices slice = slice_indices(items.size(), start, stop, step, error);
      std::vector<Value> out;
      out.reserve(slice.count);
      for (std::size_t k = 0; k < slice.count; ++k)
        out.push_back(items[static_cast<std::size_t>(slice.start + slice.step * std::int64_t(k))]);
      return Value(std::move(out), object.as_list().is_tuple);
    }
    if (object.is_string()) {
      const std::string& s = object.as_string();
      const SliceIndices slice = slice_indices(utf8_length(s), start, stop, step, error);
      std::string out;
      std::size_t at = 0;
      for (std::int64_t i = 0; i < slice.start && slice.count > 0; ++i) at = next_code_point(s, at);
      for (std::size_t k = 0; k < slice.count; ++k) {
        const std::size_t next = next_code_point(s, at);
        out.append(s, at, next - at);
        if (k + 1 == slice.count) break;
        for (std::int64_t moved = 0; moved < (slice.step > 0 ? slice.step : -slice.step); ++moved)
          at = slice.step > 0 ? next_code_point(s, at) : previous_code_point(s, at);
      }
      return Value(std::move(out));
    }
    fail(expr.location, "'" + object.type_name() + "' object is not subscriptable");
  }

  Value eval_call(const Expr& expr) {
    const Expr& callee = *expr.operands[0];
    if (callee.type == Expr::Type::attribute) {
      // Method calls go straight to the method without building a bound callable.
      const Value object = eval(*callee.operands[0]);
      if (has_method(object, callee.name)) {
        CallArguments args = eval_arguments(expr.arguments);
        return call_method(expr.location, object, callee.name, args);
      }
      const Value function = get_attribute(callee.location, object, callee.name);
      CallArguments args = eval_arguments(expr.arguments);
      return call(expr.location, function, args);
    }
    const Value function = eval(callee);
    CallArguments args = eval_arguments(expr.arguments);
    return call(expr.location, function, args);
  }

  Value eval_unary(const Expr& expr) {
    const Value v = eval(*expr.operands[0]);
    if (expr.name == "not") return Value(!v.truthy());
    require_defined(expr.location, v);
    if (v.is_bool())
      return Value(std::int64_t{expr.name == "-" ? -std::int64_t{v.as_bool()} : v.as_bool()});
    if (v.is_int()) {
      if (expr.name == "-" && v.as_int() == std::numeric_limits<std::int64_t>::min())
        overflow(expr.location);
      return Value(expr.name == "-" ? -v.as_int() : v.as_int());
    }
    if (v.is_float()) return Value(expr.name == "-" ? -v.as_float() : v.as_float());
    fail(expr.location, "bad operand type for unary " + expr.name + ": '" + v.type_name() + "'");
  }

  static bool is_integral(const Value& v) { return v.is_int() || v.is_bool(); }
  static std::int64_t integral(const Value& v) {
    return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int();
  }
  static double numeric(const Value& v) {
    return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
  }
  static bool is_numeric(const Value& v) { return v.is_number() || v.is_bool(); }

  // Python's ints are unbounded; odbatch's are 64-bit and refuse to wrap around.
  [[noreturn]] void overflow(const Location& at) const {
    fail(at, "integer overflow: template integers are limited to 64 bits");
  }
  template <typename Operation>
  Value checked(const Location& at, Operation operation, std::int64_t a, std::int64_t b) const {
    std::int64_t result = 0;
    if (operation(a, b, &result)) overflow(at);
    return Value(result);
  }

  [[noreturn]] void unsupported_operands(const Location& at, const std::string& op, const Value& a,
                                         const Value& b) const {
    require_defined(at, a);
    require_defined(at, b);
    fail(at, "unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                 b.type_name() + "'");
  }

  Value eval_binary(const Expr& expr) {
    const std::string& op = expr.name;
    if (op == "and") {
      Value left = eval(*expr.operands[0]);
      return left.truthy() ? eval(*expr.operands[1]) : left;
    }
    if (op == "or") {
      Value left = eval(*expr.operands[0]);
      return left.truthy() ? left : eval(*expr.operands[1]);
    }
    const Value a = eval(*expr.operands[0]);
    const Value b = eval(*expr.operands[1]);
    const Location& at = expr.location;
    if (op == "~") {
      std::string joined = str(a);
      const std::string right = str(b);
      check_text_size(joined.size(), 1, right.size());
      return Value(joined + right);
    }
    if (op == "+") {
      if (a.is_string() && b.is_string()) {
        check_text_size(a.as_string().size(), 1, b.as_string().size());
        return Value(a.as_string() + b.as_string());
      }
      if (a.is_list() && b.is_list()) {
        check_list_size(a.as_list().items.size() + b.as_list().items.size());
        std::vector<Value> items = a.as_list().items;
        items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
        return Value(std::move(items), a.as_list().is_tuple);
      }
      if (is_integral(a) && is_integral(b))
        return checked(
            at,
            [](std::int64_t x, std::int64_t y, std::int64_t* r) {
              return __builtin_add_overflow(x, y, r);
            },
            integral(a), integral(b));
      if (is_numeric(a) && is_numeric(b)) return Value(numeric(a) + numeric(b));
      if ((a.is_string() && b.is_undefined()) || (a.is_undefined() && b.is_string()))
        require_defined(at, a.is_undefined() ? a : b);
      if (a.is_string() || b.is_string())
        fail(at, "can only concatenate str (not \"" + (a.is_string() ? b : a).type_name() +
                     "\") to str");
      unsupported_operands(at, op, a, b);
    }
    if (op == "-") {
      if (is_integral(a) && is_integral(b))
        return checked(
            at,
            [](std::int64_t x, std::int64_t y, std::int64_t* r) {
              return __builtin_sub_overflow(x, y, r);
            },
            integral(a), integral(b));
      if (is_numeric(a) && is_numeric(b)) return Value(numeric(a) - numeric(b));
      unsupported_operands(at, op, a, b);
    }
    if (op == "*") {
      if (is_integral(a) && is_integral(b))
        return checked(
            at,
            [](std::int64_t x, std::int64_t y, std::int64_t* r) {
              return __builtin_mul_overflow(x, y, r);
            },
            integral(a), integral(b));
      if (is_numeric(a) && is_numeric(b)) return Value(numeric(a) * numeric(b));
      const auto repeat = [&](const Value& seq, std::int64_t times) -> Value {
        const std::size_t length =
            seq.is_string() ? seq.as_string().size() : seq.as_list().items.size();
        if (times > 0 && length > 0) {
          const auto count = static_cast<std::uint64_t>(times);
          if (seq.is_string())
            check_text_size(0, count, length);
          else
            check_list_size(count > kMaxTextBytes / length ? kMaxTextBytes : length * count);
        }
        // `'' * 10**18` is empty at once, not after 10**18 appends.
        const std::int64_t copies = length == 0 ? 0 : times;
        if (seq.is_string()) {
          // By doubling: `'x' * 60000000` is some 26 copies, not 60 million appends.
          const std::size_t total =
              length * static_cast<std::size_t>(std::max<std::int64_t>(0, copies));
          std::string out;
          out.reserve(total);
          if (total > 0) out = seq.as_string();
          while (out.size() < total) out.append(out, 0, std::min(out.size(), total - out.size()));
          return Value(std::move(out));
        }
        std::vector<Value> out;
        for (std::int64_t i = 0; i < copies; ++i)
          out.insert(out.end(), seq.as_list().items.begin(), seq.as_list().items.end());
        return Value(std::move(out), seq.as_list().is_tuple);
      };
      if ((a.is_string() || a.is_list()) && is_integral(b)) return repeat(a, integral(b));
      if ((b.is_string() || b.is_list()) && is_integral(a)) return repeat(b, integral(a));
      unsupported_operands(at, op, a, b);
    }
    if (op == "/" || op == "//" || op == "%") {
      if (!is_numeric(a) || !is_numeric(b)) {
        if (op == "%" && a.is_string()) fail(at, "string formatting with % is not supported");
        unsupported_operands(at, op, a, b);
      }
      if (numeric(b) == 0.0)
        fail(at, op == "/"    ? "division by zero"
                 : op == "//" ? "integer division or modulo by zero"
                              : "modulo by zero");
      if (op == "/") return Value(numeric(a) / numeric(b));
      if (is_integral(a) && is_integral(b)) {
        const std::int64_t x = integral(a);
        const std::int64_t y = integral(b);
        std::int64_t q = x / y;
        std::int64_t r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
          --q;
          r += y;
        }
        return op == "//" ? Value(q) : Value(r);
      }
      const double x = numeric(a);
      const double y = numeric(b);
      if (op == "//") return Value(std::floor(x / y));
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return Value(r);
    }
    if (op == "**") {
      if (is_integral(a) && is_integral(b) && integral(b) >= 0) {
        std::int64_t result = 1;
        for (std::int64_t i = 0; i < integral(b) && result != 0; ++i) {
          if (__builtin_mul_overflow(result, integral(a), &result)) overflow(at);
          if (result == 1 || result == -1) {
            // 1 and -1 stay so; finish by parity instead of looping up to 2**63 times.
            if (integral(a) == -1 && (integral(b) - i - 1) % 2 != 0) result = -result;
            break;
          }
        }
        return Value(result);
      }
      if (is_numeric(a) && is_numeric(b)) return Value(std::pow(numeric(a), numeric(b)));
      unsupported_operands(at, op, a, b);
    }
    fail(at, "unsupported operator '" + op + "'");
  }

 public:
  bool contains(const Location& at, const Value& container, const Value& item) {
    switch (container.kind()) {
      case Value::Kind::undefined:
        return false;
      case Value::Kind::string:
        if (!item.is_string())
          fail(at, "'in <string>' requires string as left operand, not " + item.type_name());
        return find_text(container.as_string(), item.as_string(), 0) != std::string::npos;
      case Value::Kind::list:
        return std::any_of(container.as_list().items.begin(), container.as_list().items.end(),
                           [&](const Value& candidate) { return equal(candidate, item); });
      case Value::Kind::dict:
        return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
      default:
        fail(at, "argument of type '" + container.type_name() + "' is not iterable");
    }
  }

  // Python's <, for sorting and comparisons: numbers, strings (code point order), lists.
  bool less(const Location& at, const Value& a, const Value& b, int depth = 0) {
    charge_steps(1);
    if (is_numeric(a) && is_numeric(b)) {
      if (is_integral(a) && is_integral(b)) return integral(a) < integral(b);
      return numeric(a) < numeric(b);
    }
    if (a.is_string() && b.is_string()) {
      charge_steps(std::min(a.as_string().size(), b.as_string().size()) / kBytesPerStep);
      return a.as_string() < b.as_string();
    }
    if (a.is_list() && b.is_list()) {
      if (depth >= kMaxValueDepth)
        fail(at, "a value nested more than " + std::to_string(kMaxValueDepth) + " levels deep");
      const auto& x = a.as_list().items;
      const auto& y = b.as_list().items;
      for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (equal(x[i], y[i])) continue;
        return less(at, x[i], y[i], depth + 1);
      }
      return x.size() < y.size();
    }
    require_defined(at, a);
    require_defined(at, b);
    fail(at, "'<' not supported between instances of '" + a.type_name() + "' and '" +
                 b.type_name() + "'");
  }

  bool compare(const Location& at, const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return equal(a, b);
    if (op == "!=") return !equal(a, b);
    if (op == "in") return contains(at, b, a);
    if (op == "not in") return !contains(at, b, a);
    if (op == "<") return less(at, a, b);
    if (op == ">") return less(at, b, a);
    if (op == "<=") return less(at, a, b) || equal(a, b);
    if (op == ">=") return less(at, b, a) || equal(a, b);
    fail(at, "unsupported comparison '" + op + "'");
  }

 private:
  // ---- methods of str and dict that templates call ----

  static bool has_method(const Value& object, std::string_view name) {
    static constexpr std::string_view string_methods[] = {
        "strip", "lstrip",     "rstrip",  "split", "startswith", "endswith", "upper",     "lower",
        "title", "capitalize", "replace", "find",  "count",      "join",     "splitlines"};
    static constexpr std::string_view dict_methods[] = {"items", "keys", "values", "get"};
    if (object.is_string())
      return std::find(std::begin(string_methods), std::end(string_methods), name) !=
             std::end(string_methods);
    if (object.is_dict())
      return std::find(std::begin(dict_methods), std::end(dict_methods), name) !=
             std::end(dict_methods);
    return false;
  }

  Value call_method(const Location& at, const Value& object, const std::string& name,
                    CallArguments& args);

  // The builtin globals, made on first use: most renders call none or one of them.
  const Value* global(const std::string& name);

  const Dict& variables_;
  const RenderOptions& options_;
  Dict globals_;
  std::shared_ptr<Frame> frame_;
  RenderResult* root_ = nullptr;
  std::string* out_ = nullptr;
  Location call_location_;
  int macro_depth_ = 0;
  std::vector<std::shared_ptr<Frame>> macro_frames_;
  std::vector<Value> namespaces_;  // every namespace() made, emptied when the render ends
  Location location_;              // of the statement or expression being evaluated
  int nesting_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t bytes_ = 0;
};

namespace {

// Binds a call's arguments to a builtin's parameter names, Python-style.
class Arguments {
 public:
  Arguments(Renderer& renderer, const Location& at, std::string what, CallArguments& args,
            std::initializer_list<std::string_view> names)
      : renderer_(renderer), at_(at), what_(std::move(what)), names_(names), values_(names.size()) {
    if (args.positional.size() > names_.size())
      renderer.fail(at, what_ + " takes at most " + std::to_string(names_.size()) +
                            " argument(s), got " + std::to_string(args.positional.size()));
    for (std::size_t i = 0; i < args.positional.size(); ++i) values_[i] = &args.positional[i];
    for (auto& [key, value] : args.keyword) {
      const auto found = std::find(names_.begin(), names_.end(), key);
      if (found == names_.end())
        renderer.fail(at, what_ + " got an unexpected keyword argument '" + key + "'");
      const auto index = static_cast<std::size_t>(found - names_.begin());
      if (values_[index] != nullptr)
        renderer.fail(at, what_ + " got multiple values for argument '" + key + "'");
      values_[index] = &value;
    }
  }
  bool has(std::size_t i) const { return values_[i] != nullptr; }
  const Value& get(std::size_t i) const { return *values_[i]; }
  Value get_or(std::size_t i, Value fallback) const { return has(i) ? *values_[i] : fallback; }
  std::string string(std::size_t i) const {
    const Value& v = get(i);
    if (!v.is_string())
      renderer_.fail(at_, what_ + ": argument '" + std::string(names_[i]) +
                              "' must be a string, not " + v.type_name());
    return v.as_string();
  }
  std::int64_t integer(std::size_t i) const {
    const Value& v = get(i);
    if (!v.is_int() && !v.is_bool())
      renderer_.fail(at_, what_ + ": argument '" + std::string(names_[i]) +
                              "' must be an integer, not " + v.type_name());
    return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int();
  }

 private:
  Renderer& renderer_;
  Location at_;
  std::string what_;
  std::vector<std::string_view> names_;
  std::vector<const Value*> values_;
};

std::string require_string(Renderer& r, const Location& at, const Value& v, std::string_view what) {
  r.require_defined(at, v);
  if (!v.is_string()) r.fail(at, std::string(what) + " needs a string, not " + v.type_name());
  return v.as_string();
}

std::vector<std::string> python_split(const std::string& s, const Value* separator,
                                      std::int64_t max_split) {
  std::vector<std::string> parts;
  const auto add = [&parts](std::string part) {
    check_list_size(parts.size() + 1);
    parts.push_back(std::move(part));
  };
  if (separator == nullptr || separator->is_none()) {
    // Runs of whitespace separate; leading and trailing whitespace yields no empty parts.
    const auto space_at = [&s](std::size_t at) {
      return is_python_space(decode(std::string_view(s).substr(at, next_code_point(s, at) - at)));
    };
    std::size_t at = 0;
    while (at < s.size()) {
      while (at < s.size() && space_at(at)) at = next_code_point(s, at);
      if (at == s.size()) break;
      if (max_split >= 0 && static_cast<std::int64_t>(parts.size()) == max_split) {
        add(s.substr(at));
        break;
      }
      const std::size_t word = at;
      while (at < s.size() && !space_at(at)) at = next_code_point(s, at);
      add(s.substr(word, at - word));
    }
    return parts;
  }
  const std::string& sep = separator->as_string();
  std::size_t from = 0;
  for (std::size_t at = find_text(s, sep, 0);
       at != std::string::npos &&
       (max_split < 0 || static_cast<std::int64_t>(parts.size()) < max_split);
       at = find_text(s, sep, from)) {
    add(s.substr(from, at - from));
    from = at + sep.size();
  }
  add(s.substr(from));
  return parts;
}

Value strings_to_list(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (auto& part : parts) items.emplace_back(std::move(part));
  return Value(std::move(items));
}

bool prefix_test(Renderer& r, const Location& at, const std::string& s, const Value& affixes,
                 bool prefix) {
  const auto check = [&](const Value& affix) {
    const std::string a = require_string(r, at, affix, prefix ? "startswith" : "endswith");
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0
                  : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (affixes.is_list()) {
    for (const auto& affix : affixes.as_list().items)
      if (check(affix)) return true;
    return false;
  }
  return check(affixes);
}

}  // namespace

Value Renderer::call_method(const Location& at, const Value& object, const std::string& name,
                            CallArguments& call_args) {
  if (object.is_dict()) {
    const Dict& dict = object.as_dict();
    if (name == "items") {
      Arguments(*this, at, "dict.items", call_args, {});
      return Value(dict_items(dict));
    }
    if (name == "keys" || name == "values") {
      Arguments(*this, at, "dict." + name, call_args, {});
      std::vector<Value> out;
      for (const auto& [key, value] : dict.entries())
        out.push_back(name == "keys" ? Value(key) : value);
      return Value(std::move(out));
    }
    Arguments args(*this, at, "dict.get", call_args, {"key", "default"});
    if (!args.has(0)) fail(at, "dict.get needs a key");
    if (args.get(0).is_string())
      if (const Value* found = dict.find(args.get(0).as_string())) return *found;
    return args.get_or(1, Value::none());
  }
  const std::string& s = object.as_string();
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    Arguments args(*this, at, "str." + name, call_args, {"chars"});
    const Value chars = args.get_or(0, Value::none());
    std::string chars_text;
    if (!chars.is_none()) chars_text = require_string(*this, at, chars, "str." + name);
    return Value(python_strip(s, chars.is_none() ? nullptr : &chars_text, name != "rstrip",
                              name != "lstrip"));
  }
  if (name == "split") {
    Arguments args(*this, at, "str.split", call_args, {"sep", "maxsplit"});
    const Value sep = args.get_or(0, Value::none());
    if (sep.is_string() && sep.as_string().empty()) fail(at, "empty separator");
    if (!sep.is_none()) require_string(*this, at, sep, "str.split");
    return strings_to_list(python_split(s, &sep, args.has(1) ? args.integer(1) : -1));
  }
  if (name == "splitlines") {
    Arguments(*this, at, "str.splitlines", call_args, {});
    return strings_to_list(python_splitlines(s));
  }
  if (name == "startswith" || name == "endswith") {
    Arguments args(*this, at, "str.startswith/endswith", call_args, {"affix"});
    if (!args.has(0)) fail(at, "str." + name + " needs an argument");
    return Value(prefix_test(*this, at, s, args.get(0), name == "startswith"));
  }
  if (name == "upper" || name == "lower") {
    Arguments(*this, at, "str.upper/lower", call_args, {});
    return Value(map_case(s, name == "upper" ? CaseMapping::upper : CaseMapping::lower));
  }
  if (name == "title") {
    Arguments(*this, at, "str.title", call_args, {});
    return Value(python_title(s));
  }
  if (name == "capitalize") {
    Arguments(*this, at, "str.capitalize", call_args, {});
    return Value(python_capitalize(s));
  }
  if (name == "replace") {
    Arguments args(*this, at, "str.replace", call_args, {"old", "new", "count"});
    if (!args.has(0) || !args.has(1)) fail(at, "str.replace needs old and new");
    return Value(
        python_replace(s, args.string(0), args.string(1), args.has(2) ? args.integer(2) : -1));
  }
  if (name == "find" || name == "count") {
    Arguments args(*this, at, "str.find/count", call_args, {"sub"});
    if (!args.has(0)) fail(at, "str." + name + " needs an argument");
    const std::string sub = args.string(0);
    if (name == "find") {
      const auto found = find_text(s, sub, 0);
      return Value(found == std::string::npos ? std::int64_t{-1}
                                              : static_cast<std::int64_t>(utf8_length(
                                                    std::string_view(s).substr(0, found))));
    }
    if (sub.empty()) return Value(static_cast<std::int64_t>(utf8_length(s) + 1));
    std::int64_t n = 0;
    for (auto found = find_text(s, sub, 0); found != std::string::npos;
         found = find_text(s, sub, found + sub.size()))
      ++n;
    return Value(n);
  }
  // join
  Arguments args(*this, at, "str.join", call_args, {"iterable"});
  if (!args.has(0)) fail(at, "str.join needs an iterable");
  std::string out;
  bool first = true;
  for (const auto& item : iterate(at, args.get(0))) {
    const std::string& text = require_string(*this, at, item, "str.join");
    check_text_size(out.size(), 1, (first ? 0 : s.size()) + text.size());
    if (!first) out += s;
    first = false;
    out += text;
  }
  return Value(std::move(out));
}

const Value* Renderer::global(const std::string& name) {
  if (const Value* made = globals_.find(name)) return made;
  if (name == "raise_exception")
    globals_.set("raise_exception",
                 Value::callable("raise_exception", [this](CallArguments& args) -> Value {
                   const std::string message =
                       args.positional.empty() ? std::string() : str(args.positional[0]);
                   throw JinjaError(JinjaError::Kind::raised, message, call_location_.line,
                                    call_location_.column);
                 }));
  else if (name == "namespace")
    globals_.set("namespace", Value::callable("namespace", [this](CallArguments& args) {
                   Dict attributes;
                   for (const auto& positional : args.positional) {
                     if (!positional.is_dict())
                       fail(call_location_, "namespace() takes a dict or keyword arguments");
                     for (const auto& [key, value] : positional.as_dict().entries()) {
                       charge_steps(attributes.size());
                       attributes.set(key, value);
                     }
                   }
                   for (auto& [key, value] : args.keyword) {
                     charge_steps(attributes.size());
                     attributes.set(key, value);
                   }
                   namespaces_.push_back(Value::new_namespace(std::move(attributes)));
                   return namespaces_.back();
                 }));
  else if (name == "dict")
    globals_.set("dict", Value::callable("dict", [this](CallArguments& args) {
                   if (!args.positional.empty())
                     fail(call_location_, "dict() takes keyword arguments only");
                   Dict dict;
                   for (auto& [key, value] : args.keyword) {
                     charge_steps(dict.size());
                     dict.set(key, value);
                   }
                   return Value(std::move(dict));
                 }));
  else if (name == "range")
    globals_.set("range", Value::callable("range", [this](CallArguments& call_args) {
                   Arguments args(*this, call_location_, "range", call_args, {"a", "b", "step"});
                   if (!args.has(0)) fail(call_location_, "range expected at least 1 argument");
                   const std::int64_t start = args.has(1) ? args.integer(0) : 0;
                   const std::int64_t stop = args.has(1) ? args.integer(1) : args.integer(0);
                   const std::int64_t step = args.has(2) ? args.integer(2) : 1;
                   if (step == 0) fail(call_location_, "range() arg 3 must not be zero");
                   std::vector<Value> items;
                   for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
                     // jinja2's sandbox refuses ranges over 100000 items.
                     if (items.size() >= static_cast<std::size_t>(kMaxRangeItems))
                       fail(call_location_, "range too big, the sandbox allows " +
                                                std::to_string(kMaxRangeItems) + " items");
                     items.emplace_back(i);
                     if (__builtin_add_overflow(i, step, &i)) break;  // past 64 bits: past stop
                   }
                   return Value(std::move(items));
                 }));
  else if (name == "strftime_now")
    globals_.set("strftime_now", Value::callable("strftime_now", [this](CallArguments& call_args) {
                   Arguments args(*this, call_location_, "strftime_now", call_args, {"format"});
                   if (!args.has(0)) fail(call_location_, "strftime_now needs a format");
                   const std::string format = args.string(0);
                   const std::time_t now = std::chrono::system_clock::to_time_t(options_.clock());
                   std::tm utc{};
                   gmtime_r(&now, &utc);
                   char buffer[512];
                   const std::size_t n = std::strftime(buffer, sizeof buffer, format.c_str(), &utc);
                   if (n == 0 && !format.empty())
                     fail(call_location_, "strftime_now: format too long or empty result");
                   return Value(std::string(buffer, n));
                 }));
  else
    return nullptr;
  return globals_.find(name);
}

// ---- filters ----
namespace {

Value filter_length(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "length", call_args, {});
  switch (v.kind()) {
    case Value::Kind::undefined:
      return Value(0);
    case Value::Kind::string:
      return Value(static_cast<std::int64_t>(utf8_length(v.as_string())));
    case Value::Kind::list:
      return Value(static_cast<std::int64_t>(v.as_list().items.size()));
    case Value::Kind::dict:
      return Value(static_cast<std::int64_t>(v.as_dict().size()));
    default:
      r.fail(at, "object of type '" + v.type_name() + "' has no len()");
  }
}

Value filter_trim(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "trim", call_args, {"chars"});
  const Value chars = args.get_or(0, Value::none());
  std::string chars_text;
  if (!chars.is_none()) chars_text = require_string(r, at, chars, "trim");
  return Value(python_strip(r.str(v), chars.is_none() ? nullptr : &chars_text, true, true));
}

Value filter_upper(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "upper", call_args, {});
  return Value(map_case(r.str(v), CaseMapping::upper));
}

Value filter_lower(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "lower", call_args, {});
  return Value(map_case(r.str(v), CaseMapping::lower));
}

// jinja2's title filter: words start after runs of whitespace, '-', and opening brackets.
Value filter_title(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "title", call_args, {});
  std::string out;
  bool word_start = true;
  const std::string text = r.str(v);
  for (const auto cp : CodePoints(text)) {
    const char32_t c = decode(cp);
    const bool separator =
        is_python_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    if (separator) {
      out += cp;
      word_start = true;
      continue;
    }
    out += map_case(cp, word_start ? CaseMapping::upper : CaseMapping::lower);
    word_start = false;
  }
  return Value(std::move(out));
}

Value filter_capitalize(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "capitalize", call_args, {});
  return Value(python_capitalize(r.str(v)));
}

Value filter_replace(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "replace", call_args, {"old", "new", "count"});
  if (!args.has(0) || !args.has(1)) r.fail(at, "replace needs old and new");
  return Value(python_replace(r.str(v), r.str(args.get(0)), r.str(args.get(1)),
                              args.has(2) && !args.get(2).is_none() ? args.integer(2) : -1));
}

Value filter_join(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "join", call_args, {"d", "attribute"});
  const std::string separator = args.has(0) ? r.str(args.get(0)) : std::string();
  std::string out;
  bool first = true;
  for (const auto& item : r.iterate(at, v)) {
    const std::string text =
        r.str(args.has(1) ? r.get_attribute(at, item, r.str(args.get(1))) : item);
    check_text_size(out.size(), 1, (first ? 0 : separator.size()) + text.size());
    if (!first) out += separator;
    first = false;
    out += text;
  }
  return Value(std::move(out));
}

Value filter_first(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "first", call_args, {});
  const auto items = r.iterate(at, v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value filter_last(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "last", call_args, {});
  const auto items = r.iterate(at, v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value filter_default(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "default", call_args, {"default_value", "boolean"});
  const bool boolean = args.get_or(1, Value(false)).truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return args.get_or(0, Value(""));
  return v;
}

Value filter_tojson(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  // transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
  Arguments args(r, at, "tojson", call_args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonFormat format;
  format.ensure_ascii = args.get_or(0, Value(false)).truthy();
  if (args.has(1) && !args.get(1).is_none()) {
    const std::int64_t indent = args.integer(1);
    if (indent > static_cast<std::int64_t>(kMaxTextBytes))
      check_text_size(0, 1, static_cast<std::size_t>(indent));
    format.indent = static_cast<int>(indent);
  }
  if (args.has(2) && !args.get(2).is_none()) {
    const Value& separators = args.get(2);
    if (!separators.is_list() || separators.as_list().items.size() != 2 ||
        !separators.as_list().items[0].is_string() || !separators.as_list().items[1].is_string())
      r.fail(at, "tojson: separators must be a pair of strings");
    format.item_separator = separators.as_list().items[0].as_string();
    format.key_separator = separators.as_list().items[1].as_string();
  }
  format.sort_keys = args.get_or(3, Value(false)).truthy();
  try {
    return Value(to_json(v, format));
  } catch (const std::invalid_argument& e) {
    if (v.is_undefined()) r.fail(at, v.undefined_name());
    r.fail(at, std::string("tojson: ") + e.what());
  } catch (const std::length_error& e) {
    r.fail(at, std::string("tojson: ") + e.what());
  }
}

Value filter_string(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "string", call_args, {});
  return Value(r.str(v));
}

std::optional<double> parse_python_float(std::string text) {
  text = python_strip(text, nullptr, true, true);
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double d = std::stod(text, &used);
    if (used != text.size()) return std::nullopt;
    return d;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Value filter_int(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "int", call_args, {"default", "base"});
  const Value fallback = args.get_or(0, Value(0));
  const std::int64_t base = args.has(1) ? args.integer(1) : 10;
  if (v.is_int()) return v;
  if (v.is_bool()) return Value(std::int64_t{v.as_bool()});
  if (v.is_float())
    return std::isfinite(v.as_float()) ? Value(static_cast<std::int64_t>(v.as_float())) : fallback;
  if (v.is_string()) {
    const std::string text = python_strip(v.as_string(), nullptr, true, true);
    try {
      std::size_t used = 0;
      const long long parsed = std::stoll(text, &used, static_cast<int>(base));
      if (used == text.size() && !text.empty()) return Value(static_cast<std::int64_t>(parsed));
    } catch (const std::exception&) {
    }
    if (const auto d = parse_python_float(text); d && std::isfinite(*d))
      return Value(static_cast<std::int64_t>(*d));
  }
  return fallback;
}

Value filter_float(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "float", call_args, {"default"});
  const Value fallback = args.get_or(0, Value(0.0));
  if (v.is_float()) return v;
  if (v.is_int() || v.is_bool())
    return Value(v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number());
  if (v.is_string())
    if (const auto d = parse_python_float(v.as_string())) return Value(*d);
  return fallback;
}

Value filter_list(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "list", call_args, {});
  return Value(r.iterate(at, v));
}

Value filter_items(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "items", call_args, {});
  if (v.is_undefined()) return Value(std::vector<Value>{});
  if (!v.is_dict())
    r.fail(at, "items: can only get item pairs from a mapping, not " + v.type_name());
  return Value(dict_items(v.as_dict()));
}

// Lower-cases strings when sorting without case sensitivity, like jinja2's ignore_case.
Value sort_key(Renderer& r, const Location& at, const Value& v, bool case_sensitive,
               const std::string* attribute) {
  Value key = attribute != nullptr ? r.get_attribute(at, v, *attribute) : v;
  if (!case_sensitive && key.is_string())
    key = Value(map_case(key.as_string(), CaseMapping::lower));
  return key;
}

Value filter_dictsort(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "dictsort", call_args, {"case_sensitive", "by", "reverse"});
  if (!v.is_dict()) r.fail(at, "dictsort needs a dict, not " + v.type_name());
  const bool case_sensitive = args.get_or(0, Value(false)).truthy();
  const std::string by = args.has(1) ? args.string(1) : "key";
  if (by != "key" && by != "value")
    r.fail(at, "dictsort: you can only sort by either \"key\" or \"value\"");
  const bool reverse = args.get_or(2, Value(false)).truthy();
  std::vector<Value> items = dict_items(v.as_dict());
  const std::size_t part = by == "key" ? 0 : 1;
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = sort_key(r, at, a.as_list().items[part], case_sensitive, nullptr);
    const Value kb = sort_key(r, at, b.as_list().items[part], case_sensitive, nullptr);
    return reverse ? r.less(at, kb, ka) : r.less(at, ka, kb);
  });
  return Value(std::move(items));
}

Value filter_map(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  std::vector<Value> out;
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (auto& [key, value] : call_args.keyword) {
    if (key == "attribute")
      attribute = &value;
    else if (key == "default")
      fallback = &value;
  }
  if (attribute != nullptr) {
    if (!call_args.positional.empty() ||
        call_args.keyword.size() != (fallback != nullptr ? 2u : 1u))
      r.fail(at, "map: attribute= takes only an optional default=");
    const std::string name = r.str(*attribute);
    for (const auto& item : r.iterate(at, v)) {
      Value mapped = r.get_attribute(at, item, name);
      if (mapped.is_undefined() && fallback != nullptr) mapped = *fallback;
      out.push_back(std::move(mapped));
    }
    return Value(std::move(out));
  }
  if (call_args.positional.empty()) r.fail(at, "map needs a filter name or attribute=");
  const std::string filter = require_string(r, at, call_args.positional[0], "map");
  for (const auto& item : r.iterate(at, v)) {
    CallArguments rest;
    rest.positional.assign(call_args.positional.begin() + 1, call_args.positional.end());
    rest.keyword = call_args.keyword;
    out.push_back(r.apply_filter(at, filter, item, rest));
  }
  return Value(std::move(out));
}

// select/reject/selectattr/rejectattr share one shape: an optional attribute, then a test name
// and its arguments (no test: the value's truth).
Value select_items(Renderer& r, const Location& at, Value& v, CallArguments& call_args, bool keep,
                   bool by_attribute) {
  if (!call_args.keyword.empty()) r.fail(at, "select filters take positional arguments only");
  std::size_t next = 0;
  std::string attribute;
  if (by_attribute) {
    if (call_args.positional.empty()) r.fail(at, "selectattr/rejectattr need an attribute name");
    attribute = require_string(r, at, call_args.positional[next++], "selectattr");
  }
  std::string test;
  if (next < call_args.positional.size())
    test = require_string(r, at, call_args.positional[next++], "select");
  CallArguments test_args;
  test_args.positional.assign(call_args.positional.begin() + static_cast<std::ptrdiff_t>(next),
                              call_args.positional.end());
  std::vector<Value> out;
  for (const auto& item : r.iterate(at, v)) {
    const Value subject = by_attribute ? r.get_attribute(at, item, attribute) : item;
    CallArguments args = test_args;
    const bool passed = test.empty() ? subject.truthy() : r.apply_test(at, test, subject, args);
    if (passed == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

Value filter_select(Renderer& r, const Location& at, Value& v, CallArguments& a) {
  return select_items(r, at, v, a, true, false);
}
Value filter_reject(Renderer& r, const Location& at, Value& v, CallArguments& a) {
  return select_items(r, at, v, a, false, false);
}
Value filter_selectattr(Renderer& r, const Location& at, Value& v, CallArguments& a) {
  return select_items(r, at, v, a, true, true);
}
Value filter_rejectattr(Renderer& r, const Location& at, Value& v, CallArguments& a) {
  return select_items(r, at, v, a, false, true);
}

Value filter_unique(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "unique", call_args, {"case_sensitive", "attribute"});
  const bool case_sensitive = args.get_or(0, Value(false)).truthy();
  const std::string attribute = args.has(1) ? r.str(args.get(1)) : std::string();
  std::vector<Value> out;
  std::vector<Value> seen;
  for (const auto& item : r.iterate(at, v)) {
    const Value key =
        sort_key(r, at, item, case_sensitive, attribute.empty() ? nullptr : &attribute);
    if (std::any_of(seen.begin(), seen.end(),
                    [&](const Value& earlier) { return r.equal(earlier, key); }))
      continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value(std::move(out));
}

Value filter_reverse(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "reverse", call_args, {});
  if (v.is_string()) {
    const std::string& s = v.as_string();
    std::string out;
    out.reserve(s.size());
    for (std::size_t end = s.size(); end > 0;) {
      const std::size_t begin = previous_code_point(s, end);
      out.append(s, begin, end - begin);
      end = begin;
    }
    return Value(std::move(out));
  }
  auto items = r.iterate(at, v);
  std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

Value filter_sort(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "sort", call_args, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = args.get_or(0, Value(false)).truthy();
  const bool case_sensitive = args.get_or(1, Value(false)).truthy();
  const std::string attribute = args.has(2) ? r.str(args.get(2)) : std::string();
  auto items = r.iterate(at, v);
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = sort_key(r, at, a, case_sensitive, attribute.empty() ? nullptr : &attribute);
    const Value kb = sort_key(r, at, b, case_sensitive, attribute.empty() ? nullptr : &attribute);
    return reverse ? r.less(at, kb, ka) : r.less(at, ka, kb);
  });
  return Value(std::move(items));
}

Value filter_abs(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "abs", call_args, {});
  if (v.is_int()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
  if (v.is_bool()) return Value(std::int64_t{v.as_bool()});
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  r.require_defined(at, v);
  r.fail(at, "bad operand type for abs(): '" + v.type_name() + "'");
}

Value filter_round(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "round", call_args, {"precision", "method"});
  const std::int64_t precision = args.has(0) ? args.integer(0) : 0;
  const std::string method = args.has(1) ? args.string(1) : "common";
  r.require_defined(at, v);
  if (!v.is_number() && !v.is_bool()) r.fail(at, "round needs a number, not " + v.type_name());
  const double x = v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
  const double scale = std::pow(10.0, static_cast<double>(precision));
  if (method == "common") {
    // Python's round(value, precision): an int stays an int; a float rounds half to even on its
    // exact decimal expansion, which printf's correctly rounded %.*f gives.
    if (v.is_int()) return v;
    if (precision < 0 || !std::isfinite(x)) return Value(std::nearbyint(x * scale) / scale);
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%.*f",
                  static_cast<int>(std::min<std::int64_t>(precision, 300)), x);
    return Value(std::strtod(buffer, nullptr));
  }
  if (method == "ceil") return Value(std::ceil(x * scale) / scale);
  if (method == "floor") return Value(std::floor(x * scale) / scale);
  r.fail(at, "round: method must be common, ceil or floor");
}

Value filter_indent(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments args(r, at, "indent", call_args, {"width", "first", "blank"});
  std::string indentation(4, ' ');
  if (args.has(0)) {
    const Value& width = args.get(0);
    if (width.is_string()) {
      indentation = width.as_string();
    } else {
      const auto spaces = static_cast<std::size_t>(std::max<std::int64_t>(0, args.integer(0)));
      check_text_size(0, 1, spaces);
      indentation.assign(spaces, ' ');
    }
  }
  const bool first = args.get_or(1, Value(false)).truthy();
  const bool blank = args.get_or(2, Value(false)).truthy();
  // jinja2 appends a newline before splitting, so a trailing newline survives.
  const std::string text = r.str(v);
  const auto lines = python_splitlines(text + "\n");
  check_text_size(text.size() + 1, lines.size() + 1, indentation.size());
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out += '\n';
      if (blank || !lines[i].empty()) out += indentation;
    }
    out += lines[i];
  }
  if (first) out = indentation + out;
  return Value(std::move(out));
}

// jinja2 counts matches of Python's \\w+: runs of letters, numbers and underscores.
Value filter_wordcount(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "wordcount", call_args, {});
  const std::string text = r.str(v);
  std::int64_t words = 0;
  bool in_word = false;
  for (const auto cp : CodePoints(text)) {
    const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(decode(cp)));
    const bool word_char = cp == "_" ||
                           (category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO) ||
                           (category >= UTF8PROC_CATEGORY_ND && category <= UTF8PROC_CATEGORY_NO);
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value(words);
}

Value filter_safe(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "safe", call_args, {});
  return v;
}

Value filter_escape(Renderer& r, const Location& at, Value& v, CallArguments& call_args) {
  Arguments(r, at, "escape", call_args, {});
  std::string out;
  const std::string text = r.str(v);
  // Each character becomes at most five ("&#39;").
  if (text.size() > kMaxTextBytes / 5) {
    std::size_t grown = text.size();
    for (const char c : text)
      grown += c == '&' ? 4 : (c == '<' || c == '>') ? 3 : (c == '"' || c == '\'') ? 4 : 0;
    check_text_size(grown, 0, 0);
  }
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return Value(std::move(out));
}

// ---- tests ----

bool test_defined(Renderer&, const Location&, const Value& v, CallArguments&) {
  return !v.is_undefined();
}
bool test_undefined(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_undefined();
}
bool test_none(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_none();
}
bool test_boolean(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_bool();
}
bool test_true(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_bool() && v.as_bool();
}
bool test_false(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_bool() && !v.as_bool();
}
bool test_string(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_string();
}
bool test_number(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_number() || v.is_bool();
}
bool test_integer(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_int();
}
bool test_float(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_float();
}
bool test_mapping(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_dict();
}
bool test_callable(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_callable();
}
// jinja2's Undefined defines __iter__, so it counts as iterable.
bool test_iterable(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
}
bool test_sequence(Renderer&, const Location&, const Value& v, CallArguments&) {
  return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
}

const Value& single_argument(Renderer& r, const Location& at, CallArguments& args,
                             std::string_view test) {
  if (args.positional.size() != 1 || !args.keyword.empty())
    r.fail(at, "test '" + std::string(test) + "' takes exactly one argument");
  return args.positional[0];
}

bool test_eq(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  return r.equal(v, single_argument(r, at, a, "eq"));
}
bool test_ne(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  return !r.equal(v, single_argument(r, at, a, "ne"));
}
bool test_lt(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  return r.less(at, v, single_argument(r, at, a, "lt"));
}
bool test_gt(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  return r.less(at, single_argument(r, at, a, "gt"), v);
}
bool test_le(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  return r.compare(at, "<=", v, single_argument(r, at, a, "le"));
}
bool test_ge(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  return r.compare(at, ">=", v, single_argument(r, at, a, "ge"));
}
bool test_in(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  return r.contains(at, single_argument(r, at, a, "in"), v);
}
bool test_sameas(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  const Value& other = single_argument(r, at, a, "sameas");
  if (v.kind() != other.kind()) return false;
  if (v.is_none() || v.is_bool()) return v == other;
  if (v.is_list()) return &v.as_list() == &other.as_list();
  if (v.is_dict()) return &v.as_dict() == &other.as_dict();
  return v == other && (v.is_callable() || v.is_namespace());
}

std::int64_t integer_operand(Renderer& r, const Location& at, const Value& v,
                             std::string_view test) {
  if (!v.is_int() && !v.is_bool()) {
    r.require_defined(at, v);
    r.fail(at, "test '" + std::string(test) + "' needs an integer, not " + v.type_name());
  }
  return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int();
}

bool test_odd(Renderer& r, const Location& at, const Value& v, CallArguments&) {
  return integer_operand(r, at, v, "odd") % 2 != 0;
}
bool test_even(Renderer& r, const Location& at, const Value& v, CallArguments&) {
  return integer_operand(r, at, v, "even") % 2 == 0;
}
bool test_divisibleby(Renderer& r, const Location& at, const Value& v, CallArguments& a) {
  const std::int64_t divisor =
      integer_operand(r, at, single_argument(r, at, a, "divisibleby"), "divisibleby");
  if (divisor == 0) r.fail(at, "integer division or modulo by zero");
  return integer_operand(r, at, v, "divisibleby") % divisor == 0;
}

}  // namespace

FilterFunction find_filter(std::string_view name) {
  static const std::unordered_map<std::string_view, FilterFunction> filters = {
      {"length", filter_length},
      {"count", filter_length},
      {"trim", filter_trim},
      {"upper", filter_upper},
      {"lower", filter_lower},
      {"title", filter_title},
      {"capitalize", filter_capitalize},
      {"replace", filter_replace},
      {"join", filter_join},
      {"first", filter_first},
      {"last", filter_last},
      {"default", filter_default},
      {"d", filter_default},
      {"tojson", filter_tojson},
      {"string", filter_string},
      {"int", filter_int},
      {"float", filter_float},
      {"list", filter_list},
      {"items", filter_items},
      {"dictsort", filter_dictsort},
      {"map", filter_map},
      {"select", filter_select},
      {"reject", filter_reject},
      {"selectattr", filter_selectattr},
      {"rejectattr", filter_rejectattr},
      {"unique", filter_unique},
      {"reverse", filter_reverse},
      {"sort", filter_sort},
      {"abs", filter_abs},
      {"round", filter_round},
      {"indent", filter_indent},
      {"safe", filter_safe},
      {"escape", filter_escape},
      {"e", filter_escape},
      {"wordcount", filter_wordcount},
  };
  const auto found = filters.find(name);
  return found == filters.end() ? nullptr : found->second;
}

TestFunction find_test(std::string_view name) {
  static const std::unordered_map<std::string_view, TestFunction> tests = {
      {"defined", test_defined},
      {"undefined", test_undefined},
      {"none", test_none},
      {"boolean", test_boolean},
      {"true", test_true},
      {"false", test_false},
      {"string", test_string},
      {"number", test_number},
      {"integer", test_integer},
      {"float", test_float},
      {"mapping", test_mapping},
      {"iterable", test_iterable},
      {"sequence", test_sequence},
      {"callable", test_callable},
      {"eq", test_eq},
      {"equalto", test_eq},
      {"==", test_eq},
      {"ne", test_ne},
      {"!=", test_ne},
      {"lt", test_lt},
      {"lessthan", test_lt},
      {"<", test_lt},
      {"gt", test_gt},
      {"greaterthan", test_gt},
      {">", test_gt},
      {"le", test_le},
      {"<=", test_le},
      {"ge", test_ge},
      {">=", test_ge},
      {"in", test_in},
      {"sameas", test_sameas},
      {"odd", test_odd},
      {"even", test_even},
      {"divisibleby", test_divisibleby},
  };
  const auto found = tests.find(name);
  return found == tests.end() ? nullptr : found->second;
}

}  // namespace detail

Template::Template(std::string_view source)
    : parsed_(std::make_unique<detail::ParsedTemplate>(
          detail::ParsedTemplate{detail::parse_template(source)})) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

RenderResult Template::render(const Dict& variables, const RenderOptions& options) const {
  detail::Renderer renderer(variables, options);
  return renderer.run(parsed_->body);
}

}  // namespace odbatch::jinja
