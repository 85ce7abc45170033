#include "odbatch/dist/dist_env.hpp"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace odbatch {
namespace {

// Sets the variables for one test case, and unsets every variable DistEnv::from_env reads at its
// end, so that no case sees another's.
class Environment {
 public:
  explicit Environment(std::initializer_list<std::pair<std::string, std::string>> variables) {
    for (const auto& [name, value] : variables) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~Environment() {
    for (const char* name :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "ODBATCH_RUN_ID",
          "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "ODBATCH_STORE_ADDR",
          "ODBATCH_STORE_PORT", "ODBATCH_STORE_TOKEN", "ODBATCH_GLOO_HOSTNAME"})
      ::unsetenv(name);
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
};

TEST_CASE("from_env: torchrun's variables and odbatch's own, in one value") {
  const Environment environment({{"RANK", "2"},
                                 {"WORLD_SIZE", "4"},
                                 {"LOCAL_RANK", "0"},
                                 {"MASTER_ADDR", "10.0.0.1"},
                                 {"MASTER_PORT", "29500"},
                                 {"ODBATCH_RUN_ID", "job7"},
                                 {"TORCHELASTIC_RUN_ID", "elastic"},
                                 {"ODBATCH_STORE_ADDR", "store.example:29400"},
                                 {"ODBATCH_STORE_PORT", "30000"},
                                 {"ODBATCH_STORE_TOKEN", "secret"},
                                 {"ODBATCH_GLOO_HOSTNAME", "node3"}});
  const auto env = DistEnv::from_env();
  CHECK(env.rank == 2);
  CHECK(env.world_size == 4);
  CHECK(env.local_rank == 0);
  CHECK(env.master_addr == "10.0.0.1");
  CHECK(env.master_port == 29500);
  CHECK(env.run_id == "job7");
  CHECK(env.store_address == "store.example:29400");
  CHECK(env.store_port == 30000);
  CHECK(env.store_token == "secret");
  CHECK(env.gloo_hostname == "node3");
  CHECK(!env.inproc_group);  // ranks that are processes
}

TEST_CASE("from_env: without variables, a single rank in a group of its own") {
  const Environment environment{};
  const auto env = DistEnv::from_env();
  CHECK(env.rank == 0);
  CHECK(env.world_size == 1);
  CHECK(env.inproc_group);
  CHECK(env.run_id == "default");
  CHECK(env.store_address.empty());
  CHECK(env.store_token.empty());
  CHECK(env.gloo_hostname.empty());
}

TEST_CASE("from_env: an elastic restart runs under a run id of its own") {
  const Environment environment(
      {{"TORCHELASTIC_RUN_ID", "elastic"}, {"TORCHELASTIC_RESTART_COUNT", "3"}});
  CHECK(DistEnv::from_env().run_id == "elastic-restart3");
}

TEST_CASE("from_env: a malformed variable is named") {
  {
    const Environment environment({{"RANK", "4"}, {"WORLD_SIZE", "4"}});
    CHECK_THROWS_WITH_AS(DistEnv::from_env(), doctest::Contains("RANK=4 is not below WORLD_SIZE=4"),
                         std::invalid_argument);
  }
  {
    const Environment environment({{"MASTER_PORT", "70000"}});
    CHECK_THROWS_WITH_AS(DistEnv::from_env(), doctest::Contains("MASTER_PORT=70000"),
                         std::invalid_argument);
  }
  {
    const Environment environment({{"ODBATCH_STORE_TOKEN", std::string(2000, 't')}});
    CHECK_THROWS_WITH_AS(DistEnv::from_env(), doctest::Contains("ODBATCH_STORE_TOKEN"),
                         std::invalid_argument);
  }
}

}  // namespace
}  // namespace odbatch
