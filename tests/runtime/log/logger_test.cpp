#include <doctest/doctest.h>

#include <cctype>
#include <sstream>
#include <string>

#include "log_capture.hpp"
#include "odbatch/log/logger.hpp"

namespace odbatch {
namespace {

using test::LogCapture;

TEST_CASE("log levels parse by name and print back") {
  for (const auto level : {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn,
                           LogLevel::error, LogLevel::off}) {
    CHECK(parse_log_level(to_string(level)) == level);
  }
  CHECK(parse_log_level("warning") == LogLevel::warn);
  CHECK_FALSE(parse_log_level("verbose").has_value());
  CHECK_FALSE(parse_log_level("INFO").has_value());
}

TEST_CASE("a line is written only at or above the threshold") {
  const LogCapture capture(LogLevel::warn);
  CHECK_FALSE(log_enabled(LogLevel::info));
  CHECK(log_enabled(LogLevel::error));
  const Logger logger;
  logger.info("not shown");
  logger.debug("not shown either");
  logger.warn("shown");
  logger.error("shown too");
  const auto text = capture.text();
  CHECK(text.find("not shown") == std::string::npos);
  CHECK(text.find("] shown\n") != std::string::npos);
  CHECK(text.find("] shown too\n") != std::string::npos);
}

TEST_CASE("off writes nothing, not even errors") {
  const LogCapture capture(LogLevel::off);
  Logger(3).error("lost");
  CHECK(capture.text().empty());
  CHECK_FALSE(log_enabled(LogLevel::off));
}

// Whether `line` is "[YYYY-MM-DD HH:MM:SS.mmm] [odbatch] " followed by `rest`.
bool stamped(const std::string& line, const std::string& rest) {
  const std::string shape = "[####-##-## ##:##:##.###] [odbatch] ";
  if (line.size() != shape.size() + rest.size() || !line.ends_with(rest)) return false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (shape[i] == '#' ? !std::isdigit(c) : line[i] != shape[i]) return false;
  }
  return true;
}

TEST_CASE("a line has the time, odbatch, the level and the rank before the message") {
  const LogCapture capture(LogLevel::trace);
  Logger(2).info("epoch 0 started");
  Logger().warn("no rank here");
  std::istringstream lines(capture.text());
  std::string first;
  std::string second;
  REQUIRE(std::getline(lines, first));
  REQUIRE(std::getline(lines, second));
  CHECK(stamped(first, "[info] [rank 2] epoch 0 started"));
  CHECK(stamped(second, "[warning] no rank here"));
  CHECK_FALSE(stamped(second, "[warning] no rank"));
}

}  // namespace
}  // namespace odbatch
