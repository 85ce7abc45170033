#include "json_output.hpp"

#include <algorithm>

namespace odbatch::cli {
namespace {

// Objects of plain values this short stay on one line (e.g. a step's totals).
constexpr std::size_t kInlineObjectWidth = 80;

bool is_container(const Report& value) {
  return value.is_object() || value.is_array();
}

std::string one_line(const Report& flat) {
  std::string out(1, flat.is_object() ? '{' : '[');
  for (auto it = flat.begin(); it != flat.end(); ++it) {
    if (it != flat.begin()) out += ", ";
    if (flat.is_object()) out += Report(it.key()).dump() + ": ";
    out += it->dump();
  }
  return out + (flat.is_object() ? '}' : ']');
}

void write(const Report& value, std::size_t indent, std::string& out) {
  if (!is_container(value)) {
    out += value.dump();
    return;
  }
  if (value.empty()) {
    out += value.is_object() ? "{}" : "[]";
    return;
  }
  if (std::none_of(value.begin(), value.end(), is_container)) {
    std::string flat = one_line(value);
    if (value.is_array() || flat.size() <= kInlineObjectWidth) {
      out += flat;
      return;
    }
  }
  const std::string inner(indent + 2, ' ');
  out += value.is_object() ? "{\n" : "[\n";
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin()) out += ",\n";
    out += inner;
    if (value.is_object()) out += Report(it.key()).dump() + ": ";
    write(*it, indent + 2, out);
  }
  out += '\n' + std::string(indent, ' ') + (value.is_object() ? '}' : ']');
}

}  // namespace

Report command_report(std::string_view command) {
  return Report{{"command", command}, {"version", ODBATCH_VERSION}};
}

std::string to_readable_json(const Report& value) {
  std::string out;
  write(value, 0, out);
  out += '\n';
  return out;
}

}  // namespace odbatch::cli
