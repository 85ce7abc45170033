#include "odbatch/core/fault_spec.hpp"

#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <string>

namespace odbatch {
namespace {

using std::chrono::milliseconds;

AbortTiming timing() {
  return {milliseconds(200), milliseconds(2000), milliseconds(3000), milliseconds(5000)};
}

std::string parse_error(const std::string& text) {
  try {
    parse_fault_spec(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST_CASE("fault specs parse and print in one form") {
  const FaultSpec stop = parse_fault_spec("kind=stop,rank=2,round=7,ms=4000");
  CHECK(stop == FaultSpec{FaultKind::stop, 2, 7, milliseconds(4000)});
  CHECK(to_string(stop) == "kind=stop,rank=2,round=7,ms=4000");
  const FaultSpec kill = parse_fault_spec("rank=1,kind=kill");
  CHECK(kill == FaultSpec{FaultKind::kill, 1, 0, milliseconds(0)});
  CHECK(to_string(kill) == "kind=kill,rank=1,round=0");
  for (FaultKind kind : all_fault_kinds()) {
    FaultSpec spec{kind, 0, 3, milliseconds(0)};
    if (kind == FaultKind::stop || kind == FaultKind::delay) spec.duration = milliseconds(9);
    CHECK(parse_fault_spec(to_string(spec)) == spec);
  }
}

TEST_CASE("malformed fault specs are refused, naming the problem") {
  CHECK(parse_error("rank=1").find("kind= is missing") != std::string::npos);
  CHECK(parse_error("kind=kill").find("rank= is missing") != std::string::npos);
  CHECK(parse_error("kind=explode,rank=1").find("unknown kind 'explode'") != std::string::npos);
  CHECK(parse_error("kind=kill,rank=1,when=3").find("unknown field 'when'") != std::string::npos);
  CHECK(parse_error("kind=kill,rank=x").find("rank 'x' is not") != std::string::npos);
  CHECK(parse_error("kind=kill,rank=-1").find("rank '-1' is not") != std::string::npos);
  CHECK(parse_error("kind=kill,rank=4294967296").find("out of range") != std::string::npos);
  CHECK(parse_error("kind=kill,rank").find("'rank' is not FIELD=VALUE") != std::string::npos);
  CHECK(parse_error("kind=stop,rank=1").find("ms= is required by stop") != std::string::npos);
  CHECK(parse_error("kind=kill,rank=1,ms=5").find("ms= is not taken by kill") != std::string::npos);
  CHECK(parse_error("kind=stop,rank=1,ms=86400001").find("over a day") != std::string::npos);
  CHECK(parse_error("kind=store_unreachable,rank=1").find("needs rank=0") != std::string::npos);
}

TEST_CASE("abort bounds follow from the timing of each kind of failure") {
  const auto t = timing();
  const auto bound = [&](const std::string& text) {
    return abort_bound(parse_fault_spec(text), t).count();
  };
  CHECK(bound("kind=kill,rank=1") == 2000 + 400);
  CHECK(bound("kind=stop,rank=1,ms=9000") == 2000 + 400);
  CHECK(bound("kind=stop,rank=0,ms=9000") == 5000 + 200 + 400);  // the store's host
  CHECK(bound("kind=delay,rank=1,ms=9000") == 3000 + 400);
  CHECK(bound("kind=store_unreachable,rank=0") == 5000 + 400);
  CHECK(bound("kind=corrupt,rank=1") == 400);
  CHECK(bound("kind=truncate,rank=1") == 400);
  CHECK(bound("kind=wrong_version,rank=1") == 400);
  const FaultSpec kill = parse_fault_spec("kind=kill,rank=1");
  CHECK(exit_bound(kill, t, false) == abort_bound(kill, t));
  CHECK(exit_bound(kill, t, true) == abort_bound(kill, t) + milliseconds(2000));
}

TEST_CASE("only stops and delays longer than their timeouts fail a run") {
  const auto t = timing();
  CHECK(fault_fails_run(parse_fault_spec("kind=kill,rank=1"), t));
  CHECK(fault_fails_run(parse_fault_spec("kind=corrupt,rank=1"), t));
  CHECK(!fault_fails_run(parse_fault_spec("kind=stop,rank=1,ms=500"), t));
  CHECK(fault_fails_run(parse_fault_spec("kind=stop,rank=1,ms=2001"), t));
  CHECK(!fault_fails_run(parse_fault_spec("kind=delay,rank=1,ms=2999"), t));
  CHECK(fault_fails_run(parse_fault_spec("kind=delay,rank=1,ms=3001"), t));
  AbortTiming no_round_timeout = t;
  no_round_timeout.round_timeout = milliseconds(0);
  CHECK(!fault_fails_run(parse_fault_spec("kind=delay,rank=1,ms=99999"), no_round_timeout));
}

TEST_CASE("random faults: seeded, in range, every kind drawn, and outlasting their timeouts") {
  const auto t = timing();
  SplitMix64 first(11), second(11);
  std::set<FaultKind> kinds;
  for (int i = 0; i < 200; ++i) {
    const FaultSpec spec = random_fault(first, all_fault_kinds(), 4, 30, t);
    CHECK(spec == random_fault(second, all_fault_kinds(), 4, 30, t));
    CHECK(spec.rank < 4);
    CHECK(spec.round < 30);
    if (spec.kind == FaultKind::store_unreachable) CHECK(spec.rank == 0);
    CHECK(fault_fails_run(spec, t));
    CHECK(parse_fault_spec(to_string(spec)) == spec);
    kinds.insert(spec.kind);
  }
  CHECK(kinds.size() == all_fault_kinds().size());
  CHECK_THROWS_AS(random_fault(first, {}, 4, 30, t), std::invalid_argument);
}

}  // namespace
}  // namespace odbatch
