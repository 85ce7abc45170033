#include "odbatch/source/brace_expansion.hpp"

#include <charconv>
#include <optional>

#include "odbatch/source/dataset_error.hpp"

namespace odbatch {
namespace {

struct BraceGroup {
  std::size_t open = 0;
  std::size_t close = 0;
  std::vector<std::string> alternatives;
};

// A range end: a long long, or nothing with why not.
struct RangeEnd {
  std::optional<long long> value;
  bool out_of_range = false;
};

RangeEnd integer(std::string_view text) {
  long long value = 0;
  const char* begin = text.data();
  if (!text.empty() && text.front() == '+') ++begin;
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
  if (end != text.data() + text.size() || begin == end) return {};
  if (error == std::errc::result_out_of_range) return {.value = std::nullopt, .out_of_range = true};
  if (error != std::errc()) return {};
  return {.value = value};
}

std::string padded(long long value, std::size_t width) {
  // The magnitude in unsigned arithmetic: -value overflows for the lowest long long.
  const unsigned long long magnitude = value < 0 ? 0ULL - static_cast<unsigned long long>(value)
                                                 : static_cast<unsigned long long>(value);
  std::string digits = std::to_string(magnitude);
  const std::size_t sign = value < 0 ? 1 : 0;
  if (digits.size() + sign < width) digits.insert(0, width - digits.size() - sign, '0');
  return value < 0 ? "-" + digits : digits;
}

// The alternatives of a brace body: "a,b,c" or "lo..hi"; nothing when it is neither.
std::optional<std::vector<std::string>> alternatives(std::string_view body,
                                                     std::string_view pattern, std::size_t limit) {
  if (const auto dots = body.find("..");
      dots != std::string_view::npos && body.find(',') == body.npos) {
    const auto low_text = body.substr(0, dots);
    const auto high_text = body.substr(dots + 2);
    const auto low_end = integer(low_text);
    const auto high_end = integer(high_text);
    if (low_end.out_of_range || high_end.out_of_range) {
      throw DatasetError("dataset pattern '" + std::string(pattern) + "': the range {" +
                         std::string(body) +
                         "} has an end outside the 64-bit integers (-9223372036854775808 to "
                         "9223372036854775807)");
    }
    const auto& low = low_end.value;
    const auto& high = high_end.value;
    if (!low || !high) {
      throw DatasetError("dataset pattern '" + std::string(pattern) + "': the range {" +
                         std::string(body) + "} does not go from a number to a number");
    }
    const bool zero_padded = (low_text.size() > 1 && low_text.front() == '0') ||
                             (high_text.size() > 1 && high_text.front() == '0');
    const std::size_t width = zero_padded ? std::max(low_text.size(), high_text.size()) : 0;
    const long long step = *low <= *high ? 1 : -1;
    // The distance between the ends in unsigned arithmetic, which cannot overflow: the count
    // (distance + 1) of a range over all 64-bit integers would wrap to 0.
    const auto as_unsigned = [](long long v) { return static_cast<unsigned long long>(v); };
    const unsigned long long distance =
        step > 0 ? as_unsigned(*high) - as_unsigned(*low) : as_unsigned(*low) - as_unsigned(*high);
    if (distance >= limit) {
      throw DatasetError("dataset pattern '" + std::string(pattern) + "' expands to more than " +
                         std::to_string(limit) + " names");
    }
    std::vector<std::string> values;
    for (long long v = *low;; v += step) {
      values.push_back(padded(v, width));
      if (v == *high) break;
    }
    return values;
  }
  if (body.find(',') == std::string_view::npos) return std::nullopt;
  std::vector<std::string> values;
  std::size_t start = 0;
  for (;;) {
    const auto comma = body.find(',', start);
    values.emplace_back(body.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

// The first expandable group (no nesting: a group's body holds no braces).
std::optional<BraceGroup> first_group(std::string_view pattern, std::size_t from,
                                      std::size_t limit) {
  for (auto open = pattern.find('{', from); open != std::string_view::npos;
       open = pattern.find('{', open + 1)) {
    const auto close = pattern.find_first_of("{}", open + 1);
    if (close == std::string_view::npos) return std::nullopt;
    if (pattern[close] == '{') continue;
    if (auto values = alternatives(pattern.substr(open + 1, close - open - 1), pattern, limit)) {
      return BraceGroup{open, close, std::move(*values)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> expand_braces(std::string_view pattern, std::size_t limit) {
  // Expand group by group: each partial name carries how far it has been expanded.
  std::vector<std::pair<std::string, std::size_t>> pending = {{std::string(pattern), 0}};
  std::vector<std::string> names;
  while (!pending.empty()) {
    auto [name, from] = std::move(pending.back());
    pending.pop_back();
    const auto group = first_group(name, from, limit);
    if (!group) {
      names.push_back(std::move(name));
      continue;
    }
    if (names.size() + pending.size() + group->alternatives.size() > limit) {
      throw DatasetError("dataset pattern '" + std::string(pattern) + "' expands to more than " +
                         std::to_string(limit) + " names");
    }
    // Pushed in reverse so that names come out in order.
    for (auto it = group->alternatives.rbegin(); it != group->alternatives.rend(); ++it) {
      std::string expanded = name.substr(0, group->open) + *it + name.substr(group->close + 1);
      pending.emplace_back(std::move(expanded), group->open + it->size());
    }
  }
  return names;
}

}  // namespace odbatch
