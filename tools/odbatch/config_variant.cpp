#include "config_variant.hpp"

#include <cstdio>
#include <optional>
#include <sstream>

namespace odbatch::cli {
namespace {

std::string_view trimmed(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

// The table a header line opens ("source" for "[source]  # the dataset"), if it is one.
std::optional<std::string> header_of(std::string_view line) {
  const auto text = trimmed(line);
  if (!text.starts_with('[')) return std::nullopt;
  const auto close = text.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  return std::string(trimmed(text.substr(1, close - 1)));
}

// Whether `line` assigns `key` ("key = ...", "key=...").
bool assigns(std::string_view line, const std::string& key) {
  const auto text = trimmed(line);
  if (!text.starts_with(key)) return false;
  const auto rest = trimmed(text.substr(key.size()));
  return rest.starts_with('=');
}

// How far the brackets of `line` (outside strings and comments) move the nesting depth.
int bracket_change(std::string_view line) {
  int change = 0;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      break;
    } else if (c == '[') {
      ++change;
    } else if (c == ']') {
      --change;
    }
  }
  return change;
}

}  // namespace

std::string with_table_values(const std::string& toml, const std::string& table,
                              const std::vector<std::pair<std::string, std::string>>& values) {
  std::vector<std::string> lines;
  std::istringstream in(toml);
  for (std::string line; std::getline(in, line);) lines.push_back(line);

  std::optional<std::size_t> header;
  for (std::size_t i = 0; i < lines.size() && !header; ++i)
    if (header_of(lines[i]) == table) header = i;
  if (!header) {
    lines.push_back("[" + table + "]");
    header = lines.size() - 1;
  }
  for (const auto& [key, value] : values) {
    // The key's lines within the table: from its assignment to where its brackets close.
    std::optional<std::size_t> first;
    std::size_t last = 0;
    int depth = 0;
    for (std::size_t i = *header + 1; i < lines.size(); ++i) {
      if (depth == 0 && header_of(lines[i])) break;
      if (depth == 0 && !first && assigns(lines[i], key)) first = i;
      depth += bracket_change(lines[i]);
      if (first && depth <= 0) {
        last = i;
        break;
      }
    }
    const std::string assignment = key + " = " + value;
    if (first) {
      lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(*first),
                  lines.begin() + static_cast<std::ptrdiff_t>(last) + 1);
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(*first), assignment);
    } else {
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(*header) + 1, assignment);
    }
  }
  std::string out;
  for (const auto& line : lines) out += line + '\n';
  return out;
}

}  // namespace odbatch::cli
