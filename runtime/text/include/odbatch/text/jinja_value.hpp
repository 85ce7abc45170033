#pragma once
// The values a Jinja chat template computes with, shaped after the Python objects jinja2 sees:
// undefined, none, bool, int, float, str, list (or tuple), dict (insertion-ordered), callables
// (macros, bound methods, globals) and namespace objects. Strings, lists, dicts and namespaces are
// shared by reference like Python's, so `ns.x = ...` is seen by every holder of `ns`.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace odbatch::jinja {

class Value;

// Python's dict with string keys: insertion-ordered, linear lookup (chat messages hold a few keys).
class Dict {
 public:
  Dict() = default;
  Dict(const Dict&) = default;
  Dict(Dict&&) noexcept = default;
  Dict& operator=(const Dict&) = default;
  Dict& operator=(Dict&&) noexcept = default;
  // Destroys its values without recursing into them (see release_values in jinja_value.cpp).
  ~Dict();

  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  // Replaces an existing key's value in place (keeping its position) or appends the key.
  void set(std::string key, Value value);
  void reserve(std::size_t entries);
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  std::size_t size() const;

 private:
  std::vector<std::pair<std::string, Value>> entries_;
};

// A call's arguments as the template wrote them: positional, then keyword.
struct CallArguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

using Function = std::function<Value(CallArguments&)>;

class Value {
 public:
  enum class Kind : std::uint8_t {
    undefined,
    none,
    boolean,
    integer,
    floating,
    string,
    list,
    dict,
    callable,
    namespace_object
  };
  struct Undefined {
    std::string name;  // what was looked up, for the error when it is used
  };
  struct None {};
  struct List {
    std::vector<Value> items;
    bool is_tuple = false;  // prints as (a, b) like Python's tuple
    // Destroys its items without recursing into them: a list nested 200,000 deep must not
    // overflow the stack when it goes.
    ~List();
  };
  struct Callable {
    std::string name;
    Function function;
  };
  struct Namespace {
    Dict attributes;
  };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string name) { return Value(Undefined{std::move(name)}); }
  static Value none() { return Value(None{}); }
  Value(bool b) : data_(b) {}
  Value(int i) : data_(std::int64_t{i}) {}
  Value(std::int64_t i) : data_(i) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::make_shared<const std::string>(std::move(s))) {}
  Value(std::string_view s) : data_(std::make_shared<const std::string>(s)) {}
  Value(const char* s) : data_(std::make_shared<const std::string>(s)) {}
  Value(std::vector<Value> items, bool is_tuple = false);
  Value(Dict dict) : data_(std::make_shared<Dict>(std::move(dict))) {}
  static Value callable(std::string name, Function function) {
    return Value(std::make_shared<Callable>(Callable{std::move(name), std::move(function)}));
  }
  static Value new_namespace(Dict attributes) {
    return Value(std::make_shared<Namespace>(Namespace{std::move(attributes)}));
  }

  // Parses JSON text into values (objects keep their key order; numbers without a fraction or
  // exponent become int). Throws std::invalid_argument naming the offset on malformed JSON.
  static Value from_json(std::string_view json);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::undefined; }
  bool is_none() const { return kind() == Kind::none; }
  bool is_bool() const { return kind() == Kind::boolean; }
  bool is_int() const { return kind() == Kind::integer; }
  bool is_float() const { return kind() == Kind::floating; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return kind() == Kind::string; }
  bool is_list() const { return kind() == Kind::list; }
  bool is_dict() const { return kind() == Kind::dict; }
  bool is_callable() const { return kind() == Kind::callable; }
  bool is_namespace() const { return kind() == Kind::namespace_object; }

  const std::string& undefined_name() const { return std::get<Undefined>(data_).name; }
  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  // int or float as double.
  double as_number() const { return is_int() ? static_cast<double>(as_int()) : as_float(); }
  const std::string& as_string() const {
    return *std::get<std::shared_ptr<const std::string>>(data_);
  }
  const List& as_list() const { return *std::get<std::shared_ptr<List>>(data_); }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<Callable>>(data_); }
  Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(data_); }

  // Python's truth value: empty strings, lists and dicts, 0, none and undefined are false.
  bool truthy() const;
  // Python's == (1 == 1.0 == True; lists and dicts compare deeply; undefined equals undefined).
  // Throws std::length_error past kMaxValueDepth levels (jinja_budgets.hpp).
  friend bool operator==(const Value& a, const Value& b);
  // Python's type name, for error messages: 'str', 'int', 'list', ...
  std::string type_name() const;

 private:
  // Strings are shared like lists: copying a list of long strings copies no text.
  using Data =
      std::variant<Undefined, None, bool, std::int64_t, double, std::shared_ptr<const std::string>,
                   std::shared_ptr<List>, std::shared_ptr<Dict>, std::shared_ptr<Callable>,
                   std::shared_ptr<Namespace>>;
  explicit Value(Undefined u) : data_(std::move(u)) {}
  explicit Value(None n) : data_(n) {}
  explicit Value(std::shared_ptr<Callable> c) : data_(std::move(c)) {}
  explicit Value(std::shared_ptr<Namespace> n) : data_(std::move(n)) {}
  Data data_;
};

inline std::size_t Dict::size() const {
  return entries_.size();
}
inline void Dict::reserve(std::size_t entries) {
  entries_.reserve(entries);
}

// Python's == that reports its work: `work(bytes)` is called once per pair of values compared,
// with the bytes of the strings compared, so that a caller can bound what comparisons cost.
bool equal(const Value& a, const Value& b, const std::function<void(std::size_t bytes)>& work);

// Python's str(value) as jinja2 prints it: none is "None", booleans "True"/"False", floats in
// repr form ("1.0", "1e-05"), lists and dicts as their repr; undefined prints as "".
// This and the functions below throw std::length_error when the text would pass kMaxTextBytes or
// the value nests deeper than kMaxValueDepth (jinja_budgets.hpp), before allocating the text.
std::string to_python_string(const Value& value);
// Python's repr(value) ('text' quoted as Python quotes it).
std::string to_python_repr(const Value& value);

struct JsonFormat {
  int indent = -1;             // < 0: one line
  std::string item_separator;  // empty: Python's default (", " on one line, "," when indented)
  std::string key_separator;   // empty: ": "
  bool ensure_ascii = false;
  bool sort_keys = false;
};
// Python's json.dumps with transformers' tojson defaults (ensure_ascii=False, key order kept).
// Throws std::invalid_argument for values JSON cannot hold (undefined, callables).
std::string to_json(const Value& value, const JsonFormat& format = {});

}  // namespace odbatch::jinja
