#pragma once
// The control plane's key-value store: rendezvous data, heartbeats, round readiness and the abort
// key live here. Keys are non-empty byte strings, values are bytes. Every call is bounded in time:
// get and wait take their own timeout, the other calls the implementation's per-call deadline.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace odbatch {

// A store call that did not succeed, naming the operation, the key(s) and the store's address.
class StoreError : public std::runtime_error {
 public:
  enum class Kind {
    timeout,         // the call's timeout or deadline passed (a wait names the keys still missing)
    connection,      // the store cannot be reached, or the connection to it was lost
    rejected,        // the store refused the request (limits, a value that is not a counter)
    authentication,  // the store refused this client's token
  };

  // `key` is empty for calls without one (connecting); several keys are listed in one string.
  StoreError(Kind kind, std::string operation, std::string key, std::string address,
             const std::string& problem);

  Kind kind() const { return kind_; }
  const std::string& operation() const { return operation_; }
  const std::string& key() const { return key_; }
  const std::string& address() const { return address_; }

 private:
  Kind kind_;
  std::string operation_;
  std::string key_;
  std::string address_;
};

// What compare_and_set found and left.
struct CompareSetResult {
  bool swapped = false;
  // The key's value after the call: the desired value when swapped, the one that stood otherwise,
  // or none when the key stays absent.
  std::optional<std::vector<std::byte>> current;
};

class Store {
 public:
  virtual ~Store() = default;

  // Stores `value` under `key`, replacing any previous value, and wakes those waiting for it.
  virtual void set(const std::string& key, std::span<const std::byte> value) = 0;

  // The value of `key`, waiting up to `timeout` for it to be set (0: only look).
  // Throws StoreError (timeout) when it is still absent then.
  virtual std::vector<std::byte> get(const std::string& key, std::chrono::milliseconds timeout) = 0;

  // Adds `delta` to the signed 64-bit counter under `key` (an absent key counts as 0) and returns
  // the new value. Counters are stored as decimal text, so get reads them too. Throws StoreError
  // (rejected) when the value is not a counter or the sum overflows.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;

  // Sets `key` to `desired` if its value equals `expected`, or, with no `expected`, if the key is
  // absent. Atomic with respect to every other call, so the first of several writers wins.
  virtual CompareSetResult compare_and_set(const std::string& key,
                                           const std::optional<std::vector<std::byte>>& expected,
                                           std::span<const std::byte> desired) = 0;

  // Whether every key exists, without waiting.
  virtual bool check(const std::vector<std::string>& keys) = 0;

  // Returns once every key has been set, at the latest after `timeout`: then throws StoreError
  // (timeout) naming the keys still missing. A key set and erased again while waiting counts.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  // set(key, value), then wait(keys, timeout), then the values of `keys` in order (empty for a key
  // erased since it arrived): one round trip to a store that supports it. When it throws a
  // timeout, `key` has been set.
  virtual std::vector<std::vector<std::byte>> set_and_wait(const std::string& key,
                                                           std::span<const std::byte> value,
                                                           const std::vector<std::string>& keys,
                                                           std::chrono::milliseconds timeout);

  // Removes `key`; whether it existed.
  virtual bool erase(const std::string& key) = 0;

  // Removes every key that starts with `prefix` (non-empty); how many there were.
  virtual std::uint64_t erase_prefix(const std::string& prefix) = 0;
};

// Text as store bytes and back, for values that are text (reasons, addresses, counters).
std::vector<std::byte> store_bytes(std::string_view text);
std::string store_text(std::span<const std::byte> bytes);

}  // namespace odbatch
