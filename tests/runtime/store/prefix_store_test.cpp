#include "odbatch/store/prefix_store.hpp"

#include <doctest/doctest.h>

#include "store_test_support.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;
using test::client_options;
using test::loopback_server_options;

TEST_CASE("runs sharing a store see only their own keys") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  PrefixStore run_a = PrefixStore::for_run("a1", client);
  PrefixStore run_b = PrefixStore::for_run("b2", client);
  CHECK(run_a.prefix() == "run/a1/");

  run_a.set("abort", store_bytes("rank 3 died"));
  CHECK_FALSE(run_b.check({"abort"}));
  CHECK(run_b.compare_and_set("abort", std::nullopt, store_bytes("none")).swapped);
  CHECK(store_text(run_a.get("abort", 0ms)) == "rank 3 died");
  CHECK(store_text(client.get("run/b2/abort", 0ms)) == "none");

  CHECK(run_a.add("ready", 2) == 2);
  CHECK(run_b.add("ready", 1) == 1);
  run_a.wait({"abort", "ready"}, 0ms);
  run_b.set_and_wait("mine", store_bytes("b"), {"abort", "ready"}, 0ms);
  CHECK(store_text(client.get("run/b2/mine", 0ms)) == "b");
  CHECK(run_b.erase("mine"));
  CHECK(run_b.erase("ready"));
  CHECK(run_a.check({"ready"}));

  CHECK(run_a.erase_all() == 2);
  CHECK_FALSE(run_a.check({"abort"}));
  CHECK(run_b.check({"abort"}));
}

TEST_CASE("erase_prefix on a run's view deletes one finished round") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  PrefixStore run = PrefixStore::for_run("7", client);
  for (const char* key : {"round/1/ready/0", "round/1/ready/1", "round/10/ready/0", "round/2/x"})
    run.set(key, {});
  client.set("round/1/outside", {});

  CHECK(run.erase_prefix("round/1/") == 2);
  CHECK_FALSE(run.check({"round/1/ready/0"}));
  CHECK(run.check({"round/10/ready/0", "round/2/x"}));
  CHECK(client.check({"round/1/outside"}));
  CHECK_THROWS_AS(run.erase_prefix(""), std::invalid_argument);
}

TEST_CASE("errors through a view name the full key") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  PrefixStore run = PrefixStore::for_run("r", client);
  try {
    run.wait({"round/0/ready/1"}, 0ms);
    FAIL("expected a timeout");
  } catch (const StoreError& e) {
    CHECK(e.kind() == StoreError::Kind::timeout);
    CHECK(e.key() == "'run/r/round/0/ready/1'");
  }
}

TEST_CASE("views nest, and bad prefixes and run ids are refused") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  PrefixStore run = PrefixStore::for_run("r", client);
  PrefixStore round(std::string("round/3/"), run);
  round.set("ready/0", {});
  CHECK(client.check({"run/r/round/3/ready/0"}));

  CHECK_THROWS_AS(PrefixStore(std::string(), client), std::invalid_argument);
  CHECK_THROWS_AS(PrefixStore::for_run("", client), std::invalid_argument);
  CHECK_THROWS_AS(PrefixStore::for_run("a/b", client), std::invalid_argument);
}

}  // namespace
}  // namespace odbatch
