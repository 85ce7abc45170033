#include "odbatch/log/logger.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>

namespace odbatch {
namespace {

constexpr std::array kNames{
    std::pair{LogLevel::trace, "trace"}, std::pair{LogLevel::debug, "debug"},
    std::pair{LogLevel::info, "info"},   std::pair{LogLevel::warn, "warn"},
    std::pair{LogLevel::error, "error"}, std::pair{LogLevel::off, "off"}};

spdlog::level::level_enum spdlog_level(LogLevel level) {
  switch (level) {
    case LogLevel::trace:
      return spdlog::level::trace;
    case LogLevel::debug:
      return spdlog::level::debug;
    case LogLevel::info:
      return spdlog::level::info;
    case LogLevel::warn:
      return spdlog::level::warn;
    case LogLevel::error:
      return spdlog::level::err;
    case LogLevel::off:
      break;
  }
  return spdlog::level::off;
}

std::shared_ptr<spdlog::logger> make_logger(spdlog::sink_ptr sink) {
  // Not registered with spdlog's registry: a program's own spdlog loggers stay its own.
  auto logger = std::make_shared<spdlog::logger>("odbatch", std::move(sink));
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
  logger->set_level(spdlog::level::trace);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

LogLevel level_from_environment() {
  const char* name = std::getenv("ODBATCH_LOG_LEVEL");
  if (name == nullptr) return LogLevel::warn;
  return parse_log_level(name).value_or(LogLevel::warn);
}

struct LogState {
  std::atomic<LogLevel> level{level_from_environment()};
  std::mutex mutex;  // guards logger
  std::shared_ptr<spdlog::logger> logger =
      make_logger(std::make_shared<spdlog::sinks::stderr_sink_mt>());
};

LogState& state() {
  static LogState instance;
  return instance;
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "warning") return LogLevel::warn;
  for (const auto& [level, level_name] : kNames)
    if (name == level_name) return level;
  return std::nullopt;
}

std::string_view to_string(LogLevel level) {
  for (const auto& [known, name] : kNames)
    if (known == level) return name;
  return "unknown";
}

void set_log_level(LogLevel level) {
  state().level.store(level, std::memory_order_relaxed);
}

LogLevel log_level() {
  return state().level.load(std::memory_order_relaxed);
}

bool log_enabled(LogLevel level) {
  return level != LogLevel::off && level >= log_level();
}

void set_log_stream(std::ostream* stream) {
  spdlog::sink_ptr sink;
  if (stream != nullptr)
    sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*stream, /*force_flush=*/true);
  else
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = make_logger(std::move(sink));
  const std::lock_guard lock(state().mutex);
  state().logger = std::move(logger);
}

void Logger::log(LogLevel level, std::string_view message) const {
  if (!log_enabled(level)) return;
  std::shared_ptr<spdlog::logger> logger;
  {
    const std::lock_guard lock(state().mutex);
    logger = state().logger;
  }
  if (rank_)
    logger->log(spdlog_level(level), "[rank {}] {}", *rank_, message);
  else
    logger->log(spdlog_level(level), "{}", message);
}

}  // namespace odbatch
