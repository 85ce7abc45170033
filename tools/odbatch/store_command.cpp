#include "store_command.hpp"

#include <pthread.h>

#include <csignal>
#include <cstring>
#include <iostream>

#include "odbatch/store/store.hpp"
#include "odbatch/store/store_token.hpp"
#include "odbatch/store/tcp_store_server.hpp"

namespace odbatch::cli {

int run_store_command(const StoreOptions& options) {
  TcpStoreServerOptions server_options;
  server_options.host = options.host;
  server_options.port = options.port;
  if (options.token_from_env) {
    server_options.token = store_token_from_env();
    if (server_options.token.empty()) {
      std::cerr << "odbatch store: --token-env given, but " << kStoreTokenVariable
                << " is unset or empty\n";
      return 2;
    }
  }

  // Blocked before the server's thread starts, so that it inherits the mask: the stop signals are
  // then delivered only to the sigwait below. Default dispositions first: a shell starts background
  // jobs with SIGINT ignored, and an ignored signal would never reach sigwait.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  try {
    TcpStoreServer server(server_options);
    std::cout << "odbatch store: serving at " << server.address()
              << (server_options.token.empty() ? "" : " (token required)") << std::endl;
    int received = 0;
    sigwait(&stop_signals, &received);
    std::cout << "odbatch store: " << strsignal(received) << ", stopping" << std::endl;
    server.stop();
    return 0;
  } catch (const StoreError& e) {
    std::cerr << "odbatch store: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace odbatch::cli
