// `odbatch launch`: local ranks with torchrun's variables; the first failure, or a signal to the
// launcher, stops every rank and everything it started, and the launcher's status says why.
#include <doctest/doctest.h>
#include <signal.h>

#include <cerrno>
#include <set>
#include <thread>

#include "cli_test_support.hpp"

namespace odbatch {
namespace {

using test::run_cli;

// The pids a launch's ranks wrote into `dir` (one file per process).
std::vector<pid_t> recorded_pids(const std::filesystem::path& dir) {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    pids.push_back(static_cast<pid_t>(std::stol(test::read_file(entry.path()))));
  return pids;
}

bool alive(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

// Waits a little for processes that were just killed to disappear.
bool all_gone(const std::vector<pid_t>& pids) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    bool any = false;
    for (auto pid : pids) any = any || alive(pid);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = test::scratch().path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("launch: every rank gets torchrun's variables, and a port for odbatch's store") {
  const auto run = run_cli(
      "launch --nproc 3 --no-prefix -- sh -c 'echo $RANK $LOCAL_RANK $WORLD_SIZE "
      "$LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $ODBATCH_STORE_PORT'");
  CHECK(run.status == 0);
  std::set<std::string> ranks;
  std::set<std::string> ports;
  std::istringstream lines(run.out);
  for (std::string rank, local, world, local_world, addr, port, store_port;
       lines >> rank >> local >> world >> local_world >> addr >> port >> store_port;) {
    ranks.insert(rank);
    ports.insert(port + " " + store_port);
    CHECK(local == rank);
    CHECK(world == "3");
    CHECK(local_world == "3");
    CHECK(addr == "127.0.0.1");
    CHECK(store_port != port);  // MASTER_PORT is torch's store's
  }
  CHECK(ranks == std::set<std::string>{"0", "1", "2"});
  CHECK(ports.size() == 1);  // one store address for all
  CHECK(run.err.find("all 3 rank(s) succeeded") != std::string::npos);
}

TEST_CASE("launch: each line a rank writes comes whole, prefixed with its rank") {
  const auto run = run_cli(
      "launch --nproc 2 -- sh -c 'for i in 1 2 3; do echo line $i of $RANK; done; "
      "echo to stderr >&2; printf unfinished'");
  CHECK(run.status == 0);
  for (const std::string rank : {"0", "1"}) {
    for (const std::string i : {"1", "2", "3"})
      CHECK(run.out.find("[rank " + rank + "]: line " + i + " of " + rank + "\n") !=
            std::string::npos);
    CHECK(run.out.find("[rank " + rank + "]: unfinished\n") != std::string::npos);
    CHECK(run.err.find("[rank " + rank + "]: to stderr\n") != std::string::npos);
  }
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) CHECK(line.starts_with("[rank "));
}

TEST_CASE("launch: the first failing rank stops the others, which leave nothing behind") {
  const auto dir = fresh_dir("launch_failure");
  // Rank 1 fails; rank 0 ignores SIGTERM and has a child of its own: both must still be gone.
  const auto run = run_cli(
      "launch --nproc 2 --grace-ms 300 -- sh -c '"
      "echo $$ > " +
      (dir / "rank$RANK").string() +
      "; "
      "if [ $RANK = 1 ]; then sleep 0.3; exit 7; fi; "
      "trap \"\" TERM; sleep 60 & echo $! > " +
      (dir / "child").string() + "; wait'");
  CHECK(run.status == 7);
  CHECK(run.err.find("rank 1 exited with status 7") != std::string::npos);
  CHECK(run.err.find("killing them") != std::string::npos);
  const auto pids = recorded_pids(dir);
  CHECK(pids.size() == 3);
  CHECK(all_gone(pids));
}

TEST_CASE("launch: a signal to the launcher reaches every rank") {
  const auto dir = fresh_dir("launch_signal");
  const auto status_file = test::scratch().path("launch_signal_status");
  // The launcher runs in the background of a shell that sends it SIGTERM once the ranks are up.
  const std::string launch = test::shell_quoted(ODBATCH_CLI_PATH) +
                             " launch --nproc 2 -- sh -c 'echo $$ > " +
                             (dir / "rank$RANK").string() + "; sleep 60'";
  const std::string script = launch + " 2>/dev/null & pid=$!; while [ $(ls " + dir.string() +
                             " | wc -l) -lt 2 ]; do sleep 0.05; done; kill -TERM $pid; wait $pid; "
                             "echo $? > " +
                             status_file.string();
  const auto script_file = test::scratch().write("launch_signal.sh", script);
  REQUIRE(std::system(("sh " + test::shell_quoted(script_file)).c_str()) == 0);
  CHECK(test::read_file(status_file) == "143\n");
  CHECK(all_gone(recorded_pids(dir)));
}

TEST_CASE("launch: a command that cannot run is reported like a shell does") {
  const auto run = run_cli("launch --nproc 2 -- /nonexistent/odbatch-rank");
  CHECK(run.status == 127);
  CHECK(run.err.find("cannot start rank 0") != std::string::npos);
  CHECK(run_cli("launch -- true").status == 2);  // --nproc is required
}

}  // namespace odbatch
