#include "shared_store_host.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace odbatch {
namespace {

struct HostedStore {
  std::weak_ptr<TcpStoreServer> server;
  std::string token;
};

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, HostedStore>& registry() {
  static std::map<std::string, HostedStore> hosted;
  return hosted;
}

}  // namespace

std::shared_ptr<TcpStoreServer> share_hosted_store(const TcpStoreServerOptions& options) {
  const std::string where = options.host + ":" + std::to_string(options.port);
  std::lock_guard lock(registry_mutex());
  auto& entry = registry()[where];
  if (auto server = entry.server.lock()) {
    if (entry.token != options.token)
      throw std::invalid_argument("this process already hosts a store at " + where +
                                  " with another token (ODBATCH_STORE_TOKEN differs between its "
                                  "Pipelines)");
    return server;
  }
  // The last holder stops the server under the registry's lock, so a new one binds only once
  // the old one has let go of the port.
  std::shared_ptr<TcpStoreServer> server(new TcpStoreServer(options), [](TcpStoreServer* stopped) {
    std::lock_guard stopping(registry_mutex());
    delete stopped;
  });
  entry = HostedStore{server, options.token};
  return server;
}

}  // namespace odbatch
