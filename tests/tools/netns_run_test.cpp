// Ranks on separate hosts: three network namespaces joined by a bridge (veth pairs, iproute2),
// each with its own address and no route to the others' loopback, so the store, the heartbeats
// and the Gloo pairs cross a real interface. Needs root (CAP_NET_ADMIN); skipped without it.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

#include "cli_test_support.hpp"
#include "pipeline_test_support.hpp"
#include "test_skip.hpp"

namespace odbatch {
namespace {

namespace fs = std::filesystem;

bool can_make_namespaces() {
  const std::string probe = "odbprobe" + std::to_string(::getpid());
  const std::string command = "ip netns add " + probe + " >/dev/null 2>&1 && ip netns del " + probe;
  return std::system(command.c_str()) == 0;
}

// A script that builds the hosts, runs `ranks_command` (with $r, $addr and $ns set per rank, all
// ranks at once; each rank's exit status and end time land in rc-$r and end-$r) and removes the
// hosts whatever happens.
// `during` runs once the ranks have started (with $p set).
std::string hosts_script(const std::string& prefix, const std::string& ranks_command,
                         const std::string& during = "") {
  std::ostringstream s;
  s << "set -eu\n"
    << "p=" << prefix << "\n"
    << "cleanup() { for r in 0 1 2; do ip netns del ${p}h$r 2>/dev/null || true; done; "
    << "ip netns del ${p}sw 2>/dev/null || true; }\n"
    << "trap cleanup EXIT\n"
    << "ip netns add ${p}sw\n"
    << "ip -n ${p}sw link add br0 type bridge\n"
    << "ip -n ${p}sw link set br0 up\n"
    << "for r in 0 1 2; do\n"
    << "  ip netns add ${p}h$r\n"
    << "  ip link add ${p}v$r type veth peer name ${p}s$r\n"
    << "  ip link set ${p}v$r netns ${p}h$r\n"
    << "  ip link set ${p}s$r netns ${p}sw\n"
    << "  ip -n ${p}sw link set ${p}s$r master br0 up\n"
    << "  ip -n ${p}h$r addr add 10.199.0.$((r + 1))/24 dev ${p}v$r\n"
    << "  ip -n ${p}h$r link set ${p}v$r up\n"
    << "  ip -n ${p}h$r link set lo up\n"
    << "done\n"
    << "pids=()\n"
    << "for r in 0 1 2; do\n"
    << "  ns=${p}h$r addr=10.199.0.$((r + 1))\n"
    << "  (" << ranks_command << " && echo 0 >rc-$r || echo $? >rc-$r; date +%s%N >end-$r) &\n"
    << "  pids+=($!)\n"
    << "done\n"
    << during << "\n"
    << "wait \"${pids[@]}\"\n";
  return s.str();
}

// A run over `records` real text records; `extra` is appended to the TOML.
fs::path write_config(const fs::path& dir, const std::string& name, std::size_t records,
                      const std::string& extra) {
  const auto data = fs::path(ODBATCH_DATA_DIR);
  test::write_jsonl(dir / "records.jsonl", test::text_records(records));
  std::ostringstream toml;
  toml << test::source_and_tokenizer_toml(dir / "records.jsonl", data)
       << "[batching]\ntoken_budget = 1024\nmax_seq_len = 1024\nwindow = 16\nseed = 7\n"
       << "[pipeline]\nscheduler_threads = 2\n"
       << extra;
  return test::scratch().write(name + ".toml", toml.str());
}

// Rank $r on host $ns: the store on host 0's address, its Gloo pairs on its own address.
std::string rank_command(const fs::path& dir, const fs::path& config) {
  return "cd " + test::shell_quoted(dir) + " && ip netns exec $ns env RANK=$r WORLD_SIZE=3 " +
         "LOCAL_RANK=0 MASTER_ADDR=10.199.0.1 MASTER_PORT=29517 ODBATCH_GLOO_HOSTNAME=$addr " +
         test::shell_quoted(ODBATCH_CLI_PATH) + " run --no-progress " + test::shell_quoted(config) +
         " --ledger 'ledger-{rank}.jsonl' >out-$r 2>err-$r";
}

fs::path fresh_dir(const std::string& name) {
  const auto dir = test::scratch().path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string prefix() {
  return "odb" + std::to_string(::getpid() % 100000);
}

TEST_CASE("three ranks on three namespaced hosts: equal steps, audit passes") {
  test::require_dataset();
  if (!can_make_namespaces()) {
    ODBATCH_SKIP_TEST("root", "network namespaces cannot be created here (needs root)");
  }
  const auto dir = fresh_dir("netns");
  const auto config = write_config(dir, "netns", 300,
                                   "[distributed]\nheartbeat_interval_ms = 200\n"
                                   "peer_timeout_ms = 5000\nconnect_timeout_ms = 30000\n");
  const auto script =
      test::scratch().write("netns.sh", hosts_script(prefix(), rank_command(dir, config)));
  REQUIRE(std::system(("bash " + test::shell_quoted(script)).c_str()) == 0);

  std::string ledgers;
  std::set<std::size_t> step_counts;
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    const auto rank = std::to_string(r);
    CHECK_MESSAGE(test::read_file(dir / ("rc-" + rank)) == "0\n",
                  test::read_file(dir / ("err-" + rank)));
    step_counts.insert(test::read_ledger(dir / ("ledger-" + rank + ".jsonl"), 0).steps.size());
    ledgers += " " + test::shell_quoted(dir / ("ledger-" + rank + ".jsonl"));
  }
  CHECK(step_counts.size() == 1);
  CHECK(*step_counts.begin() > 5);
  const auto audit = test::run_cli("audit" + ledgers + " --config " + test::shell_quoted(config));
  CHECK_MESSAGE(audit.status == 0, audit.out << audit.err);
}

TEST_CASE("a host cut off the network mid-epoch: every rank fails fast, the others naming it") {
  test::require_dataset();
  if (!can_make_namespaces()) {
    ODBATCH_SKIP_TEST("root", "network namespaces cannot be created here (needs root)");
  }
  const auto dir = fresh_dir("netns_partition");
  // Slow workers stretch the epoch past the cut; a store call gives up after 3 s.
  const auto config = write_config(dir, "netns_partition", 1500,
                                   "worker_jitter_us = 20000\n[distributed]\n"
                                   "heartbeat_interval_ms = 200\npeer_timeout_ms = 2000\n"
                                   "store_timeout_ms = 3000\nconnect_timeout_ms = 30000\n");
  const std::string cut = "sleep 2; date +%s%N >cut; ip -n ${p}h2 link set ${p}v2 down";
  const auto script = test::scratch().write(
      "netns_partition.sh", "cd " + test::shell_quoted(dir) + "\n" +
                                hosts_script(prefix(), rank_command(dir, config), cut));
  REQUIRE(std::system(("bash " + test::shell_quoted(script)).c_str()) == 0);

  const auto nanoseconds = [&](const std::string& file) {
    return std::stoll(test::read_file(dir / file));
  };
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    const auto rank = std::to_string(r);
    const std::string error = test::read_file(dir / ("err-" + rank));
    CHECK_MESSAGE(test::read_file(dir / ("rc-" + rank)) == "1\n", error);
    const long ms =
        static_cast<long>((nanoseconds("end-" + rank) - nanoseconds("cut")) / 1'000'000);
    MESSAGE("rank " << r << " exited " << ms << " ms after the cut: " << error);
    // peer_timeout + 2 heartbeats, rank 0 serving the store peer_timeout longer, the cut-off
    // rank's store call its store_timeout; plus room for a loaded machine.
    CHECK(ms < 2000 + 400 + 3000 + 2000 + 5000);
    if (r != 2) CHECK_MESSAGE(error.find("rank 2") != std::string::npos, error);
  }
}

}  // namespace
}  // namespace odbatch
