#pragma once
// Small rounds for the coordinator's tests: a proposal of given samples, and a batching config
// whose budget a few of them fill.
#include <cstdint>
#include <utility>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/proposal.hpp"

namespace odbatch::test {

inline Proposal proposal_of(std::uint64_t round, RankState state,
                            std::vector<ProposedSample> samples) {
  Proposal p;
  p.round = round;
  p.state = state;
  p.entered = static_cast<std::uint32_t>(samples.size());
  p.samples = std::move(samples);
  return p;
}

// A budget of 100 tokens, samples of up to 400, a window of 4.
inline BatchingConfig small_config() {
  BatchingConfig c;
  c.token_budget = 100;
  c.max_seq_len = 400;
  c.window = 4;
  return c;
}

}  // namespace odbatch::test
