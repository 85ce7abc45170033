#pragma once
// How a rank fills its window for a round: the next threshold(k) accepted samples of its shard,
// or all that remain. Exhaustion is decided from counts (the shard's size is known and rejected
// records count as consumed), never from when an end-of-input message arrives.
#include <cstdint>

#include "odbatch/core/proposal.hpp"

namespace odbatch {

class RoundAdmission {
 public:
  explicit RoundAdmission(std::uint64_t shard_size) : shard_size_(shard_size) {}

  // Starts admitting for a round that takes `threshold` accepted samples.
  void begin_round(std::uint32_t threshold) {
    threshold_ = threshold;
    accepted_this_round_ = 0;
  }
  // Whether the round still takes samples.
  bool wants_more() const { return accepted_this_round_ < threshold_ && !exhausted(); }
  std::uint32_t still_wanted() const {
    return wants_more() ? threshold_ - accepted_this_round_ : 0;
  }

  void count_accepted() {
    ++consumed_;
    ++accepted_this_round_;
  }
  void count_rejected() { ++consumed_; }

  bool exhausted() const { return consumed_ >= shard_size_; }
  std::uint64_t consumed() const { return consumed_; }
  std::uint64_t shard_size() const { return shard_size_; }

  // The state this rank proposes once the round's admission is over.
  RankState state(bool window_empty) const {
    if (!exhausted()) return RankState::active;
    return window_empty ? RankState::done : RankState::draining;
  }

 private:
  std::uint64_t shard_size_;
  std::uint64_t consumed_ = 0;
  std::uint32_t threshold_ = 0;
  std::uint32_t accepted_this_round_ = 0;
};

}  // namespace odbatch
