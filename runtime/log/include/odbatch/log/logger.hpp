#pragma once
// odbatch's diagnostics: one line per event on stderr, or on a stream the embedding program
// chooses, "[time] [odbatch] [level] [rank R] message". Errors still travel as exceptions and
// ledger entries; the log says what happened along the way (an epoch started and ended, a request
// was retried, a rank aborted). The threshold comes from ODBATCH_LOG_LEVEL (default warn) until
// set_log_level() sets it. Thread-safe.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace odbatch {

enum class LogLevel : std::uint8_t { trace, debug, info, warn, error, off };

// "trace", "debug", "info", "warn" (or "warning"), "error", "off"; nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view name);
std::string_view to_string(LogLevel level);

void set_log_level(LogLevel level);
LogLevel log_level();
bool log_enabled(LogLevel level);

// Lines go to `stream` instead of stderr while it is set; nullptr restores stderr. The stream
// must outlive its use.
void set_log_stream(std::ostream* stream);

// Writes lines tagged with a rank (or none, outside a distributed run).
class Logger {
 public:
  explicit Logger(std::optional<std::uint32_t> rank = std::nullopt) : rank_(rank) {}

  void log(LogLevel level, std::string_view message) const;
  void debug(std::string_view message) const { log(LogLevel::debug, message); }
  void info(std::string_view message) const { log(LogLevel::info, message); }
  void warn(std::string_view message) const { log(LogLevel::warn, message); }
  void error(std::string_view message) const { log(LogLevel::error, message); }

 private:
  std::optional<std::uint32_t> rank_;
};

}  // namespace odbatch
