#include "odbatch/core/grouping.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <queue>
#include <tuple>

#include "odbatch/core/screening.hpp"

namespace odbatch {
namespace {

bool exceeds_budget(const ProposedSample& s, const BatchingConfig& c) {
  return exceeds_budget(SampleCost{0, s.tokens, s.labels, s.patches}, c);
}

void add_member(LocalGroup& g, std::uint32_t index, const ProposedSample& s) {
  g.members.push_back(index);
  g.max_tokens = std::max(g.max_tokens, s.tokens);
  g.sum_tokens += s.tokens;
  g.sum_patches += s.patches;
}

// Classifies a formed group: good (closed and hold_pct full) and forced (holds an old sample).
void classify(LocalGroup& g, std::span<const ProposedSample> window, const BatchingConfig& c) {
  const std::uint64_t base = c.budget_mode == BudgetMode::padded
                                 ? std::uint64_t{g.max_tokens} * g.members.size()
                                 : std::uint64_t{c.token_budget};
  g.good = g.closed && 100 * g.sum_tokens >= std::uint64_t{c.hold_pct} * base;
  g.forced = std::any_of(g.members.begin(), g.members.end(),
                         [&](std::uint32_t i) { return window[i].age >= c.max_defer_rounds; });
  g.over_budget = g.members.size() == 1 && exceeds_budget(window[g.members[0]], c);
}

// Window indices ordered by tokens descending, ties in window order.
// Window positions ordered by tokens (descending or ascending), ties in window order: a stable
// least-significant-digit radix sort on the token counts, byte by byte, skipping bytes that are
// equal everywhere (most windows need two passes). Several times faster than a comparison sort.
std::vector<std::uint32_t> by_tokens(std::span<const ProposedSample> window, bool longest_first) {
  const auto n = static_cast<std::uint32_t>(window.size());
  std::vector<std::uint32_t> key(n);
  for (std::uint32_t i = 0; i < n; ++i)
    key[i] = longest_first ? ~window[i].tokens : window[i].tokens;
  std::vector<std::uint32_t> order(n), scratch(n);
  std::iota(order.begin(), order.end(), 0u);
  for (unsigned shift = 0; shift < 32; shift += 8) {
    std::array<std::uint32_t, 257> start{};
    for (const auto k : key) ++start[((k >> shift) & 0xff) + 1];
    if (std::any_of(start.begin() + 1, start.end(), [&](std::uint32_t c) { return c == n; }))
      continue;  // this byte is the same in every key
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (const auto i : order) scratch[start[(key[i] >> shift) & 0xff]++] = i;
    order.swap(scratch);
  }
  return order;
}

std::vector<std::uint32_t> longest_first(std::span<const ProposedSample> window) {
  return by_tokens(window, /*longest_first=*/true);
}

std::vector<LocalGroup> group_padded(std::span<const ProposedSample> window,
                                     const BatchingConfig& c) {
  const auto order = longest_first(window);
  std::vector<LocalGroup> groups;
  std::size_t i = 0;
  while (i < order.size()) {
    LocalGroup g;
    const auto& opener = window[order[i]];
    const std::uint64_t capacity = std::max<std::uint64_t>(1, c.token_budget / opener.tokens);
    add_member(g, order[i++], opener);
    bool patch_refused = false;
    while (i < order.size() && g.members.size() < capacity) {
      const auto& s = window[order[i]];
      if (c.patch_budget > 0 && g.sum_patches + s.patches > c.patch_budget) {
        patch_refused = true;
        break;
      }
      add_member(g, order[i++], s);
    }
    g.closed = g.members.size() == capacity || patch_refused;
    classify(g, window, c);
    groups.push_back(std::move(g));
  }
  return groups;
}

// Best-fit decreasing: open with the longest unused sample, then repeatedly add the longest unused
// sample that still fits the token (and patch) budget.
std::vector<LocalGroup> group_packed(std::span<const ProposedSample> window,
                                     const BatchingConfig& c) {
  const auto order = longest_first(window);
  const std::size_t n = order.size();
  // next_unused[j]: smallest unused sorted position >= j (n when none); path-halving find.
  std::vector<std::uint32_t> next_unused(n + 1);
  std::iota(next_unused.begin(), next_unused.end(), 0u);
  auto find = [&](std::uint32_t j) {
    while (next_unused[j] != j) {
      next_unused[j] = next_unused[next_unused[j]];
      j = next_unused[j];
    }
    return j;
  };
  auto take = [&](std::uint32_t j) { next_unused[j] = j + 1; };
  // First sorted position whose tokens are <= gap.
  auto first_fitting = [&](std::uint64_t gap) {
    auto it = std::partition_point(order.begin(), order.end(),
                                   [&](std::uint32_t i) { return window[i].tokens > gap; });
    return static_cast<std::uint32_t>(it - order.begin());
  };

  std::vector<LocalGroup> groups;
  std::size_t remaining = n;
  while (remaining > 0) {
    LocalGroup g;
    const std::uint32_t head = find(0);
    const auto& opener = window[order[head]];
    add_member(g, order[head], opener);
    take(head);
    --remaining;
    if (!exceeds_budget(opener, c)) {
      std::uint64_t gap = c.token_budget - opener.tokens;
      while (gap > 0 && remaining > 0) {
        std::uint32_t q = find(first_fitting(gap));
        while (q < n && c.patch_budget > 0 &&
               g.sum_patches + window[order[q]].patches > c.patch_budget)
          q = find(q + 1);
        if (q >= n) break;
        add_member(g, order[q], window[order[q]]);
        take(q);
        --remaining;
        gap -= window[order[q]].tokens;
      }
      g.closed = remaining > 0 || gap == 0;
    } else {
      g.closed = true;
    }
    classify(g, window, c);
    groups.push_back(std::move(g));
  }
  return groups;
}

// Rebuilds a group's derived fields from its members.
LocalGroup make_group(std::span<const std::uint32_t> members,
                      std::span<const ProposedSample> window, const BatchingConfig& c) {
  LocalGroup g;
  for (auto i : members) add_member(g, i, window[i]);
  g.over_budget = g.members.size() == 1 && exceeds_budget(window[members[0]], c);
  return g;
}

void append_members(const LocalGroup& g, std::vector<std::uint32_t>& out) {
  out.insert(out.end(), g.members.begin(), g.members.end());
}

// Distinct window positions in ascending order: marked and collected, linear in the window.
void sort_positions(std::vector<std::uint32_t>& positions, std::size_t window_size) {
  std::vector<bool> present(window_size, false);
  for (auto i : positions) present[i] = true;
  positions.clear();
  for (std::uint32_t i = 0; i < window_size; ++i)
    if (present[i]) positions.push_back(i);
}

}  // namespace

std::vector<LocalGroup> group_balanced(std::span<const ProposedSample> window,
                                       const BatchingConfig& config) {
  return config.budget_mode == BudgetMode::padded ? group_padded(window, config)
                                                  : group_packed(window, config);
}

std::uint32_t balanced_step_count(std::span<const Proposal> proposals,
                                  std::span<const std::vector<LocalGroup>> groups) {
  bool any_active = false, any_sample = false;
  std::uint64_t min_active_good = UINT64_MAX, max_forced = 0, max_groups = 0;
  for (std::size_t r = 0; r < proposals.size(); ++r) {
    const auto& g = groups[r];
    any_sample = any_sample || !g.empty();
    max_groups = std::max<std::uint64_t>(max_groups, g.size());
    max_forced = std::max<std::uint64_t>(
        max_forced, std::count_if(g.begin(), g.end(), [](const auto& x) { return x.forced; }));
    if (proposals[r].state == RankState::active) {
      any_active = true;
      min_active_good = std::min<std::uint64_t>(
          min_active_good, std::count_if(g.begin(), g.end(), [](const auto& x) { return x.good; }));
    }
  }
  if (!any_sample) return 0;
  if (!any_active) return static_cast<std::uint32_t>(max_groups);
  return static_cast<std::uint32_t>(std::max({min_active_good, max_forced, std::uint64_t{1}}));
}

FittedGroups fit_balanced(std::vector<LocalGroup> groups, std::uint32_t steps,
                          std::span<const ProposedSample> window, const BatchingConfig& config) {
  FittedGroups out;
  const auto mode = config.budget_mode;
  if (groups.size() > steps) {
    // Priority: forced, then good, then costliest; ties: the opener that comes first in the window.
    std::vector<std::uint32_t> rank(groups.size());
    std::iota(rank.begin(), rank.end(), 0u);
    auto key = [&](std::uint32_t i) {
      const auto& g = groups[i];
      return std::make_tuple(!g.forced, !g.good, ~g.cost(mode), g.members.front());
    };
    std::nth_element(rank.begin(), rank.begin() + steps, rank.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
    std::vector<bool> keep(groups.size(), false);
    for (std::uint32_t k = 0; k < steps; ++k) keep[rank[k]] = true;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (keep[i])
        out.groups.push_back(std::move(groups[i]));
      else
        append_members(groups[i], out.deferred);
    }
    sort_positions(out.deferred, window.size());
    return out;
  }
  if (groups.size() == steps || groups.empty()) {
    out.groups = std::move(groups);
    return out;
  }
  // Split the group with most samples (ties: earliest in list order) in halves, the first half
  // taking the extra sample. A piece is (group, start, count); list order is (group, start).
  using Piece = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
  auto later = [](const Piece& a, const Piece& b) {
    const auto [ga, sa, ca] = a;
    const auto [gb, sb, cb] = b;
    return std::tie(ca, gb, sb) < std::tie(cb, ga, sa);  // max count, then min (group, start)
  };
  std::priority_queue<Piece, std::vector<Piece>, decltype(later)> heap(later);
  for (std::uint32_t i = 0; i < groups.size(); ++i)
    heap.emplace(i, 0u, static_cast<std::uint32_t>(groups[i].members.size()));
  std::vector<Piece> settled;
  std::size_t count = groups.size();
  while (count < steps && std::get<2>(heap.top()) >= 2) {
    const auto [g, start, n] = heap.top();
    heap.pop();
    const std::uint32_t head = (n + 1) / 2;
    heap.emplace(g, start, head);
    heap.emplace(g, start + head, n - head);
    ++count;
  }
  while (!heap.empty()) {
    settled.push_back(heap.top());
    heap.pop();
  }
  std::sort(settled.begin(), settled.end(), [](const Piece& a, const Piece& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (const auto& [g, start, n] : settled) {
    const auto& members = groups[g].members;
    out.groups.push_back(make_group(std::span(members).subspan(start, n), window, config));
    out.groups.back().forced = groups[g].forced;
  }
  return out;
}

ReferenceGrouping group_reference(std::span<const ProposedSample> window,
                                  const BatchingConfig& config) {
  const auto order = by_tokens(window, /*longest_first=*/false);
  auto capacity_of = [&](const ProposedSample& s) {
    std::uint64_t cap = std::max<std::uint64_t>(config.token_budget / s.tokens, 1);
    if (s.patches > 0 && config.patch_budget > 0)
      cap =
          std::min<std::uint64_t>(cap, std::max<std::uint64_t>(config.patch_budget / s.patches, 1));
    return cap;
  };
  // Walk longest to shortest with the capacity lagging one group behind.
  std::vector<std::vector<std::uint32_t>> formed;
  std::vector<std::uint32_t> current;
  std::uint64_t current_patches = 0, capacity = 0;
  auto close = [&] {
    formed.push_back(std::move(current));
    current.clear();
    current_patches = 0;
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto& s = window[*it];
    if (config.patch_budget > 0 && !current.empty() &&
        current_patches + s.patches > config.patch_budget)
      close();
    current.push_back(*it);
    current_patches += s.patches;
    if (current.size() >= capacity) {
      capacity = capacity_of(s);
      close();
    }
  }
  if (!current.empty()) close();

  ReferenceGrouping out;
  // Ascending output: shortest group first, members ascending.
  std::reverse(formed.begin(), formed.end());
  for (std::size_t i = 0; i < formed.size(); ++i) {
    std::reverse(formed[i].begin(), formed[i].end());
    if (i < config.window)
      out.groups.push_back(make_group(formed[i], window, config));
    else
      out.deferred.insert(out.deferred.end(), formed[i].begin(), formed[i].end());
  }
  sort_positions(out.deferred, window.size());
  return out;
}

std::uint32_t reference_step_count(std::span<const Proposal> proposals,
                                   std::span<const ReferenceGrouping> groupings) {
  std::uint64_t max_groups = 0, min_budget = UINT64_MAX, min_samples = UINT64_MAX;
  bool any = false;
  for (std::size_t r = 0; r < proposals.size(); ++r) {
    const auto& groups = groupings[r].groups;
    if (groups.empty()) continue;
    any = true;
    max_groups = std::max<std::uint64_t>(max_groups, groups.size());
    if (proposals[r].entered > 0)
      min_budget = std::min<std::uint64_t>(min_budget, proposals[r].entered);
    std::uint64_t samples = 0;
    for (const auto& g : groups) samples += g.members.size();
    min_samples = std::min(min_samples, samples);
  }
  if (!any) return 0;
  return static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, std::min({max_groups, min_budget, min_samples})));
}

FittedGroups fit_reference(std::vector<LocalGroup> groups, std::uint32_t steps,
                           std::span<const ProposedSample> window, const BatchingConfig& config) {
  FittedGroups out;
  if (groups.empty()) return out;
  if (groups.size() > steps) {
    // Keep the groups with most samples (ties: lower index), in their original order.
    std::vector<std::uint32_t> rank(groups.size());
    std::iota(rank.begin(), rank.end(), 0u);
    std::stable_sort(rank.begin(), rank.end(), [&](std::uint32_t a, std::uint32_t b) {
      return groups[a].members.size() > groups[b].members.size();
    });
    std::vector<bool> keep(groups.size(), false);
    for (std::uint32_t k = 0; k < steps; ++k) keep[rank[k]] = true;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (keep[i])
        out.groups.push_back(std::move(groups[i]));
      else
        append_members(groups[i], out.deferred);
    }
    sort_positions(out.deferred, window.size());
    return out;
  }
  // Peel the longest sample off the highest-index multi-sample group into a singleton right after
  // it; the peeled singletons of one group therefore end up in ascending order after its prefix.
  std::vector<std::uint32_t> peel(groups.size(), 0);
  std::uint64_t needed = steps - groups.size();
  for (std::size_t j = groups.size(); j-- > 0 && needed > 0;) {
    const std::uint64_t d = std::min<std::uint64_t>(needed, groups[j].members.size() - 1);
    peel[j] = static_cast<std::uint32_t>(d);
    needed -= d;
  }
  for (std::size_t j = 0; j < groups.size(); ++j) {
    if (peel[j] == 0) {
      out.groups.push_back(std::move(groups[j]));
      continue;
    }
    const std::span<const std::uint32_t> members = groups[j].members;
    const std::size_t keep = members.size() - peel[j];
    out.groups.push_back(make_group(members.first(keep), window, config));
    for (std::size_t k = keep; k < members.size(); ++k)
      out.groups.push_back(make_group(members.subspan(k, 1), window, config));
  }
  return out;
}

}  // namespace odbatch
