#pragma once
// The round protocol's collective: one allgather of variable-size byte blobs per round, on the
// loader's own communication context (never the trainer's). Every wait has a deadline, and an
// abort from any rank wakes every other.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace odbatch {

// A collective that cannot complete: a deadline passed, a rank aborted or a peer failed.
class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Collective {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Collective() = default;

  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t world_size() const = 0;

  // Every rank's blob, indexed by rank. Throws CollectiveError when the deadline passes before all
  // ranks contributed (naming the missing ranks) or when the group was aborted (with its reason).
  virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                        Clock::time_point deadline) = 0;

  // Fails every pending and future collective of the group with `reason`; the first reason wins.
  virtual void abort(const std::string& reason) = 0;

  // Called by every rank once its trainer has taken an epoch's last batch: returns when every
  // rank got there, so that no rank reports a finished epoch while another has failed in it.
  // Throws CollectiveError naming the cause otherwise. Ranks that are threads of one process
  // share its fate and need no barrier.
  virtual void finish_epoch(std::uint64_t /*epoch*/, Clock::time_point /*deadline*/) {}

  // Announced departure (PROTOCOL.md §Failures): called by every rank that stops after taking
  // `steps` batches of epoch `epoch`, e.g. at max_steps. Returns once every rank has announced the
  // same departure, so that no rank leaves while another still needs its part of the rounds
  // planning those batches; rounds beyond them are not needed by anyone. Afterwards the group is
  // over but not failed: pending and later exchanges throw CollectiveError, nobody's abort
  // listener is called. Throws CollectiveError (and aborts the group) when ranks announce
  // different departures, a rank dies or the group is aborted, or not every rank has departed
  // by `deadline`. A rank alone has nobody to wait for.
  virtual void depart(std::uint64_t /*epoch*/, std::uint64_t /*steps*/,
                      Clock::time_point /*deadline*/) {}

  // Ranks in other processes: `listener` is called once, from a thread of the collective's, as
  // soon as any rank's failure aborts the group, even while this rank is not exchanging (so a
  // trainer blocked in its own collectives can be freed). Set it before the first collective.
  // Ranks that are threads of one process learn of failures through their epochs.
  using AbortListener = std::function<void(const std::string& reason)>;
  virtual void set_abort_listener(AbortListener /*listener*/) {}
};

}  // namespace odbatch
