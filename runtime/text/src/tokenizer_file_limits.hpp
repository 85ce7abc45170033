#pragma once
// Bounds on what a tokenizer file (tokenizer.json, a tiktoken ranks file) may ask of the loader.
// These files come from model repositories; each bound keeps a hostile one to a named error instead
// of gigabytes or minutes, and lies far beyond every real model's file (docs/text-tokenizers.md).
#include <cstddef>
#include <cstdint>

namespace odbatch::text_detail {

// Arrays and objects within each other in a tokenizer.json. Real files nest about 8 deep (a
// TemplateProcessing inside a post-processor Sequence); the loader's work and its error paths
// grow with the depth, so a file nested thousands deep would cost memory quadratic in it.
inline constexpr std::size_t kMaxTokenizerJsonDepth = 64;

// Normalizers, and pre-tokenizers, in a tokenizer.json, Sequences flattened. Real files have a
// handful; each costs every encoding a pass over the text, and a Split a compiled regex.
inline constexpr std::size_t kMaxComponentSteps = 64;

// Token ids index tables of the loader (a string per id), so an id must be near the number of
// entries: below 2 x entries + kTokenIdSlack. Real vocabularies are dense (ids 0 to entries-1);
// the slack admits gaps, and the tables stay within about twice what the entries need.
inline constexpr std::uint64_t kTokenIdSlack = 65536;
constexpr std::uint64_t token_id_bound(std::uint64_t entries) {
  return 2 * entries + kTokenIdSlack;
}

// Entries of a vocabulary (model.vocab, a ranks file), of model.merges and of added_tokens. The
// largest real vocabularies have about 262,000 entries, and no model adds more than some
// thousands of tokens.
inline constexpr std::size_t kMaxVocabularyEntries = std::size_t{1} << 22;
inline constexpr std::size_t kMaxMerges = std::size_t{1} << 22;
inline constexpr std::size_t kMaxAddedTokens = std::size_t{1} << 20;

}  // namespace odbatch::text_detail
