// The records an epoch reads from mixed sources: each source's every record exactly once per
// cycle of its epochs_per_pass epochs, chunks disjoint and of the stated sizes, the same for the
// same (seed, epoch) and another permutation each cycle.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "odbatch/core/epoch_selection.hpp"

namespace odbatch {
namespace {

std::vector<SampleId> ids_of(const EpochSelection& selection) {
  std::vector<SampleId> ids;
  for (std::uint64_t i = 0; i < selection.size(); ++i) ids.push_back(selection[i]);
  return ids;
}

std::vector<SampleId> ids_of(std::span<const MixedSource> sources, std::uint64_t seed,
                             std::uint64_t epoch, bool shuffle = true) {
  return ids_of(EpochSelection(sources, seed, epoch, shuffle));
}

// The ids of `ids` in [source.first_id, first_id + record_count).
std::vector<SampleId> of_source(const std::vector<SampleId>& ids, const MixedSource& source) {
  std::vector<SampleId> mine;
  for (const auto id : ids)
    if (id >= source.first_id && id < source.first_id + source.record_count) mine.push_back(id);
  return mine;
}

}  // namespace

TEST_CASE("a keyed permutation permutes 0 to size - 1 for every size, fixed by its key") {
  for (std::uint64_t size : {1, 2, 3, 5, 16, 17, 100, 1000, 4097}) {
    CAPTURE(size);
    const KeyedPermutation permutation(size, {1, 2, 3});
    std::vector<std::uint64_t> values;
    for (std::uint64_t i = 0; i < size; ++i) values.push_back(permutation(i));
    std::vector<std::uint64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (std::uint64_t i = 0; i < size; ++i) CHECK(sorted[i] == i);
    const KeyedPermutation same(size, {1, 2, 3});
    const KeyedPermutation other(size, {1, 2, 4});
    bool differs = false;
    for (std::uint64_t i = 0; i < size; ++i) {
      CHECK(same(i) == values[i]);
      differs = differs || other(i) != values[i];
    }
    if (size >= 5) CHECK(differs);
  }
}

TEST_CASE("each record of a source is selected exactly once per cycle of its epochs_per_pass") {
  const std::vector<MixedSource> sources{{0, 37, 1}, {37, 100, 3}, {137, 10, 4}, {147, 5, 7}};
  for (const bool shuffle : {true, false}) {
    CAPTURE(shuffle);
    for (std::uint64_t seed : {0, 9}) {
      CAPTURE(seed);
      for (std::uint64_t g = 0; g < sources.size(); ++g) {
        CAPTURE(g);
        const auto& source = sources[g];
        const auto k_epochs = source.epochs_per_pass;
        for (std::uint64_t cycle = 0; cycle < 3; ++cycle) {
          std::multiset<SampleId> seen;
          for (std::uint64_t k = 0; k < k_epochs; ++k) {
            const auto epoch = cycle * k_epochs + k;
            const auto chunk = of_source(ids_of(sources, seed, epoch, shuffle), source);
            // floor((k + 1) n / K) - floor(k n / K) records, none twice in the epoch.
            CHECK(chunk.size() ==
                  (k + 1) * source.record_count / k_epochs - k * source.record_count / k_epochs);
            CHECK(std::set<SampleId>(chunk.begin(), chunk.end()).size() == chunk.size());
            seen.insert(chunk.begin(), chunk.end());
          }
          // Disjoint chunks covering the source: every id once.
          CHECK(seen.size() == source.record_count);
          CHECK(std::set<SampleId>(seen.begin(), seen.end()).size() == source.record_count);
          CHECK(*seen.begin() == source.first_id);
          CHECK(*seen.rbegin() == source.first_id + source.record_count - 1);
        }
      }
    }
  }
}

TEST_CASE("the selection's size is the sum of its chunks, a source read every epoch is whole") {
  const std::vector<MixedSource> sources{{0, 37, 1}, {37, 100, 3}, {137, 2, 5}};
  for (std::uint64_t epoch = 0; epoch < 10; ++epoch) {
    CAPTURE(epoch);
    const EpochSelection selection(sources, 4, epoch, true);
    const std::uint64_t k3 = epoch % 3, k5 = epoch % 5;
    CHECK(selection.size() ==
          37 + ((k3 + 1) * 100 / 3 - k3 * 100 / 3) + ((k5 + 1) * 2 / 5 - k5 * 2 / 5));
    const auto ids = ids_of(selection);
    // The first source whole and in file order, then the others' chunks in source order.
    for (SampleId id = 0; id < 37; ++id) CHECK(ids[id] == id);
    for (std::size_t i = 37; i < ids.size(); ++i) CHECK(ids[i] >= 37);
    for (std::size_t i = 38; i < ids.size(); ++i)
      if (ids[i - 1] >= 137) CHECK(ids[i] >= 137);
    CHECK_THROWS_AS(selection[selection.size()], std::out_of_range);
  }
}

TEST_CASE("selections are a function of (sources, seed, epoch), cycles and seeds permute anew") {
  const std::vector<MixedSource> sources{{0, 20, 1}, {20, 300, 3}};
  CHECK(ids_of(sources, 5, 4) == ids_of(sources, 5, 4));
  // Epoch 1 and epoch 4 are chunk 1 of cycles 0 and 1: other records.
  CHECK(ids_of(sources, 5, 1) != ids_of(sources, 5, 4));
  CHECK(ids_of(sources, 5, 1) != ids_of(sources, 6, 1));
  // Without shuffling chunk k is the k-th contiguous slice of the source, every cycle.
  const auto plain = ids_of(sources, 5, 4, false);
  REQUIRE(plain.size() == 120);
  for (std::size_t i = 20; i < plain.size(); ++i) CHECK(plain[i] == 20 + 100 + (i - 20));
  CHECK(plain == ids_of(sources, 6, 1, false));
}

TEST_CASE("a source read once every 0 epochs is refused, an empty chunk is left out") {
  const std::vector<MixedSource> zero{{0, 10, 0}};
  CHECK_THROWS_AS(EpochSelection(zero, 0, 0, true), std::invalid_argument);
  const std::vector<MixedSource> small{{0, 3, 1}, {3, 2, 4}};
  // Two records over four epochs: chunks of 0, 1, 0, 1 records.
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t epoch = 0; epoch < 4; ++epoch)
    sizes.push_back(EpochSelection(small, 1, epoch, true).size());
  CHECK(sizes == std::vector<std::uint64_t>{3, 4, 3, 4});
}

}  // namespace odbatch
