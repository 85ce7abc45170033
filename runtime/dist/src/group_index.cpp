#include "group_index.hpp"

#include <map>
#include <mutex>

namespace odbatch {

std::uint64_t next_group_index(const std::string& run_id, std::uint32_t rank,
                               const std::string& store_address) {
  static std::mutex mutex;
  static std::map<std::string, std::uint64_t> joined;
  // The run id has no '/' (PrefixStore::for_run), so the key is unambiguous.
  const std::string key = run_id + "/" + std::to_string(rank) + "/" + store_address;
  std::lock_guard lock(mutex);
  return joined[key]++;
}

}  // namespace odbatch
