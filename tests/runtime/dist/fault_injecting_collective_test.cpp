#include "odbatch/dist/fault_injecting_collective.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/proto_msgs/proposal_codec.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;
using Frames = std::vector<std::vector<std::byte>>;

std::vector<std::byte> proposal_frame(std::uint32_t rank, std::uint64_t round) {
  Proposal p;
  p.round = round;
  p.samples = {{100 + rank, 50, 0, 0}, {7, 7, 0, 1}};
  p.entered = 2;
  return encode_proposal(p);
}

// Three exchanges of two ranks: what rank 0 received.
std::vector<Frames> three_exchanges(Collective& rank0, Collective& rank1) {
  std::vector<Frames> received;
  std::thread other([&] {
    for (std::uint64_t round = 0; round < 3; ++round)
      rank1.allgather(proposal_frame(1, round), Collective::Clock::now() + 10s);
  });
  for (std::uint64_t round = 0; round < 3; ++round)
    received.push_back(rank0.allgather(proposal_frame(0, round), Collective::Clock::now() + 10s));
  other.join();
  return received;
}

// Three exchanges of two ranks, rank 1's collective injecting `fault`: what rank 0 received.
std::vector<Frames> exchanges_with_fault(const FaultSpec& fault) {
  auto group = InprocGroup::create(2);
  auto rank0 = group->member(0);
  FaultInjectingCollective rank1(group->member(1), fault, nullptr);
  return three_exchanges(*rank0, rank1);
}

std::string decode_error_of(const std::vector<std::byte>& frame) {
  Proposal decoded;
  const auto error = decode_proposal(frame, decoded);
  return error ? error->message : std::string{};
}

TEST_CASE("a frame fault changes only the faulted rank's frame, only in its round") {
  struct Case {
    FaultKind kind;
    std::string error;
  };
  for (const Case& c : {Case{FaultKind::corrupt, "magic at byte offset 0"},
                        Case{FaultKind::truncate, "frame"},  // shorter than a header, or truncated
                        Case{FaultKind::wrong_version, "unsupported version"}}) {
    CAPTURE(to_string(c.kind));
    const auto received = exchanges_with_fault(FaultSpec{c.kind, 1, 1, 0ms});
    for (std::uint64_t round = 0; round < 3; ++round) {
      CAPTURE(round);
      CHECK(received[round][0] == proposal_frame(0, round));
      if (round == 1)
        CHECK(decode_error_of(received[round][1]).find(c.error) != std::string::npos);
      else
        CHECK(received[round][1] == proposal_frame(1, round));
    }
  }
}

TEST_CASE("a delay holds the faulted rank's exchange back and changes nothing else") {
  const auto start = std::chrono::steady_clock::now();
  const auto received = exchanges_with_fault(FaultSpec{FaultKind::delay, 1, 2, 100ms});
  CHECK(std::chrono::steady_clock::now() - start >= 100ms);  // sleep_for's lower bound
  for (std::uint64_t round = 0; round < 3; ++round)
    CHECK(received[round][1] == proposal_frame(1, round));
}

TEST_CASE("round_collective_with_fault wraps the faulted rank's collective, no other") {
  const auto group = InprocGroup::create(2);
  const auto make = round_collective_with_fault(FaultSpec{FaultKind::corrupt, 1, 1, 0ms});
  const auto rank0 = make(DistEnv::inproc(group, 0, 2), DistributedConfig{});
  const auto rank1 = make(DistEnv::inproc(group, 1, 2), DistributedConfig{});
  const auto received = three_exchanges(*rank0, *rank1);
  CHECK(received[1][0] == proposal_frame(0, 1));
  CHECK(decode_error_of(received[1][1]).find("magic at byte offset 0") != std::string::npos);
  CHECK(received[2][1] == proposal_frame(1, 2));
}

TEST_CASE("fault specs: one fault per rank, found by rank") {
  const std::string value = "kind=kill,rank=1,round=4;kind=corrupt,rank=3";
  CHECK(fault_for_rank(value, 1) == FaultSpec{FaultKind::kill, 1, 4, 0ms});
  CHECK(fault_for_rank(value, 3) == FaultSpec{FaultKind::corrupt, 3, 0, 0ms});
  CHECK(!fault_for_rank(value, 0));
  CHECK(!fault_for_rank("", 0));
  CHECK_THROWS_WITH_AS(fault_for_rank("kind=kill,rank=1;kind=corrupt,rank=1", 1),
                       doctest::Contains("more than one fault for rank 1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(fault_for_rank("kind=kill", 0),
                       doctest::Contains("fault spec: rank= is missing"), std::invalid_argument);
}

}  // namespace
}  // namespace odbatch
