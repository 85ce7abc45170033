#pragma once
// A bounded cache of words' token ids for the BPE tokenizers: natural text repeats its words, and
// a hit skips the merge loop. Shared by the threads that encode with one tokenizer: sharded
// mutexes keep contention low, and a full shard is emptied (a bound, not an eviction policy).
#include <array>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "odbatch/text/text_tokenizer.hpp"

namespace odbatch::text_detail {

class WordCache {
 public:
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kWordsPerShard = 4096;
  static constexpr std::size_t kMaxWordBytes = 64;  // longer words are rare and not kept

  // Appends the ids of `word`: cached ones, or those `encode(word, ids)` appends (then cached).
  template <class Encode>
  void encode(std::string_view word, std::vector<TokenId>& ids, const Encode& encode) const {
    if (word.size() > kMaxWordBytes) {
      encode(word, ids);
      return;
    }
    const std::size_t hash = std::hash<std::string_view>{}(word);
    Shard& shard = shards_[hash % kShards];
    {
      std::lock_guard lock(shard.mutex);
      if (const auto found = shard.words.find(word); found != shard.words.end()) {
        ids.insert(ids.end(), found->second.begin(), found->second.end());
        return;
      }
    }
    const std::size_t first = ids.size();
    encode(word, ids);
    std::vector<TokenId> word_ids(ids.begin() + static_cast<std::ptrdiff_t>(first), ids.end());
    std::lock_guard lock(shard.mutex);
    if (shard.words.size() >= kWordsPerShard) shard.words.clear();
    shard.words.emplace(std::string(word), std::move(word_ids));
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<TokenId>, Hash, std::equal_to<>> words;
  };
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace odbatch::text_detail
