#include <doctest/doctest.h>

#include <chrono>
#include <exception>
#include <thread>
#include <vector>

#include "odbatch/store/tcp_store_server.hpp"
#include "odbatch/trainer/trainer_allreduce.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;

// Rank `rank` of `world` whose store is rank 0's at 127.0.0.1:`port`, or, with `standalone`, a
// store of its own at that address (no MASTER_ADDR at all).
DistEnv rank_env(std::uint32_t rank, std::uint32_t world, std::uint16_t port, bool standalone) {
  DistEnv env;
  env.rank = rank;
  env.world_size = world;
  env.store_token = "trainer-test";
  if (standalone) {
    env.store_address = "127.0.0.1:" + std::to_string(port);
    env.gloo_hostname = "127.0.0.1";
  } else {
    env.master_addr = "127.0.0.1";
    env.master_port = port;
    env.store_port = port;  // the store rank 0 hosts
  }
  return env;
}

// Every rank of `world` sums its float and double vectors over all ranks, as threads; returns
// what each rank holds afterwards.
std::vector<std::vector<double>> sums_over_ranks(std::uint32_t world, bool standalone) {
  TcpStoreServerOptions options;
  options.token = "trainer-test";
  TcpStoreServer store(options);
  std::vector<std::vector<double>> results(world);
  std::vector<std::exception_ptr> errors(world);
  std::vector<std::thread> ranks;
  for (std::uint32_t rank = 0; rank < world; ++rank)
    ranks.emplace_back([&, rank] {
      try {
        TrainerAllreduce allreduce(rank_env(rank, world, store.port(), standalone), 30s);
        std::vector<float> floats{static_cast<float>(rank + 1), 0.5f};
        std::vector<double> doubles{static_cast<double>(rank) * 10.0};
        allreduce.sum(floats);
        allreduce.sum(doubles);
        results[rank] = {floats[0], floats[1], doubles[0]};
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  for (auto& rank : ranks) rank.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  return results;
}

TEST_CASE("three ranks sum floats and doubles elementwise through rank 0's store") {
  for (const auto& held : sums_over_ranks(3, false))
    CHECK(held == std::vector<double>{6.0, 1.5, 30.0});
}

TEST_CASE("the ranks meet at a standalone store when the DistEnv names one") {
  for (const auto& held : sums_over_ranks(2, true))
    CHECK(held == std::vector<double>{3.0, 1.0, 10.0});
}

TEST_CASE("a single rank connects to nothing and its sums are its own values") {
  TrainerAllreduce alone(DistEnv::single());
  std::vector<float> values{1.5f, -2.0f};
  alone.sum(values);
  CHECK(values == std::vector<float>{1.5f, -2.0f});
  CHECK(alone.world_size() == 1);
}

}  // namespace
}  // namespace odbatch
