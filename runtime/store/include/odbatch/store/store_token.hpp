#pragma once
// The TCP store's shared token: a secret that every client must present before its first request
// when the server has one. It comes from the environment, so that it stays out of command lines.
#include <string>
#include <string_view>

namespace odbatch {

inline constexpr const char* kStoreTokenVariable = "ODBATCH_STORE_TOKEN";
// How a server's refusal of a wrong or missing token begins, so that clients can tell it from
// other refusals (too many connections, a malformed hello).
inline constexpr std::string_view kStoreAuthenticationFailed = "authentication failed";

// The value of ODBATCH_STORE_TOKEN; empty (no token) when it is unset. Throws
// std::invalid_argument when it is longer than a hello may carry (kMaxStoreTokenBytes).
std::string store_token_from_env();

// Throws std::invalid_argument naming ODBATCH_STORE_TOKEN when `token` is longer than
// kMaxStoreTokenBytes: no hello could carry it.
void check_store_token_length(std::string_view token);

// Whether `presented` equals `expected`, in time that depends only on their lengths, so that a
// client cannot learn the token byte by byte from response times.
bool store_tokens_equal(std::string_view presented, std::string_view expected);

}  // namespace odbatch
