#include "odbatch/text/tiktoken_tokenizer.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bpe_merge.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "split_regex.hpp"
#include "tokenizer_file_limits.hpp"
#include "utf8_text.hpp"
#include "word_cache.hpp"

namespace odbatch {
namespace {

using text_detail::MatchSpan;
using text_detail::PairMerge;

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const {
    return std::hash<std::string_view>{}(text);
  }
};

// RFC 4648 base64 with padding, as tiktoken writes its ranks; nullopt when malformed.
std::optional<std::string> decode_base64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string bytes;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int padding = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (padding == 1 && text[i + 2] == '=') return std::nullopt;
    std::uint32_t group = 0;
    for (int k = 0; k < 4; ++k) {
      const int digit = k >= 4 - padding ? 0 : value(text[i + static_cast<std::size_t>(k)]);
      if (digit < 0) return std::nullopt;
      group = group << 6 | static_cast<std::uint32_t>(digit);
    }
    bytes += static_cast<char>(group >> 16);
    if (padding < 2) bytes += static_cast<char>(group >> 8 & 0xFF);
    if (padding < 1) bytes += static_cast<char>(group & 0xFF);
  }
  return bytes;
}

class TiktokenTokenizer final : public TextTokenizer {
 public:
  TiktokenTokenizer(std::string_view text, const std::filesystem::path& ranks_file,
                    TiktokenOptions options);

  void encode_tokens(std::string_view text, const TextEncodeOptions& options,
                     std::vector<TokenId>& ids, std::vector<TokenOffsets>* offsets) const override;
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens) const override;
  std::optional<TokenId> token_to_id(std::string_view token) const override;
  std::optional<std::string> id_to_token(TokenId id) const override;
  std::uint32_t vocab_size() const override { return vocab_size_; }
  std::span<const TokenId> special_token_ids() const override { return special_ids_; }

 private:
  // Encodes text[begin, end).
  void encode_ordinary(std::string_view text, std::size_t begin, std::size_t end,
                       std::vector<TokenId>& ids, std::vector<TokenOffsets>* offsets) const;
  // The leftmost-longest special token at or after `from`: (position, index in specials_).
  std::optional<std::pair<std::size_t, std::size_t>> find_special(std::string_view text,
                                                                  std::size_t from) const;

  std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>> rank_of_bytes_;
  std::vector<std::optional<std::string>> bytes_of_id_;
  std::array<TokenId, 256> byte_ids_{};
  text_detail::SplitRegex split_;
  std::vector<std::pair<std::string, TokenId>> specials_;  // longest first
  std::bitset<256> special_first_bytes_;
  std::vector<TokenId> special_ids_;
  std::uint32_t vocab_size_ = 0;
  text_detail::WordCache cache_;
};

text_detail::SplitRegex compile_pattern(const std::filesystem::path& ranks_file,
                                        const std::string& pattern) {
  try {
    return text_detail::SplitRegex(pattern);
  } catch (const std::invalid_argument& error) {
    throw TokenizerModelError(ranks_file, std::string("pattern: ") + error.what());
  }
}

TiktokenTokenizer::TiktokenTokenizer(std::string_view text, const std::filesystem::path& ranks_file,
                                     TiktokenOptions options)
    : split_(compile_pattern(ranks_file, options.pattern)) {
  // Ranks index bytes_of_id_, so each must be near the number of lines (an upper bound on the
  // entries, known before any is read).
  const auto lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n') +
                                                (!text.empty() && text.back() != '\n'));
  if (lines > text_detail::kMaxVocabularyEntries)
    throw TokenizerModelError(ranks_file, "has " + std::to_string(lines) +
                                              " lines, more than the limit of " +
                                              std::to_string(text_detail::kMaxVocabularyEntries));
  const std::uint64_t rank_bound = text_detail::token_id_bound(lines);
  std::size_t line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line.empty()) continue;
    const auto problem = [&](const std::string& what) {
      return TokenizerModelError(ranks_file, "line " + std::to_string(line_number) + ": " + what);
    };
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) throw problem("must be '<base64 token> <rank>'");
    const std::optional<std::string> bytes = decode_base64(line.substr(0, space));
    if (!bytes || bytes->empty()) throw problem("the token is not valid base64");
    const std::string_view rank_text = line.substr(space + 1);
    TokenId rank = 0;
    if (rank_text.empty() || rank_text.size() > 9 ||
        !std::all_of(rank_text.begin(), rank_text.end(),
                     [](char c) { return c >= '0' && c <= '9'; }))
      throw problem("the rank must be a decimal number below 10^9");
    for (const char digit : rank_text) rank = rank * 10 + static_cast<TokenId>(digit - '0');
    if (rank >= rank_bound)
      throw problem("rank " + std::to_string(rank) + " is far beyond the file's " +
                    std::to_string(lines) + " lines (ranks must be below 2 x lines + " +
                    std::to_string(text_detail::kTokenIdSlack) + " = " +
                    std::to_string(rank_bound) + ")");
    if (rank >= bytes_of_id_.size()) bytes_of_id_.resize(std::size_t{rank} + 1);
    if (bytes_of_id_[rank]) throw problem("rank " + std::to_string(rank) + " is used twice");
    if (!rank_of_bytes_.emplace(*bytes, rank).second) throw problem("the token is listed twice");
    bytes_of_id_[rank] = *bytes;
  }
  for (int byte = 0; byte < 256; ++byte) {
    const auto found = rank_of_bytes_.find(std::string(1, static_cast<char>(byte)));
    if (found == rank_of_bytes_.end())
      throw TokenizerModelError(ranks_file, "has no rank for the single byte " +
                                                std::to_string(byte) + " (all 256 are needed)");
    byte_ids_[byte] = found->second;
  }
  for (auto& [name, id] : options.special_tokens) {
    const std::string& token = name;  // a structured binding is not captured before C++20
    const auto problem = [&](const std::string& what) {
      return TokenizerModelError(ranks_file, "special_tokens: '" + token + "': " + what);
    };
    if (name.empty() || text_detail::first_invalid_utf8(name) != std::string::npos)
      throw problem("must be non-empty UTF-8");
    if (id < bytes_of_id_.size() && bytes_of_id_[id])
      throw problem("id " + std::to_string(id) + " is a rank of the file");
    if (std::find(special_ids_.begin(), special_ids_.end(), id) != special_ids_.end())
      throw problem("id " + std::to_string(id) + " is given twice");
    special_ids_.push_back(id);
    special_first_bytes_.set(static_cast<unsigned char>(name[0]));
    specials_.emplace_back(std::move(name), id);
  }
  std::stable_sort(specials_.begin(), specials_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::sort(special_ids_.begin(), special_ids_.end());
  vocab_size_ = static_cast<std::uint32_t>(bytes_of_id_.size());
  if (!special_ids_.empty()) vocab_size_ = std::max(vocab_size_, special_ids_.back() + 1);
}

std::optional<std::pair<std::size_t, std::size_t>> TiktokenTokenizer::find_special(
    std::string_view text, std::size_t from) const {
  for (std::size_t position = from; position < text.size(); ++position) {
    if (!special_first_bytes_.test(static_cast<unsigned char>(text[position]))) continue;
    for (std::size_t i = 0; i < specials_.size(); ++i)
      if (text.substr(position).starts_with(specials_[i].first)) return std::pair{position, i};
  }
  return std::nullopt;
}

void TiktokenTokenizer::encode_ordinary(std::string_view text, std::size_t begin, std::size_t end,
                                        std::vector<TokenId>& ids,
                                        std::vector<TokenOffsets>* offsets) const {
  thread_local std::vector<MatchSpan> matches;
  matches.clear();
  const std::string_view part = text.substr(begin, end - begin);
  split_.find_all(part, matches);
  // Only the matches are encoded, as tiktoken does; the presets match every character.
  for (const MatchSpan& match : matches) {
    const std::string_view piece = part.substr(match.begin, match.end - match.begin);
    if (piece.empty()) continue;
    const std::size_t first = ids.size();
    if (const auto whole = rank_of_bytes_.find(piece); whole != rank_of_bytes_.end()) {
      ids.push_back(whole->second);
    } else {
      cache_.encode(piece, ids, [this](std::string_view word, std::vector<TokenId>& out) {
        text_detail::merge_byte_pairs(
            word, byte_ids_.data(),
            [&](TokenId, TokenId, std::uint32_t pair_begin, std::uint32_t,
                std::uint32_t pair_end) -> std::optional<PairMerge> {
              const auto found =
                  rank_of_bytes_.find(word.substr(pair_begin, pair_end - pair_begin));
              if (found == rank_of_bytes_.end()) return std::nullopt;
              return PairMerge{found->second, found->second};
            },
            out);
      });
    }
    if (offsets == nullptr) continue;
    // The piece's tokens spell its bytes in order.
    auto position = static_cast<std::uint32_t>(begin + match.begin);
    for (std::size_t i = first; i < ids.size(); ++i) {
      const auto length = static_cast<std::uint32_t>(bytes_of_id_[ids[i]]->size());
      offsets->push_back({position, position + length});
      position += length;
    }
  }
}

void TiktokenTokenizer::encode_tokens(std::string_view text, const TextEncodeOptions& options,
                                      std::vector<TokenId>& ids,
                                      std::vector<TokenOffsets>* offsets) const {
  if (const std::size_t bad = text_detail::first_invalid_utf8(text); bad != std::string::npos)
    throw std::invalid_argument("text is not valid UTF-8 at byte " + std::to_string(bad));
  std::size_t done = 0;
  if (options.recognize_special_tokens && !specials_.empty()) {
    while (const auto special = find_special(text, done)) {
      const auto& [position, index] = *special;
      encode_ordinary(text, done, position, ids, offsets);
      ids.push_back(specials_[index].second);
      done = position + specials_[index].first.size();
      if (offsets != nullptr)
        offsets->push_back(
            {static_cast<std::uint32_t>(position), static_cast<std::uint32_t>(done)});
    }
  }
  encode_ordinary(text, done, text.size(), ids, offsets);
}

std::string TiktokenTokenizer::decode(std::span<const TokenId> ids,
                                      bool skip_special_tokens) const {
  std::string bytes;
  for (const TokenId id : ids) {
    if (id < bytes_of_id_.size() && bytes_of_id_[id]) {
      bytes += *bytes_of_id_[id];
      continue;
    }
    const auto special = std::find_if(specials_.begin(), specials_.end(),
                                      [&](const auto& entry) { return entry.second == id; });
    if (special == specials_.end())
      throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary");
    if (!skip_special_tokens) bytes += special->first;
  }
  std::string text;
  text_detail::append_utf8_lossy(bytes, text);
  return text;
}

std::optional<TokenId> TiktokenTokenizer::token_to_id(std::string_view token) const {
  for (const auto& [name, id] : specials_)
    if (name == token) return id;
  const auto found = rank_of_bytes_.find(token);
  if (found == rank_of_bytes_.end()) return std::nullopt;
  return found->second;
}

std::optional<std::string> TiktokenTokenizer::id_to_token(TokenId id) const {
  if (id < bytes_of_id_.size() && bytes_of_id_[id]) return *bytes_of_id_[id];
  for (const auto& [name, special_id] : specials_)
    if (special_id == id) return name;
  return std::nullopt;
}

}  // namespace

std::string_view tiktoken_pattern_preset(std::string_view name) {
  // Llama-3's original tokenizer.model splits with cl100k_base's pattern.
  if (name == "cl100k_base" || name == "llama3") return kCl100kBasePattern;
  if (name == "o200k_base") return kO200kBasePattern;
  throw ConfigError("pattern", "unknown preset '" + std::string(name) +
                                   "' (known: cl100k_base, o200k_base, llama3)");
}

std::unique_ptr<TextTokenizer> parse_tiktoken(std::string_view text,
                                              const std::filesystem::path& origin,
                                              TiktokenOptions options) {
  return std::make_unique<TiktokenTokenizer>(text, origin, std::move(options));
}

std::unique_ptr<TextTokenizer> load_tiktoken(const std::filesystem::path& ranks_file,
                                             TiktokenOptions options) {
  return parse_tiktoken(read_tokenizer_model_file(ranks_file), ranks_file, std::move(options));
}

}  // namespace odbatch
