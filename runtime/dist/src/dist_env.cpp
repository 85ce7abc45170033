#include "odbatch/dist/dist_env.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/store/store_token.hpp"

namespace odbatch {
namespace {

std::uint64_t env_number(const char* name, std::uint64_t fallback, std::uint64_t max) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(value, &end, 10);
  if (*end != '\0' || errno != 0 || n > max || value[0] == '-')
    throw std::invalid_argument(std::string(name) + "=" + value + ": expected a number up to " +
                                std::to_string(max));
  return n;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

}  // namespace

DistEnv DistEnv::single() {
  DistEnv env;
  env.inproc_group = InprocGroup::create(1);
  return env;
}

DistEnv DistEnv::inproc(std::shared_ptr<InprocGroup> group, std::uint32_t rank,
                        std::uint32_t world_size) {
  DistEnv env;
  env.rank = rank;
  env.world_size = world_size;
  env.local_rank = rank;
  env.inproc_group = std::move(group);
  return env;
}

DistEnv DistEnv::from_env() {
  DistEnv env;
  constexpr auto kMaxRanks = std::uint64_t{1} << 20;
  env.world_size = static_cast<std::uint32_t>(env_number("WORLD_SIZE", 1, kMaxRanks));
  env.rank = static_cast<std::uint32_t>(env_number("RANK", 0, kMaxRanks));
  env.local_rank = static_cast<std::uint32_t>(env_number("LOCAL_RANK", env.rank, kMaxRanks));
  if (env.world_size == 0) throw std::invalid_argument("WORLD_SIZE=0: expected at least 1");
  if (env.rank >= env.world_size)
    throw std::invalid_argument("RANK=" + std::to_string(env.rank) +
                                " is not below WORLD_SIZE=" + std::to_string(env.world_size));
  env.master_addr = env_or("MASTER_ADDR", "");
  env.master_port = static_cast<std::uint16_t>(
      env_number("MASTER_PORT", 0, std::numeric_limits<std::uint16_t>::max()));
  env.run_id = env_or("ODBATCH_RUN_ID", env_or("TORCHELASTIC_RUN_ID", "default"));
  // An elastic restart keeps the run id: its restart count keeps it clear of the failed
  // incarnation's keys.
  if (const auto restart = env_or("TORCHELASTIC_RESTART_COUNT", ""); !restart.empty())
    env.run_id += "-restart" + restart;
  env.store_address = env_or("ODBATCH_STORE_ADDR", "");
  env.store_port = static_cast<std::uint16_t>(
      env_number("ODBATCH_STORE_PORT", 0, std::numeric_limits<std::uint16_t>::max()));
  env.store_token = store_token_from_env();
  env.gloo_hostname = env_or("ODBATCH_GLOO_HOSTNAME", "");
  if (env.world_size == 1) env.inproc_group = InprocGroup::create(1);
  return env;
}

}  // namespace odbatch
