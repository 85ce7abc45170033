#pragma once
// Captures odbatch's log lines at a level for a scope, then restores stderr and the level.
#include <sstream>
#include <string>

#include "odbatch/log/logger.hpp"

namespace odbatch::test {

class LogCapture {
 public:
  explicit LogCapture(LogLevel level) : saved_(log_level()) {
    set_log_level(level);
    set_log_stream(&lines_);
  }
  ~LogCapture() {
    set_log_stream(nullptr);
    set_log_level(saved_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const { return lines_.str(); }

 private:
  LogLevel saved_;
  std::ostringstream lines_;
};

}  // namespace odbatch::test
