#include "odbatch/dist/distributed_config.hpp"

#include <string>

#include "odbatch/core/config.hpp"

namespace odbatch {

void validate(const DistributedConfig& c) {
  const auto positive = [](std::chrono::milliseconds value, const char* field) {
    if (value.count() <= 0) throw ConfigError(field, "must be positive");
  };
  positive(c.heartbeat_interval, "heartbeat_interval_ms");
  positive(c.peer_timeout, "peer_timeout_ms");
  positive(c.connect_timeout, "connect_timeout_ms");
  positive(c.store_timeout, "store_timeout_ms");
  positive(c.exchange_timeout, "exchange_timeout_ms");
  // With less, one late heartbeat would pass for a dead rank.
  if (c.peer_timeout < 2 * c.heartbeat_interval)
    throw ConfigError("peer_timeout_ms", "must be at least two heartbeat intervals (" +
                                             std::to_string(2 * c.heartbeat_interval.count()) +
                                             " ms)");
}

}  // namespace odbatch
