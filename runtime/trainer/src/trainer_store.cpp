#include "odbatch/trainer/trainer_store.hpp"

#include "odbatch/dist/store_location.hpp"

namespace odbatch {
namespace {

TcpStoreClientOptions trainer_store_options(const DistEnv& dist,
                                            std::chrono::milliseconds connect_timeout) {
  auto options = store_client_options(dist);
  options.connect_timeout = connect_timeout;
  return options;
}

}  // namespace

TrainerStore::TrainerStore(const DistEnv& dist, std::chrono::milliseconds connect_timeout)
    : client_(trainer_store_options(dist, connect_timeout)), keys_("trainer/", client_) {}

}  // namespace odbatch
