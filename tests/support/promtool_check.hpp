#pragma once
// Prometheus's linter on a scrape's text: `promtool check metrics`, found in ODBATCH_PROMTOOL_DIR
// (the odbatch_promtool CTest fixture of tests/runtime/metrics puts it there).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace odbatch::test {

// What promtool says of `text` (empty: no problems) and its exit status. `name` names the files
// the text and the report are kept in, beside promtool, for a failure's inspection.
inline std::pair<int, std::string> promtool_check(const std::string& text,
                                                  const std::string& name) {
  const std::filesystem::path dir = ODBATCH_PROMTOOL_DIR;
  const auto input = dir / (name + ".prom");
  const auto report = dir / (name + ".report");
  std::ofstream(input, std::ios::binary) << text;
  const std::string command = (dir / "promtool").string() + " check metrics < " + input.string() +
                              " > " + report.string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ostringstream said;
  said << std::ifstream(report).rdbuf();
  return {status, said.str()};
}

}  // namespace odbatch::test
