#include <doctest/doctest.h>

#include <stdexcept>

#include "odbatch/dist/store_location.hpp"

namespace odbatch {
namespace {

DistEnv rank_of_four(std::uint32_t rank) {
  DistEnv env;
  env.rank = rank;
  env.world_size = 4;
  env.master_addr = "10.0.0.1";
  env.master_port = 29500;
  env.store_token = "secret";
  return env;
}

TEST_CASE("without a standalone store, every rank meets at rank 0's store on MASTER_ADDR") {
  for (std::uint32_t rank = 0; rank < 4; ++rank) {
    const auto options = store_client_options(rank_of_four(rank));
    CHECK(options.host == "10.0.0.1");
    // MASTER_PORT itself is torchrun's store's (and init_process_group's).
    CHECK(options.port == 29500 + kStorePortOffset);
    CHECK(options.token == "secret");
    CHECK(hosts_store(rank_of_four(rank)) == (rank == 0));
  }
}

TEST_CASE("ODBATCH_STORE_PORT places rank 0's store, past 65535 the offset port is refused") {
  auto env = rank_of_four(2);
  env.store_port = 4100;
  CHECK(hosted_store_port(env) == 4100);
  CHECK(store_client_options(env).port == 4100);
  env.store_port = 0;
  env.master_port = 65000;
  CHECK_THROWS_WITH_AS(hosted_store_port(env), doctest::Contains("set ODBATCH_STORE_PORT"),
                       std::invalid_argument);
}

TEST_CASE("a standalone store is where every rank meets, and no rank hosts one") {
  auto env = rank_of_four(0);
  env.store_address = "[::1]:4000";
  const auto options = store_client_options(env);
  CHECK(options.host == "::1");
  CHECK(options.port == 4000);
  CHECK(options.token == "secret");
  CHECK_FALSE(hosts_store(env));
  env.store_address = "store.local:4001";
  CHECK(store_client_options(env).host == "store.local");
}

TEST_CASE("a store address that cannot be reached is refused, naming it") {
  auto env = rank_of_four(1);
  env.store_address = "store.local";
  CHECK_THROWS_WITH_AS(store_client_options(env),
                       doctest::Contains("ODBATCH_STORE_ADDR='store.local'"),
                       std::invalid_argument);
  env.store_address = "store.local:0";
  CHECK_THROWS_AS(store_client_options(env), std::invalid_argument);
  env.store_address.clear();
  env.master_port = 0;
  CHECK_THROWS_WITH_AS(store_client_options(env), doctest::Contains("needs MASTER_PORT"),
                       std::invalid_argument);
}

}  // namespace
}  // namespace odbatch
