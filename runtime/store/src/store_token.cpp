#include "odbatch/store/store_token.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "odbatch/store/store_wire.hpp"

namespace odbatch {

std::string store_token_from_env() {
  const char* token = std::getenv(kStoreTokenVariable);
  std::string text = token ? token : "";
  check_store_token_length(text);
  return text;
}

void check_store_token_length(std::string_view token) {
  if (token.size() > kMaxStoreTokenBytes)
    throw std::invalid_argument(std::string(kStoreTokenVariable) + ": a token of " +
                                std::to_string(token.size()) + " bytes is longer than the " +
                                std::to_string(kMaxStoreTokenBytes) + " bytes a hello may carry");
}

bool store_tokens_equal(std::string_view presented, std::string_view expected) {
  // Every byte position of the longer string is visited whatever the contents; a volatile
  // accumulator keeps the compiler from leaving the loop at the first difference.
  volatile unsigned char difference = presented.size() == expected.size() ? 0 : 1;
  const std::size_t length = std::max(presented.size(), expected.size());
  for (std::size_t i = 0; i < length; ++i) {
    const auto a = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0u;
    const auto b = i < expected.size() ? static_cast<unsigned char>(expected[i]) : 0u;
    difference = static_cast<unsigned char>(difference | (a ^ b));
  }
  return difference == 0;
}

}  // namespace odbatch
