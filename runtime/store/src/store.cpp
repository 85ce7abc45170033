#include "odbatch/store/store.hpp"

#include <utility>

namespace odbatch {
namespace {

std::string describe(const std::string& operation, const std::string& key,
                     const std::string& address, const std::string& problem) {
  std::string text = "store " + operation;
  if (!key.empty()) text += " " + key;
  return text + " at " + address + ": " + problem;
}

}  // namespace

StoreError::StoreError(Kind kind, std::string operation, std::string key, std::string address,
                       const std::string& problem)
    : std::runtime_error(describe(operation, key, address, problem)),
      kind_(kind),
      operation_(std::move(operation)),
      key_(std::move(key)),
      address_(std::move(address)) {}

std::vector<std::vector<std::byte>> Store::set_and_wait(const std::string& key,
                                                        std::span<const std::byte> value,
                                                        const std::vector<std::string>& keys,
                                                        std::chrono::milliseconds timeout) {
  set(key, value);
  wait(keys, timeout);
  std::vector<std::vector<std::byte>> values;
  for (const auto& awaited : keys)
    values.push_back(check({awaited}) ? get(awaited, std::chrono::milliseconds(0))
                                      : std::vector<std::byte>{});
  return values;
}

std::vector<std::byte> store_bytes(std::string_view text) {
  std::vector<std::byte> bytes(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) bytes[i] = static_cast<std::byte>(text[i]);
  return bytes;
}

std::string store_text(std::span<const std::byte> bytes) {
  std::string text(bytes.size(), '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) text[i] = static_cast<char>(bytes[i]);
  return text;
}

}  // namespace odbatch
