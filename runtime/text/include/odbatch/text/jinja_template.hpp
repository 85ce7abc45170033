#pragma once
// A Jinja template engine for Hugging Face chat templates, with the semantics transformers gives
// them: jinja2's ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loop controls,
// tojson as json.dumps(ensure_ascii=False), and the globals raise_exception, namespace, range and
// strftime_now. Anything outside the subset that real chat templates use fails with
// a JinjaError naming the construct and its line:column, never an approximation.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/text/jinja_value.hpp"

namespace odbatch::jinja {

class JinjaError : public std::runtime_error {
 public:
  enum class Kind : std::uint8_t {
    syntax,  // the template cannot be parsed
    render,  // an operation failed while rendering (type error, unknown filter, undefined use)
    raised,  // the template called raise_exception(message)
  };
  // A message longer than kMaxErrorTextBytes (jinja_budgets.hpp) is cut, its size noted.
  JinjaError(Kind kind, std::string message, int line, int column);
  Kind kind() const { return kind_; }
  // The message alone, without the location (for raise_exception: what the template said, cut
  // as above).
  const std::string& message() const { return message_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  struct Bounded {};  // the message is already cut
  JinjaError(Kind kind, std::string message, int line, int column, Bounded);
  Kind kind_;
  std::string message_;
  int line_;
  int column_;
};

// Byte offsets [begin, end) of rendered text.
struct TextRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  friend bool operator==(const TextRange&, const TextRange&) = default;
};

struct RenderResult {
  std::string text;
  // What `{% generation %}...{% endgeneration %}` blocks wrote, in order: the supervised spans.
  std::vector<TextRange> generation_ranges;
};

struct RenderOptions {
  // strftime_now(format) formats this clock's time (UTC); tests inject a fixed one.
  std::function<std::chrono::system_clock::time_point()> clock = [] {
    return std::chrono::system_clock::now();
  };
};

namespace detail {
struct ParsedTemplate;
}

class Template {
 public:
  // Parses the template; throws JinjaError (Kind::syntax) with line:column on malformed input.
  explicit Template(std::string_view source);
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  Template(const Template&) = delete;
  Template& operator=(const Template&) = delete;

  // Renders with these variables (messages, add_generation_prompt, bos_token, ...) visible.
  // Thread-safe: a Template is immutable once parsed.
  RenderResult render(const Dict& variables, const RenderOptions& options = {}) const;

 private:
  std::unique_ptr<const detail::ParsedTemplate> parsed_;
};

}  // namespace odbatch::jinja
