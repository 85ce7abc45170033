#pragma once
// What the benchmarks share: their command line's common flag and their JSON report.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace odbatch::bench {

using Report = nlohmann::ordered_json;  // keys stay in the order they were written

// Prints the report to stdout and, when `out_path` is not empty, writes it to that file too.
inline void emit_report(const Report& report, const std::string& out_path) {
  const std::string text = report.dump(2) + "\n";
  std::cout << text;
  if (out_path.empty()) return;
  std::ofstream out(out_path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + out_path);
}

// A flag's value that must be a positive integer; throws std::invalid_argument naming the flag.
inline std::uint64_t parse_count(std::string_view flag, const std::string& text) {
  const auto digits = text.find_first_not_of("0123456789") == std::string::npos;
  const unsigned long value = digits && text.size() <= 9 ? std::stoul(text) : 0;
  if (value == 0)
    throw std::invalid_argument(std::string(flag) + " expects a positive integer, got '" + text +
                                "'");
  return value;
}

// Keeps the report readable: ratios and timings do not need 17 significant digits.
inline double rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace odbatch::bench
