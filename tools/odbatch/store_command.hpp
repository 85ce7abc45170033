#pragma once
// `odbatch store`: runs the control plane's TCP store on its own, for runs whose rank 0 should not
// host it. It prints the address it is bound to and serves until SIGINT or SIGTERM.
#include <cstdint>
#include <string>

namespace odbatch::cli {

struct StoreOptions {
  std::string host;        // the address to bind: only connections to it are served
  std::uint16_t port = 0;  // 0: an ephemeral port, printed
  // Require clients to present the token in ODBATCH_STORE_TOKEN.
  bool token_from_env = false;
};

// Returns the exit status: 0 stopped by a signal, 1 the address cannot be bound, 2 a token was
// required but ODBATCH_STORE_TOKEN is unset or empty.
int run_store_command(const StoreOptions& options);

}  // namespace odbatch::cli
