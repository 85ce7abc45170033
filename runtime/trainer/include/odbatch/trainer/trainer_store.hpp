#pragma once
// The run's store as the trainer's own communicators meet through it (TrainerAllreduce's Gloo
// mesh, the NCCL communicator): a client of the run's store (store_location.hpp),
// presenting its store_token, whose keys lie under "trainer/", apart from the loader's. The store
// is rank 0's pipeline's: construct the Pipeline first.
#include <chrono>

#include "odbatch/dist/dist_env.hpp"
#include "odbatch/store/prefix_store.hpp"
#include "odbatch/store/tcp_store_client.hpp"

namespace odbatch {

class TrainerStore {
 public:
  // Throws StoreError when the store does not answer within `connect_timeout`, and
  // std::invalid_argument when `dist` names no store (store_client_options).
  TrainerStore(const DistEnv& dist, std::chrono::milliseconds connect_timeout);
  TrainerStore(const TrainerStore&) = delete;
  TrainerStore& operator=(const TrainerStore&) = delete;

  Store& keys() { return keys_; }

 private:
  TcpStoreClient client_;
  PrefixStore keys_;
};

}  // namespace odbatch
