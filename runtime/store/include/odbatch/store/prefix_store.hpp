#pragma once
// A view of a store that puts every key under a prefix, so that runs and rounds sharing one store
// never see each other's keys and a finished one is deleted with one erase_prefix.
#include <string>
#include <string_view>

#include "odbatch/store/store.hpp"

namespace odbatch {

class PrefixStore final : public Store {
 public:
  // `inner` must outlive the view. Throws std::invalid_argument for an empty prefix.
  PrefixStore(std::string prefix, Store& inner);

  // The namespace of run `run_id` (non-empty, without '/'): keys under "run/<run_id>/".
  static PrefixStore for_run(std::string_view run_id, Store& inner);
  // The namespace of process group `group` of that run (each Pipeline of a process is one):
  // keys under "run/<run_id>/group/<group>/".
  static PrefixStore for_group(std::string_view run_id, std::uint64_t group, Store& inner);

  const std::string& prefix() const { return prefix_; }

  // Erases every key of this view.
  std::uint64_t erase_all();

  void set(const std::string& key, std::span<const std::byte> value) override;
  std::vector<std::byte> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  CompareSetResult compare_and_set(const std::string& key,
                                   const std::optional<std::vector<std::byte>>& expected,
                                   std::span<const std::byte> desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::vector<std::vector<std::byte>> set_and_wait(const std::string& key,
                                                   std::span<const std::byte> value,
                                                   const std::vector<std::string>& keys,
                                                   std::chrono::milliseconds timeout) override;
  bool erase(const std::string& key) override;
  std::uint64_t erase_prefix(const std::string& prefix) override;

 private:
  std::string prefixed(const std::string& key) const { return prefix_ + key; }
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;

  std::string prefix_;
  Store& inner_;
};

}  // namespace odbatch
