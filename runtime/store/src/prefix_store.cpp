#include "odbatch/store/prefix_store.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace odbatch {

PrefixStore::PrefixStore(std::string prefix, Store& inner)
    : prefix_(std::move(prefix)), inner_(inner) {
  if (prefix_.empty()) throw std::invalid_argument("a store prefix must not be empty");
}

PrefixStore PrefixStore::for_run(std::string_view run_id, Store& inner) {
  if (run_id.empty() || run_id.find('/') != std::string_view::npos)
    throw std::invalid_argument("run id '" + std::string(run_id) +
                                "' must be non-empty and without '/'");
  return PrefixStore("run/" + std::string(run_id) + "/", inner);
}

PrefixStore PrefixStore::for_group(std::string_view run_id, std::uint64_t group, Store& inner) {
  return PrefixStore(for_run(run_id, inner).prefix() + "group/" + std::to_string(group) + "/",
                     inner);
}

std::uint64_t PrefixStore::erase_all() {
  return inner_.erase_prefix(prefix_);
}

void PrefixStore::set(const std::string& key, std::span<const std::byte> value) {
  inner_.set(prefixed(key), value);
}

std::vector<std::byte> PrefixStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  return inner_.get(prefixed(key), timeout);
}

std::int64_t PrefixStore::add(const std::string& key, std::int64_t delta) {
  return inner_.add(prefixed(key), delta);
}

CompareSetResult PrefixStore::compare_and_set(const std::string& key,
                                              const std::optional<std::vector<std::byte>>& expected,
                                              std::span<const std::byte> desired) {
  return inner_.compare_and_set(prefixed(key), expected, desired);
}

bool PrefixStore::check(const std::vector<std::string>& keys) {
  return inner_.check(prefixed(keys));
}

void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  inner_.wait(prefixed(keys), timeout);
}

std::vector<std::vector<std::byte>> PrefixStore::set_and_wait(const std::string& key,
                                                              std::span<const std::byte> value,
                                                              const std::vector<std::string>& keys,
                                                              std::chrono::milliseconds timeout) {
  return inner_.set_and_wait(prefixed(key), value, prefixed(keys), timeout);
}

bool PrefixStore::erase(const std::string& key) {
  return inner_.erase(prefixed(key));
}

std::uint64_t PrefixStore::erase_prefix(const std::string& prefix) {
  if (prefix.empty())
    throw std::invalid_argument("erase_prefix needs a non-empty prefix; erase_all clears a view");
  return inner_.erase_prefix(prefixed(prefix));
}

std::vector<std::string> PrefixStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> result;
  result.reserve(keys.size());
  for (const std::string& key : keys) result.push_back(prefixed(key));
  return result;
}

}  // namespace odbatch
