// Needs a GPU: without one the test cases report Skipped (tools/gpu-check.sh requires them to run,
// on a machine with GPUs).
#include "odbatch/cuda/nccl_bootstrap.hpp"

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "gpu_test_support.hpp"
#include "odbatch/store/prefix_store.hpp"
#include "store_test_support.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;

using test::visible_gpus;

// What each of `world` ranks (threads, one GPU each, round robin) saw: its error or "". The caller
// has checked that CUDA sees a GPU.
std::vector<std::string> run_ranks(std::uint32_t world,
                                   void (*body)(std::uint32_t rank, ncclComm_t, cudaStream_t)) {
  TcpStoreServer server(test::loopback_server_options());
  std::vector<std::string> errors(world);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        if (cudaSetDevice(static_cast<int>(rank) % visible_gpus()) != cudaSuccess)
          throw NcclError("cudaSetDevice failed");
        TcpStoreClient client(test::client_options(server.port()));
        PrefixStore trainer("trainer/", client);
        NcclOptions options;
        options.timeout = 60s;
        ncclComm_t comm = bootstrap_nccl_communicator(trainer, rank, world, options);
        cudaStream_t stream = nullptr;
        cudaStreamCreate(&stream);
        try {
          body(rank, comm, stream);
        } catch (...) {
          ncclCommAbort(comm);  // a failed handshake may leave work pending on it
          cudaStreamDestroy(stream);
          throw;
        }
        cudaStreamDestroy(stream);
        ncclCommDestroy(comm);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& thread : threads) thread.join();
  return errors;
}

// One rank per GPU: NCCL refuses two ranks of one communicator on one device.
std::uint32_t world_of_gpus() {
  return static_cast<std::uint32_t>(visible_gpus());
}

TEST_CASE("ranks bootstrap through the store and pass the handshake when they agree") {
  ODBATCH_REQUIRE_GPUS(1);
  const auto errors =
      run_ranks(world_of_gpus(), [](std::uint32_t, ncclComm_t comm, cudaStream_t stream) {
        nccl_epoch_handshake(comm, stream, 0xABCD, 0, false, "start of epoch 0", 60s);
        nccl_epoch_handshake(comm, stream, 0xABCD, 17, true, "end of epoch 0", 60s);
      });
  for (const auto& error : errors) CHECK_MESSAGE(error.empty(), error);
}

TEST_CASE("a rank with one step more fails the handshake on every rank") {
  ODBATCH_REQUIRE_GPUS(2);
  const auto errors =
      run_ranks(world_of_gpus(), [](std::uint32_t rank, ncclComm_t comm, cudaStream_t stream) {
        nccl_epoch_handshake(comm, stream, 1, rank == 1 ? 18 : 17, true, "end of epoch 3", 60s);
      });
  for (const auto& error : errors) {
    CHECK(error.find("end of epoch 3") != std::string::npos);
    CHECK(error.find("rank 1 ran 18 steps, rank 0 17") != std::string::npos);
  }
}

TEST_CASE("a rank whose peers never join fails at the deadline") {
  ODBATCH_REQUIRE_GPUS(1);
  TcpStoreServer server(test::loopback_server_options());
  TcpStoreClient client(test::client_options(server.port()));
  NcclOptions options;
  options.timeout = 2s;
  CHECK_THROWS_WITH_AS(bootstrap_nccl_communicator(client, 0, 2, options),
                       doctest::Contains("not done by the deadline"), NcclError);
  options.unique_id_key = "never/set";  // rank 0 of this group never comes
  CHECK_THROWS_WITH_AS(bootstrap_nccl_communicator(client, 1, 3, options),
                       doctest::Contains("cannot exchange NCCL's unique id"), NcclError);
}

// A DistEnv of `world` ranks (threads) whose store is at 127.0.0.1:`port`.
DistEnv loopback_rank(std::uint32_t rank, std::uint32_t world, std::uint16_t port) {
  DistEnv dist;
  dist.rank = rank;
  dist.world_size = world;
  dist.master_addr = "127.0.0.1";
  dist.master_port = port;
  dist.store_port = port;  // the store rank 0 hosts
  return dist;
}

TEST_CASE("ranks given a DistEnv meet through the run's store, under the trainer's keys") {
  ODBATCH_REQUIRE_GPUS(1);
  TcpStoreServer server(test::loopback_server_options());
  const std::uint32_t world = world_of_gpus();
  std::vector<std::string> errors(world);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        if (cudaSetDevice(static_cast<int>(rank)) != cudaSuccess)
          throw NcclError("cudaSetDevice failed");
        ncclComm_t comm = bootstrap_nccl_communicator(loopback_rank(rank, world, server.port()));
        int ranks = 0;
        ncclCommCount(comm, &ranks);
        ncclCommDestroy(comm);
        if (ranks != static_cast<int>(world))
          throw NcclError("a communicator of " + std::to_string(ranks) + " ranks");
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) CHECK_MESSAGE(error.empty(), error);
  // A single rank needs no store; several exchange NCCL's unique id in the trainer's keys.
  TcpStoreClient client(test::client_options(server.port()));
  CHECK(client.check({"trainer/nccl/unique_id"}) == (world > 1));
}

TEST_CASE("a DistEnv whose store does not answer is an NcclError naming the rank") {
  std::uint16_t port = 0;
  {
    const TcpStoreServer gone(test::loopback_server_options());
    port = gone.port();
  }
  NcclOptions options;
  options.timeout = 200ms;
  CHECK_THROWS_WITH_AS(bootstrap_nccl_communicator(loopback_rank(1, 2, port), options),
                       doctest::Contains("rank 1 of 2: cannot reach the run's store"), NcclError);
}

}  // namespace
}  // namespace odbatch
