#include "odbatch/text/jinja_value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "odbatch/text/jinja_budgets.hpp"

namespace odbatch::jinja {

namespace {

// Destroying a list destroys its items, which may be lists in turn: a list nested 200,000 deep
// would recurse that deep. Instead, a dying list or dict moves its values that hold others onto
// this thread's queue, and the outermost destruction drains the queue in a loop.
struct ReleaseQueue {
  std::vector<Value> pending;
  bool draining = false;
};
thread_local ReleaseQueue release_queue;

bool holds_values(const Value& v) {
  return v.is_list() || v.is_dict() || v.is_namespace() || v.is_callable();
}

void defer(Value& v) {
  try {
    release_queue.pending.push_back(std::move(v));
  } catch (const std::bad_alloc&) {
    // Without room to queue it, v is destroyed where it is, recursing as deep as it nests.
  }
}

void drain_release_queue() {
  if (release_queue.draining) return;
  release_queue.draining = true;
  while (!release_queue.pending.empty()) {
    // Destroyed at the end of the iteration; what it held joins the queue.
    const Value v = std::move(release_queue.pending.back());
    release_queue.pending.pop_back();
  }
  release_queue.draining = false;
}

}  // namespace

Value::List::~List() {
  bool deferred = false;
  for (Value& item : items)
    if (holds_values(item)) {
      defer(item);
      deferred = true;
    }
  if (deferred) drain_release_queue();
}

Dict::~Dict() {
  bool deferred = false;
  for (auto& entry : entries_)
    if (holds_values(entry.second)) {
      defer(entry.second);
      deferred = true;
    }
  if (deferred) drain_release_queue();
}

Value::Value(std::vector<Value> items, bool is_tuple) : data_(std::make_shared<List>()) {
  auto& list = *std::get<std::shared_ptr<List>>(data_);
  list.items = std::move(items);
  list.is_tuple = is_tuple;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

Value* Dict::find(std::string_view key) {
  for (auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(std::string key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return;
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

namespace {

Value from_json_node(const nlohmann::ordered_json& node, int depth) {
  if (depth > kMaxValueDepth)
    throw std::invalid_argument("JSON nested more than " + std::to_string(kMaxValueDepth) +
                                " levels deep");
  switch (node.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value(node.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(node.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      if (node.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw std::invalid_argument("JSON integer beyond 64 bits: " + node.dump());
      return Value(node.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return Value(node.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(node.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(node.size());
      for (const auto& item : node) items.push_back(from_json_node(item, depth + 1));
      return Value(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict dict;
      for (const auto& [key, item] : node.items()) dict.set(key, from_json_node(item, depth + 1));
      return Value(std::move(dict));
    }
    default:
      throw std::invalid_argument("JSON value of an unsupported type (binary)");
  }
}

// Python's float.__repr__: the shortest round-trip digits, positional for exponents -4..15,
// otherwise d.ddde+XX.
std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
  const std::string scientific(buffer, result.ptr);
  const auto e_pos = scientific.find('e');
  std::string mantissa = scientific.substr(0, e_pos);
  const int exponent = std::stoi(scientific.substr(e_pos + 1));
  const bool negative = mantissa.front() == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else {
      const auto integer_digits = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= integer_digits) {
        out += digits + std::string(integer_digits - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, integer_digits) + "." + digits.substr(integer_digits);
      }
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+',
                std::abs(exponent));
  return out + exponent_text;
}

// Text held to kMaxTextBytes, checked before each append, so that printing a list that holds
// the same big list many times fails before it allocates.
class BoundedText {
 public:
  BoundedText& operator+=(std::string_view piece) {
    reserve(piece.size());
    text_ += piece;
    return *this;
  }
  BoundedText& operator+=(char c) {
    reserve(1);
    text_ += c;
    return *this;
  }
  void append(std::size_t count, char c) {
    reserve(count);
    text_.append(count, c);
  }
  std::string take() { return std::move(text_); }

 private:
  void reserve(std::size_t more) const {
    if (more > kMaxTextBytes - text_.size())
      throw std::length_error("the text grows past " + std::to_string(kMaxTextBytes >> 20) +
                              " MiB");
  }
  std::string text_;
};

void enter_level(int depth) {
  if (depth > kMaxValueDepth)
    throw std::length_error("a value nested more than " + std::to_string(kMaxValueDepth) +
                            " levels deep");
}

void append_python_repr(BoundedText& out, const Value& value, int depth);

void append_string_repr(BoundedText& out, const std::string& s) {
  const char quote =
      (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  out += quote;
  const auto plain = [quote](unsigned char c) {
    return c >= 0x20 && c != 0x7f && c != '\\' && c != static_cast<unsigned char>(quote);
  };
  for (std::size_t i = 0; i < s.size();) {
    // Characters printed as they are go in runs, not one append each.
    std::size_t run = i;
    while (run < s.size() && plain(static_cast<unsigned char>(s[run]))) ++run;
    if (run > i) {
      out += std::string_view(s).substr(i, run - i);
      i = run;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i++]);
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
}

void append_dict_repr(BoundedText& out, const Dict& dict, int depth) {
  out += '{';
  bool first = true;
  for (const auto& [key, item] : dict.entries()) {
    if (!first) out += ", ";
    first = false;
    append_string_repr(out, key);
    out += ": ";
    append_python_repr(out, item, depth + 1);
  }
  out += '}';
}

void append_python_repr(BoundedText& out, const Value& value, int depth) {
  enter_level(depth);
  switch (value.kind()) {
    case Value::Kind::string:
      append_string_repr(out, value.as_string());
      return;
    case Value::Kind::list: {
      const auto& list = value.as_list();
      out += list.is_tuple ? '(' : '[';
      for (std::size_t i = 0; i < list.items.size(); ++i) {
        if (i > 0) out += ", ";
        append_python_repr(out, list.items[i], depth + 1);
      }
      if (list.is_tuple && list.items.size() == 1) out += ',';
      out += list.is_tuple ? ')' : ']';
      return;
    }
    case Value::Kind::dict:
      append_dict_repr(out, value.as_dict(), depth);
      return;
    case Value::Kind::namespace_object:
      out += "<Namespace ";
      append_dict_repr(out, value.as_namespace().attributes, depth);
      out += '>';
      return;
    default:
      out += to_python_string(value);
  }
}

void append_json_string(BoundedText& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  const auto plain = [ensure_ascii](unsigned char c) {
    return c >= 0x20 && c != '"' && c != '\\' && (!ensure_ascii || c < 0x7f);
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    // Characters written as they are go in runs, not one append each.
    std::size_t run = i;
    while (run < s.size() && plain(static_cast<unsigned char>(s[run]))) ++run;
    if (run > i) {
      out += std::string_view(s).substr(i, run - i);
      i = run - 1;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    char hex[16];
    if (c < 0x20 || (c == 0x7f && ensure_ascii)) {
      std::snprintf(hex, sizeof hex, "\\u%04x", c);
      out += hex;
    } else if (c < 0x80 || !ensure_ascii) {
      out += static_cast<char>(c);
    } else {
      // Decode one UTF-8 sequence and write it as \uXXXX (a surrogate pair above U+FFFF).
      int length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      char32_t code = c & (0x3f >> (length - 1));
      for (int k = 1; k < length && i + 1 < s.size(); ++k)
        code = (code << 6) | (static_cast<unsigned char>(s[++i]) & 0x3f);
      if (code >= 0x10000) {
        code -= 0x10000;
        std::snprintf(hex, sizeof hex, "\\u%04x\\u%04x", 0xd800 + (code >> 10),
                      0xdc00 + (code & 0x3ff));
      } else {
        std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(code));
      }
      out += hex;
    }
  }
  out += '"';
}

void append_json(BoundedText& out, const Value& value, const JsonFormat& format, int depth) {
  enter_level(depth);
  const bool indented = format.indent >= 0;
  const std::string item_separator =
      !format.item_separator.empty() ? format.item_separator : (indented ? "," : ", ");
  const std::string key_separator = !format.key_separator.empty() ? format.key_separator : ": ";
  const auto newline = [&](int level) {
    if (!indented) return;
    out += '\n';
    out.append(static_cast<std::size_t>(format.indent) * static_cast<std::size_t>(level), ' ');
  };
  switch (value.kind()) {
    case Value::Kind::none:
      out += "null";
      return;
    case Value::Kind::boolean:
      out += value.as_bool() ? "true" : "false";
      return;
    case Value::Kind::integer:
      out += std::to_string(value.as_int());
      return;
    case Value::Kind::floating: {
      const double d = value.as_float();
      if (std::isnan(d))
        out += "NaN";
      else if (std::isinf(d))
        out += d < 0 ? "-Infinity" : "Infinity";
      else
        out += python_float_repr(d);
      return;
    }
    case Value::Kind::string:
      append_json_string(out, value.as_string(), format.ensure_ascii);
      return;
    case Value::Kind::list: {
      const auto& items = value.as_list().items;
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += item_separator;
        newline(depth + 1);
        append_json(out, items[i], format, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case Value::Kind::dict:
    case Value::Kind::namespace_object: {
      const Dict& dict = value.is_dict() ? value.as_dict() : value.as_namespace().attributes;
      if (dict.size() == 0) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& entry : dict.entries()) entries.push_back(&entry);
      if (format.sort_keys)
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto* a, const auto* b) { return a->first < b->first; });
      out += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out += item_separator;
        newline(depth + 1);
        append_json_string(out, entries[i]->first, format.ensure_ascii);
        out += key_separator;
        append_json(out, entries[i]->second, format, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
    default:
      throw std::invalid_argument("Object of type " + value.type_name() +
                                  " is not JSON serializable");
  }
}

}  // namespace

Value Value::from_json(std::string_view json) {
  try {
    return from_json_node(nlohmann::ordered_json::parse(json), 0);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(std::string("invalid JSON: ") + e.what());
  }
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::undefined:
    case Kind::none:
      return false;
    case Kind::boolean:
      return as_bool();
    case Kind::integer:
      return as_int() != 0;
    case Kind::floating:
      return as_float() != 0.0;
    case Kind::string:
      return !as_string().empty();
    case Kind::list:
      return !as_list().items.empty();
    case Kind::dict:
      return as_dict().size() != 0;
    case Kind::callable:
    case Kind::namespace_object:
      return true;
  }
  return false;
}

namespace {

using WorkMeter = std::function<void(std::size_t)>;

bool equal_at(const Value& a, const Value& b, const WorkMeter& work, int depth) {
  enter_level(depth);
  const auto numeric = [](const Value& v) { return v.is_number() || v.is_bool(); };
  if (numeric(a) && numeric(b)) {
    if (a.is_float() || b.is_float()) {
      const auto as_double = [](const Value& v) {
        return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
      };
      return as_double(a) == as_double(b);
    }
    const auto as_integer = [](const Value& v) {
      return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int();
    };
    return as_integer(a) == as_integer(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      return true;
    case Value::Kind::string:
      if (work) work(std::min(a.as_string().size(), b.as_string().size()));
      return a.as_string() == b.as_string();
    case Value::Kind::list: {
      if (&a.as_list() == &b.as_list()) return true;  // as Python compares a list with itself
      const auto& x = a.as_list().items;
      const auto& y = b.as_list().items;
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (work) work(0);
        if (!equal_at(x[i], y[i], work, depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::dict: {
      const Dict& x = a.as_dict();
      const Dict& y = b.as_dict();
      if (&x == &y) return true;
      if (x.size() != y.size()) return false;
      for (const auto& [key, item] : x.entries()) {
        if (work) work(y.size());  // the key's linear lookup
        const Value* other = y.find(key);
        if (other == nullptr || !equal_at(item, *other, work, depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::callable:
      return &a.as_callable() == &b.as_callable();
    case Value::Kind::namespace_object:
      return &a.as_namespace() == &b.as_namespace();
    default:
      return false;
  }
}

}  // namespace

bool operator==(const Value& a, const Value& b) {
  return equal_at(a, b, nullptr, 0);
}

bool equal(const Value& a, const Value& b, const std::function<void(std::size_t bytes)>& work) {
  return equal_at(a, b, work, 0);
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::undefined:
      return "Undefined";
    case Kind::none:
      return "NoneType";
    case Kind::boolean:
      return "bool";
    case Kind::integer:
      return "int";
    case Kind::floating:
      return "float";
    case Kind::string:
      return "str";
    case Kind::list:
      return as_list().is_tuple ? "tuple" : "list";
    case Kind::dict:
      return "dict";
    case Kind::callable:
      return "function";
    case Kind::namespace_object:
      return "Namespace";
  }
  return "unknown";
}

std::string to_python_string(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::undefined:
      return "";
    case Value::Kind::none:
      return "None";
    case Value::Kind::boolean:
      return value.as_bool() ? "True" : "False";
    case Value::Kind::integer:
      return std::to_string(value.as_int());
    case Value::Kind::floating:
      return python_float_repr(value.as_float());
    case Value::Kind::string:
      return value.as_string();
    case Value::Kind::callable:
      return "<function " + value.as_callable().name + ">";
    default:
      return to_python_repr(value);
  }
}

std::string to_python_repr(const Value& value) {
  BoundedText out;
  append_python_repr(out, value, 0);
  return out.take();
}

std::string to_json(const Value& value, const JsonFormat& format) {
  BoundedText out;
  append_json(out, value, format, 0);
  return out.take();
}

}  // namespace odbatch::jinja
