#pragma once
// The TCP store's shared token: a secret that every client must present before its first request
// when the server has one. It comes from the environment, so that it stays out of command lines.
#include <string>
#include <string_view>

namespace odbatch {

inline constexpr const char* kStoreTokenVariable = "ODBATCH_STORE_TOKEN";

// The value of ODBATCH_STORE_TOKEN; empty (no token) when it is unset.
std::string store_token_from_env();

// Whether `presented` equals `expected`, in time that depends only on their lengths, so that a
// client cannot learn the token byte by byte from response times.
bool store_tokens_equal(std::string_view presented, std::string_view expected);

}  // namespace odbatch
