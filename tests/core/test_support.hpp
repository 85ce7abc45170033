#pragma once
// Small builders shared by the core tests.
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "odbatch/core/config.hpp"
#include "odbatch/core/proposal.hpp"

namespace odbatch::test {

inline std::vector<ProposedSample> window_of(std::initializer_list<std::uint32_t> tokens) {
  std::vector<ProposedSample> w;
  for (auto t : tokens) w.push_back({t, t, 0, 0});
  return w;
}

inline Proposal proposal_of(RankState state, std::vector<ProposedSample> samples) {
  Proposal p;
  p.state = state;
  p.entered = static_cast<std::uint32_t>(samples.size());
  p.samples = std::move(samples);
  return p;
}

inline BatchingConfig budget_config(std::uint32_t token_budget) {
  BatchingConfig c;
  c.token_budget = token_budget;
  c.max_seq_len = token_budget * 4;
  return c;
}

}  // namespace odbatch::test
