#pragma once
// The byte-pair merge loop shared by the BPE tokenizers: a word starts as one symbol per byte;
// repeatedly the adjacent pair with the lowest merge rank is merged, the leftmost among equal
// ranks, until no adjacent pair has a rank. A min-heap of candidate pairs over a linked list of
// symbols keeps this O(n log n) in the word's length; stale heap entries are recognised by their
// spans and skipped.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "odbatch/text/text_tokenizer.hpp"

namespace odbatch::text_detail {

struct PairMerge {
  std::uint32_t rank = 0;
  TokenId id = 0;  // the merged symbol's id
};

// `byte_ids[b]` is the id of the one-byte symbol b. `merge_of(left_id, right_id, begin, middle,
// end)` says whether the adjacent symbols word[begin, middle) and word[middle, end) merge, and into
// what: std::optional<PairMerge>. Appends the final symbols' ids to `ids`.
template <class MergeOf>
void merge_byte_pairs(std::string_view word, const TokenId* byte_ids, const MergeOf& merge_of,
                      std::vector<TokenId>& ids) {
  const auto n = static_cast<std::uint32_t>(word.size());
  if (n == 0) return;
  if (n == 1) {
    ids.push_back(byte_ids[static_cast<unsigned char>(word[0])]);
    return;
  }
  // Symbols are indexed by the byte where they begin; `end` is where they end (0 once merged
  // into their left neighbour).
  struct Symbol {
    TokenId id;
    std::uint32_t end;
    std::uint32_t previous;  // index of the symbol before, or kNone
  };
  struct Candidate {
    std::uint32_t rank;
    std::uint32_t begin;
    std::uint32_t middle;
    std::uint32_t end;
    TokenId id;
    // std::push_heap builds a max-heap: "greater" first means lowest rank, then leftmost, on top.
    bool operator<(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : begin > other.begin;
    }
  };
  constexpr std::uint32_t kNone = UINT32_MAX;
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.resize(n);
  heap.clear();
  for (std::uint32_t i = 0; i < n; ++i)
    symbols[i] = {byte_ids[static_cast<unsigned char>(word[i])], i + 1, i == 0 ? kNone : i - 1};

  const auto consider = [&](std::uint32_t begin, std::uint32_t middle) {
    const std::uint32_t end = symbols[middle].end;
    if (const std::optional<PairMerge> merge =
            merge_of(symbols[begin].id, symbols[middle].id, begin, middle, end)) {
      heap.push_back({merge->rank, begin, middle, end, merge->id});
      std::push_heap(heap.begin(), heap.end());
    }
  };
  for (std::uint32_t i = 0; i + 1 < n; ++i) consider(i, i + 1);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.begin];
    // Stale: either side was merged into something else since the candidate was made.
    if (left.end != top.middle || symbols[top.middle].end != top.end) continue;
    left.id = top.id;
    left.end = top.end;
    symbols[top.middle].end = 0;
    if (top.end < n) symbols[top.end].previous = top.begin;
    if (left.previous != kNone) consider(left.previous, top.begin);
    if (top.end < n) consider(top.begin, top.end);
  }
  for (std::uint32_t i = 0; i < n; i = symbols[i].end) ids.push_back(symbols[i].id);
}

}  // namespace odbatch::text_detail
