#include "odbatch/text/hf_tokenizer.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "added_token_matcher.hpp"
#include "bpe_merge.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "split_regex.hpp"
#include "tokenizer_file_limits.hpp"
#include "utf8_text.hpp"
#include "word_cache.hpp"

namespace odbatch {
namespace {

using json = nlohmann::json;
using text_detail::AddedToken;
using text_detail::AddedTokenMatcher;
using text_detail::MatchSpan;
using text_detail::PairMerge;
using text_detail::SplitRegex;
using text_detail::TextSplit;

// A problem at a JSON path of the file; the loader adds the file's name.
struct JsonPathError {
  std::string path;
  std::string problem;
};

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw JsonPathError{path, problem};
}

std::string member_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string index_path(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

const json* find_member(const json& object, std::string_view key) {
  const auto found = object.find(key);
  return found == object.end() || found->is_null() ? nullptr : &*found;
}

const json& require_member(const json& object, std::string_view key, const std::string& path) {
  const json* value = find_member(object, key);
  if (value == nullptr) fail(member_path(path, key), "missing");
  return *value;
}

void require_object(const json& value, const std::string& path) {
  if (!value.is_object()) fail(path, "must be an object");
}

bool bool_member(const json& object, std::string_view key, bool fallback, const std::string& path) {
  const json* value = find_member(object, key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) fail(member_path(path, key), "must be true or false");
  return value->get<bool>();
}

std::string string_member(const json& object, std::string_view key, const std::string& path) {
  const json& value = require_member(object, key, path);
  if (!value.is_string()) fail(member_path(path, key), "must be a string");
  return value.get<std::string>();
}

TokenId id_value(const json& value, const std::string& path) {
  if (!value.is_number_unsigned() ||
      value.get<std::uint64_t>() >= std::numeric_limits<TokenId>::max())
    fail(path, "must be a token id (an integer from 0 to 2^32-2)");
  return value.get<TokenId>();
}

std::string type_of(const json& component, const std::string& path) {
  require_object(component, path);
  return string_member(component, "type", path);
}

// Whether the JSON text nests arrays and objects more than `limit` deep; brackets inside strings
// do not count. Checked before parsing, which would otherwise build the whole tree first.
bool nests_deeper_than(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

[[noreturn]] void unsupported_type(const std::string& path, const std::string& type) {
  fail(member_path(path, "type"), "'" + type + "' is not supported");
}

// GPT-2's byte-to-symbol table: printable Latin-1 bytes stand for themselves, the other bytes
// for U+0100 onwards, in byte order.
struct ByteLevelAlphabet {
  std::array<std::string, 256> symbol;  // UTF-8 of each byte's symbol
  std::array<std::int16_t, 324> byte_of_code_point;

  ByteLevelAlphabet() {
    byte_of_code_point.fill(-1);
    int next = 256;
    for (int byte = 0; byte < 256; ++byte) {
      const bool printable =
          (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
      const int code_point = printable ? byte : next++;
      byte_of_code_point[code_point] = static_cast<std::int16_t>(byte);
      std::uint8_t utf8[4];
      const auto length = utf8proc_encode_char(code_point, utf8);
      symbol[byte].assign(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length));
    }
  }

  // The bytes a string of symbols stands for, or nullopt when a character is not a symbol.
  std::optional<std::string> bytes_of(std::string_view symbols) const {
    std::string bytes;
    const auto* data = reinterpret_cast<const utf8proc_uint8_t*>(symbols.data());
    for (std::size_t i = 0; i < symbols.size();) {
      utf8proc_int32_t code_point = 0;
      const auto length = utf8proc_iterate(
          data + i, static_cast<utf8proc_ssize_t>(symbols.size() - i), &code_point);
      if (length <= 0 || code_point < 0 ||
          static_cast<std::size_t>(code_point) >= byte_of_code_point.size() ||
          byte_of_code_point[static_cast<std::size_t>(code_point)] < 0)
        return std::nullopt;
      bytes += static_cast<char>(byte_of_code_point[static_cast<std::size_t>(code_point)]);
      i += static_cast<std::size_t>(length);
    }
    return bytes;
  }
};

const ByteLevelAlphabet& byte_level_alphabet() {
  static const ByteLevelAlphabet alphabet;
  return alphabet;
}

// GPT-2's split pattern, which ByteLevel applies when use_regex is true.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Unicode normal forms through utf8proc; each is the identity on ASCII text.
class Normalizer {
 public:
  void add(utf8proc_option_t form) { forms_.push_back(form); }
  bool empty() const { return forms_.empty(); }
  std::size_t size() const { return forms_.size(); }

  // `text` normalized; `storage` holds the result when it differs from the input.
  std::string_view apply(std::string_view text, std::string& storage) const {
    if (forms_.empty() || is_ascii(text)) return text;
    storage.assign(text);
    for (const utf8proc_option_t form : forms_) {
      utf8proc_uint8_t* result = nullptr;
      const utf8proc_ssize_t length =
          utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(storage.data()),
                       static_cast<utf8proc_ssize_t>(storage.size()), &result,
                       static_cast<utf8proc_option_t>(form | UTF8PROC_STABLE));
      if (length < 0)
        throw std::invalid_argument(std::string("normalization failed: ") +
                                    utf8proc_errmsg(length));
      storage.assign(reinterpret_cast<const char*>(result), static_cast<std::size_t>(length));
      std::free(result);
    }
    return storage;
  }

 private:
  std::vector<utf8proc_option_t> forms_;
};

// Maps ranges of a normalized text back to the text it came from. The normal forms (NFC, NFD,
// NFKC, NFKD) of a text are the concatenation of those of its chunks that each begin at an ASCII
// character, since ASCII characters are starters that nothing composes with or reorders across.
// So each chunk is normalized alone: a range within an unchanged chunk maps back exactly, and
// one touching a changed chunk takes that chunk's whole original range.
class NormalizationMap {
 public:
  // `normalized` is the normal form of `original`, which begins at `base` in the encoded text.
  NormalizationMap(const Normalizer& normalizer, std::string_view original,
                   std::string_view normalized, std::size_t base)
      : end_(base + original.size()) {
    std::string storage;
    std::size_t normalized_at = 0;
    for (std::size_t begin = 0; begin < original.size();) {
      std::size_t end = begin + 1;
      while (end < original.size() && static_cast<unsigned char>(original[end]) >= 0x80) ++end;
      const std::string_view chunk = original.substr(begin, end - begin);
      const std::string_view chunk_normalized = normalizer.apply(chunk, storage);
      if (normalized.substr(normalized_at, chunk_normalized.size()) != chunk_normalized) {
        // Not the concatenation after all: the whole text is one changed chunk.
        chunks_.assign(1, Chunk{0, base, end_, true});
        return;
      }
      const bool changed = chunk_normalized != chunk;
      if (!changed && !chunks_.empty() && !chunks_.back().changed)
        chunks_.back().original_end = base + end;
      else
        chunks_.push_back({normalized_at, base + begin, base + end, changed});
      normalized_at += chunk_normalized.size();
      begin = end;
    }
    if (normalized_at != normalized.size()) chunks_.assign(1, Chunk{0, base, end_, true});
  }

  // Turns ranges in the normalized text into ranges in the encoded text. An empty range (a
  // token of no byte of the text: the space add_prefix_space inserts) stays empty unless it lies
  // inside a changed chunk, whose whole range it then takes, as it cannot be placed more finely.
  void map_back(std::span<TokenOffsets> offsets) const {
    for (TokenOffsets& range : offsets) {
      const std::size_t begin = original_begin(range.begin);
      std::size_t end = begin;
      if (range.end != range.begin) {
        end = original_end(range.end);
      } else if (!chunks_.empty()) {
        const Chunk& chunk = chunk_at(range.begin);
        if (chunk.changed && range.begin > chunk.normalized_begin) end = chunk.original_end;
      }
      range = {static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)};
    }
  }

 private:
  struct Chunk {
    std::size_t normalized_begin;
    std::size_t original_begin;
    std::size_t original_end;
    bool changed;
  };

  // The chunk that holds the normalized text's byte `at`.
  const Chunk& chunk_at(std::size_t at) const {
    const auto after = std::upper_bound(
        chunks_.begin(), chunks_.end(), at,
        [](std::size_t position, const Chunk& chunk) { return position < chunk.normalized_begin; });
    return *(after - 1);
  }
  std::size_t original_begin(std::size_t at) const {
    if (chunks_.empty()) return end_;
    const Chunk& chunk = chunk_at(at);
    if (chunk.changed) return chunk.original_begin;
    return std::min(chunk.original_begin + (at - chunk.normalized_begin), end_);
  }
  std::size_t original_end(std::size_t at) const {
    const Chunk& chunk = chunk_at(at - 1);
    if (chunk.changed) return chunk.original_end;
    return chunk.original_begin + (at - chunk.normalized_begin);
  }

  std::vector<Chunk> chunks_;
  std::size_t end_;
};

// Each normalizer and pre-tokenizer costs every encoding a pass over the text (and a Split a
// compiled regex), so their number is bounded, Sequences flattened.
void check_step_count(std::size_t steps, const std::string& path, std::string_view kind) {
  if (steps == text_detail::kMaxComponentSteps)
    fail(path, "is beyond the limit of " + std::to_string(text_detail::kMaxComponentSteps) + " " +
                   std::string(kind) + " (Sequences flattened)");
}

void parse_normalizer(const json& node, const std::string& path, Normalizer& normalizer) {
  const std::string type = type_of(node, path);
  if (type != "Sequence") check_step_count(normalizer.size(), path, "normalizers");
  if (type == "NFC") {
    normalizer.add(UTF8PROC_COMPOSE);
  } else if (type == "NFD") {
    normalizer.add(UTF8PROC_DECOMPOSE);
  } else if (type == "NFKC") {
    normalizer.add(static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  } else if (type == "NFKD") {
    normalizer.add(static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT));
  } else if (type == "Sequence") {
    const std::string list_path = member_path(path, "normalizers");
    const json& list = require_member(node, "normalizers", path);
    if (!list.is_array()) fail(list_path, "must be an array");
    for (std::size_t i = 0; i < list.size(); ++i)
      parse_normalizer(list[i], index_path(list_path, i), normalizer);
  } else {
    unsupported_type(path, type);
  }
}

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

struct SplitStep {
  std::optional<SplitRegex> regex;  // a Regex pattern, or
  std::string literal;              // a String pattern
  SplitBehavior behavior = SplitBehavior::isolated;
  bool invert = false;
};

// ByteLevel's own part of pre-tokenization; the byte-to-symbol mapping itself is implicit, as the
// model works on bytes.
struct ByteLevelStep {
  bool add_prefix_space = false;
  std::optional<SplitRegex> gpt2_split;
};

using PreTokenizerStep = std::variant<SplitStep, ByteLevelStep>;

SplitBehavior parse_behavior(const json& node, const std::string& path) {
  const std::string value = string_member(node, "behavior", path);
  if (value == "Removed") return SplitBehavior::removed;
  if (value == "Isolated") return SplitBehavior::isolated;
  if (value == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (value == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (value == "Contiguous") return SplitBehavior::contiguous;
  fail(member_path(path, "behavior"), "'" + value + "' is not supported");
}

SplitRegex compile_regex(std::string_view pattern, const std::string& path) {
  try {
    return SplitRegex(pattern);
  } catch (const std::invalid_argument& error) {
    fail(path, error.what());
  }
}

void parse_pre_tokenizer(const json& node, const std::string& path,
                         std::vector<PreTokenizerStep>& steps) {
  const std::string type = type_of(node, path);
  if (!steps.empty() && std::holds_alternative<ByteLevelStep>(steps.back()))
    fail(path, "a pre-tokenizer after ByteLevel is not supported (it would see byte symbols)");
  if (type != "Sequence") check_step_count(steps.size(), path, "pre-tokenizers");
  if (type == "Sequence") {
    const std::string list_path = member_path(path, "pretokenizers");
    const json& list = require_member(node, "pretokenizers", path);
    if (!list.is_array()) fail(list_path, "must be an array");
    for (std::size_t i = 0; i < list.size(); ++i)
      parse_pre_tokenizer(list[i], index_path(list_path, i), steps);
  } else if (type == "Split") {
    SplitStep step;
    const std::string pattern_path = member_path(path, "pattern");
    const json& pattern = require_member(node, "pattern", path);
    require_object(pattern, pattern_path);
    if (const json* regex = find_member(pattern, "Regex")) {
      if (!regex->is_string()) fail(member_path(pattern_path, "Regex"), "must be a string");
      step.regex = compile_regex(regex->get<std::string>(), member_path(pattern_path, "Regex"));
    } else if (const json* literal = find_member(pattern, "String")) {
      if (!literal->is_string() || literal->get<std::string>().empty())
        fail(member_path(pattern_path, "String"), "must be a non-empty string");
      step.literal = literal->get<std::string>();
    } else {
      fail(pattern_path, "must hold Regex or String");
    }
    step.behavior = parse_behavior(node, path);
    step.invert = bool_member(node, "invert", false, path);
    steps.emplace_back(std::move(step));
  } else if (type == "ByteLevel") {
    ByteLevelStep step;
    step.add_prefix_space = bool_member(node, "add_prefix_space", true, path);
    // trim_offsets changes offsets only, never ids.
    bool_member(node, "trim_offsets", true, path);
    if (bool_member(node, "use_regex", true, path))
      step.gpt2_split = compile_regex(kGpt2Pattern, member_path(path, "use_regex"));
    steps.emplace_back(std::move(step));
  } else {
    unsupported_type(path, type);
  }
}

// A part of the pre-tokenized text. `origin` is where its first byte lies in the text that
// pre-tokenization began with, unless `prefixed`: then its first byte is the space that
// ByteLevel's add_prefix_space inserted at `origin`, and the second byte lies there.
struct Piece {
  std::string_view text;
  std::size_t origin = 0;
  bool prefixed = false;

  // Where text[at] (or the end, at == text.size()) lies in the original text.
  std::size_t origin_of(std::size_t at) const { return origin + at - (prefixed && at > 0 ? 1 : 0); }
};

// Pre-tokenization works on plain views when no offsets are wanted (encode_into's speed), and on
// Pieces otherwise; these overloads are what differs.
std::string_view text_of(std::string_view piece) {
  return piece;
}
std::string_view text_of(const Piece& piece) {
  return piece.text;
}
std::string_view part_of(std::string_view piece, std::size_t begin, std::size_t end) {
  return piece.substr(begin, end - begin);
}
Piece part_of(const Piece& piece, std::size_t begin, std::size_t end) {
  if (piece.prefixed && begin == 0) return {piece.text.substr(0, end), piece.origin, true};
  return {piece.text.substr(begin, end - begin), piece.origin + begin - (piece.prefixed ? 1 : 0),
          false};
}
// `piece` as its copy `spaced`, which has a space before it.
std::string_view prefixed_with_space(std::string_view, std::string_view spaced) {
  return spaced;
}
Piece prefixed_with_space(const Piece& piece, std::string_view spaced) {
  return {spaced, piece.origin, true};
}

// The split of `piece` at a regex's matches (or a literal's occurrences) under a behaviour, as
// Hugging Face's Split pre-tokenizer cuts it; empty parts are dropped.
template <class PieceType>
void split_piece(const SplitStep& step, const PieceType& piece, std::vector<PieceType>& out) {
  const std::string_view text = text_of(piece);
  thread_local std::vector<MatchSpan> matches;
  matches.clear();
  if (step.regex) {
    step.regex->find_all(text, matches);
  } else {
    for (std::size_t at = text.find(step.literal); at != std::string_view::npos;
         at = text.find(step.literal, at + step.literal.size()))
      matches.push_back({at, at + step.literal.size()});
  }
  struct Part {
    std::size_t begin, end;
    bool is_match;
  };
  thread_local std::vector<Part> parts;
  parts.clear();
  std::size_t previous = 0;
  for (const MatchSpan& match : matches) {
    if (previous != match.begin) parts.push_back({previous, match.begin, step.invert});
    parts.push_back({match.begin, match.end, !step.invert});
    previous = match.end;
  }
  if (previous != text.size()) parts.push_back({previous, text.size(), step.invert});

  thread_local std::vector<Part> merged;
  merged.clear();
  bool previous_match = false;
  switch (step.behavior) {
    case SplitBehavior::removed:
      for (const Part& part : parts)
        if (!part.is_match) merged.push_back(part);
      break;
    case SplitBehavior::isolated:
      merged = parts;
      break;
    case SplitBehavior::merged_with_previous:
      for (const Part& part : parts) {
        if (part.is_match && !previous_match && !merged.empty())
          merged.back().end = part.end;
        else
          merged.push_back(part);
        previous_match = part.is_match;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
        if (part->is_match && !previous_match && !merged.empty())
          merged.back().begin = part->begin;
        else
          merged.push_back(*part);
        previous_match = part->is_match;
      }
      std::reverse(merged.begin(), merged.end());
      break;
    case SplitBehavior::contiguous:
      for (const Part& part : parts) {
        if (part.is_match == previous_match && !merged.empty())
          merged.back().end = part.end;
        else
          merged.push_back(part);
        previous_match = part.is_match;
      }
      break;
  }
  for (const Part& part : merged)
    if (part.end > part.begin) out.push_back(part_of(piece, part.begin, part.end));
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const {
    return std::hash<std::string_view>{}(text);
  }
};
using StringIdMap = std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>>;

struct PairKeyHash {
  std::size_t operator()(std::uint64_t key) const { return key * 0x9E3779B97F4A7C15ull >> 20; }
};

class HfBpeTokenizer final : public TextTokenizer {
 public:
  explicit HfBpeTokenizer(const json& root);

  void encode_tokens(std::string_view text, const TextEncodeOptions& options,
                     std::vector<TokenId>& ids, std::vector<TokenOffsets>* offsets) const override;
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens) const override;
  std::optional<TokenId> token_to_id(std::string_view token) const override;
  std::optional<std::string> id_to_token(TokenId id) const override;
  std::uint32_t vocab_size() const override { return vocab_size_; }
  std::span<const TokenId> special_token_ids() const override { return special_ids_; }

 private:
  void parse_model(const json& model);
  void parse_added_tokens(const json& list);
  void parse_post_processor(const json& node, const std::string& path);
  void parse_decoder(const json& node, const std::string& path);
  // Appends the model's ids of `text`, and unless `offsets` is null their ranges in `text`
  // shifted by `base`.
  void encode_text(std::string_view text, std::size_t base, std::vector<TokenId>& ids,
                   std::vector<TokenOffsets>* offsets) const;
  // Splits `text` into the pieces the model encodes one by one; `prefixed` keeps the pieces
  // that ByteLevel's add_prefix_space lengthened.
  template <class PieceType>
  void pre_tokenize(std::string_view text, std::deque<std::string>& prefixed,
                    std::vector<PieceType>& pieces) const;
  // pre_tokenize's Pieces, and their texts in `words`. Kept out of line, so that encode_text
  // stays small enough for the compiler to inline the word cache into it.
  [[gnu::noinline]] void pre_tokenize_with_origins(std::string_view text,
                                                   std::deque<std::string>& prefixed,
                                                   std::vector<Piece>& pieces,
                                                   std::vector<std::string_view>& words) const;
  void encode_word(std::string_view word, std::vector<TokenId>& ids) const;
  void merge_word(std::string_view word, std::vector<TokenId>& ids) const;

  Normalizer normalizer_;
  std::vector<PreTokenizerStep> pre_tokenizer_;
  // The model: pieces as the vocabulary spells them, by id (empty where no piece has the id).
  std::vector<std::string> pieces_;
  StringIdMap id_of_piece_;
  StringIdMap id_of_bytes_;  // ignore_merges' whole-word lookup
  std::array<TokenId, 256> byte_ids_{};
  std::unordered_map<std::uint64_t, PairMerge, PairKeyHash> merges_;
  bool ignore_merges_ = false;
  // Added tokens, matched before normalization (normalized=false) or after it.
  std::deque<AddedToken> added_tokens_;
  std::unordered_map<TokenId, const AddedToken*> added_by_id_;
  std::unordered_map<std::string_view, const AddedToken*> added_by_content_;
  std::optional<TokenId> largest_added_;
  AddedTokenMatcher raw_matcher_{{}};
  AddedTokenMatcher normalized_matcher_{{}};
  // The post-processor, reduced to the ids around a single sequence.
  std::vector<TokenId> prefix_ids_;
  std::vector<TokenId> suffix_ids_;
  // What decoding turns each id into.
  std::vector<std::string> decoded_bytes_;
  std::vector<TokenId> special_ids_;
  std::uint32_t vocab_size_ = 0;
  text_detail::WordCache cache_;
};

HfBpeTokenizer::HfBpeTokenizer(const json& root) {
  require_object(root, "(root)");
  for (const std::string_view key : {"truncation", "padding"})
    if (find_member(root, key) != nullptr)
      fail(std::string(key), "is not supported (the pipeline truncates and pads itself); set null");
  if (const json* normalizer = find_member(root, "normalizer"))
    parse_normalizer(*normalizer, "normalizer", normalizer_);
  const json* pre_tokenizer = find_member(root, "pre_tokenizer");
  if (pre_tokenizer != nullptr)
    parse_pre_tokenizer(*pre_tokenizer, "pre_tokenizer", pre_tokenizer_);
  if (pre_tokenizer_.empty() || !std::holds_alternative<ByteLevelStep>(pre_tokenizer_.back()))
    fail("pre_tokenizer",
         "must end with ByteLevel: only byte-level BPE is supported (a BPE over characters, "
         "as in Llama-2's tokenizer.json, is not)");
  parse_model(require_member(root, "model", ""));
  if (const json* added = find_member(root, "added_tokens")) parse_added_tokens(*added);
  if (const json* post = find_member(root, "post_processor"))
    parse_post_processor(*post, "post_processor");
  parse_decoder(require_member(root, "decoder", ""), "decoder");

  TokenId largest = pieces_.empty() ? 0 : static_cast<TokenId>(pieces_.size() - 1);
  for (const AddedToken& token : added_tokens_) largest = std::max(largest, token.id);
  vocab_size_ = largest + 1;
  decoded_bytes_.resize(vocab_size_);
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();
  const auto decoded = [&](const std::string& token) {
    // ByteLevel's decoder maps a token's symbols back to bytes; a token with a character
    // outside the alphabet (an added token, say) stays as it is written.
    return alphabet.bytes_of(token).value_or(token);
  };
  for (std::size_t id = 0; id < pieces_.size(); ++id) decoded_bytes_[id] = decoded(pieces_[id]);
  for (const AddedToken& token : added_tokens_) {
    decoded_bytes_[token.id] = decoded(token.content);
    if (token.special) special_ids_.push_back(token.id);
  }
  std::sort(special_ids_.begin(), special_ids_.end());
  special_ids_.erase(std::unique(special_ids_.begin(), special_ids_.end()), special_ids_.end());
}

void HfBpeTokenizer::parse_model(const json& model) {
  const std::string path = "model";
  require_object(model, path);
  if (const json* type = find_member(model, "type"); type != nullptr && *type != "BPE")
    fail("model.type", "'" + type->dump() + "' is not supported (only BPE)");
  if (const json* dropout = find_member(model, "dropout");
      dropout != nullptr && !(dropout->is_number() && dropout->get<double>() == 0.0))
    fail("model.dropout", "BPE dropout is not supported (must be null)");
  for (const std::string_view key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const json* affix = find_member(model, key);
        affix != nullptr && !(affix->is_string() && affix->get<std::string>().empty()))
      fail(member_path(path, key), "is not supported (must be null)");
  // unk_token, fuse_unk and byte_fallback only act on a symbol missing from the vocabulary; the
  // check below that all 256 byte symbols are present means none ever is.
  for (const std::string_view key : {"fuse_unk", "byte_fallback"})
    bool_member(model, key, false, path);
  if (const json* unk = find_member(model, "unk_token"); unk != nullptr && !unk->is_string())
    fail("model.unk_token", "must be a string or null");
  ignore_merges_ = bool_member(model, "ignore_merges", false, path);

  const json& vocab = require_member(model, "vocab", path);
  require_object(vocab, "model.vocab");
  if (vocab.size() > text_detail::kMaxVocabularyEntries)
    fail("model.vocab", "has " + std::to_string(vocab.size()) +
                            " entries, more than the limit of " +
                            std::to_string(text_detail::kMaxVocabularyEntries));
  const std::uint64_t id_bound = text_detail::token_id_bound(vocab.size());
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();
  id_of_piece_.reserve(vocab.size());
  for (const auto& [piece, id_json] : vocab.items()) {
    const std::string id_path = "model.vocab[" + json(piece).dump() + "]";
    const TokenId id = id_value(id_json, id_path);
    // The tables below are indexed by id.
    if (id >= id_bound)
      fail(id_path,
           "id " + std::to_string(id) + " is far beyond the vocabulary's " +
               std::to_string(vocab.size()) + " entries (ids must be below 2 x entries + " +
               std::to_string(text_detail::kTokenIdSlack) + " = " + std::to_string(id_bound) + ")");
    if (id >= pieces_.size()) pieces_.resize(std::size_t{id} + 1);
    if (!pieces_[id].empty()) fail(id_path, "id " + std::to_string(id) + " is used twice");
    pieces_[id] = piece;
    id_of_piece_.emplace(piece, id);
    if (ignore_merges_)
      if (auto bytes = alphabet.bytes_of(piece)) id_of_bytes_.emplace(std::move(*bytes), id);
  }
  for (int byte = 0; byte < 256; ++byte) {
    const auto found = id_of_piece_.find(alphabet.symbol[byte]);
    if (found == id_of_piece_.end())
      fail("model.vocab", "lacks the byte-level symbol '" + alphabet.symbol[byte] + "' of byte " +
                              std::to_string(byte) + " (a byte-level BPE needs all 256)");
    byte_ids_[byte] = found->second;
  }

  const json& merges = require_member(model, "merges", path);
  if (!merges.is_array()) fail("model.merges", "must be an array");
  if (merges.size() > text_detail::kMaxMerges)
    fail("model.merges", "has " + std::to_string(merges.size()) +
                             " entries, more than the limit of " +
                             std::to_string(text_detail::kMaxMerges));
  merges_.reserve(merges.size());
  const auto id_of = [&](const std::string& piece, const std::string& merge_path) {
    const auto found = id_of_piece_.find(piece);
    if (found == id_of_piece_.end()) fail(merge_path, "'" + piece + "' is not in model.vocab");
    return found->second;
  };
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string merge_path = index_path("model.merges", rank);
    const json& merge = merges[rank];
    std::string left, right;
    if (merge.is_string()) {  // "a b"
      const std::string& text = merge.get_ref<const std::string&>();
      const std::size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
        fail(merge_path, "must be two tokens separated by one space");
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {  // ["a", "b"]
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      fail(merge_path, "must be \"a b\" or [\"a\", \"b\"]");
    }
    const std::uint64_t key =
        std::uint64_t{id_of(left, merge_path)} << 32 | id_of(right, merge_path);
    const TokenId merged = id_of(left + right, merge_path);
    // A repeated pair takes its later rank, as the reference's map construction does.
    merges_.insert_or_assign(key, PairMerge{static_cast<std::uint32_t>(rank), merged});
  }
}

void HfBpeTokenizer::parse_added_tokens(const json& list) {
  if (!list.is_array()) fail("added_tokens", "must be an array");
  if (list.size() > text_detail::kMaxAddedTokens)
    fail("added_tokens", "has " + std::to_string(list.size()) +
                             " entries, more than the limit of " +
                             std::to_string(text_detail::kMaxAddedTokens));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("added_tokens", i);
    const json& entry = list[i];
    require_object(entry, path);
    AddedToken token;
    token.id = id_value(require_member(entry, "id", path), member_path(path, "id"));
    token.content = string_member(entry, "content", path);
    if (token.content.empty()) fail(member_path(path, "content"), "must not be empty");
    if (text_detail::first_invalid_utf8(token.content) != std::string::npos)
      fail(member_path(path, "content"), "is not valid UTF-8");
    token.special = bool_member(entry, "special", false, path);
    token.single_word = bool_member(entry, "single_word", false, path);
    token.lstrip = bool_member(entry, "lstrip", false, path);
    token.rstrip = bool_member(entry, "rstrip", false, path);
    token.normalized = bool_member(entry, "normalized", !token.special, path);
    if (token.id < pieces_.size() && !pieces_[token.id].empty() &&
        pieces_[token.id] != token.content)
      fail(member_path(path, "id"), "is model.vocab's id of '" + pieces_[token.id] + "'");
    if (added_by_id_.contains(token.id))
      fail(member_path(path, "id"), std::to_string(token.id) + " is added twice");
    if (added_by_content_.contains(token.content))
      fail(member_path(path, "content"), "'" + token.content + "' is added twice");
    // The Hugging Face library does not take these ids from the file: it gives a token its
    // vocabulary id, or else the next id after the vocabulary and the tokens added before it.
    // A file whose ids differ from those would be read differently there, so it is refused.
    const auto in_vocab = id_of_piece_.find(token.content);
    const auto vocab_count = static_cast<TokenId>(id_of_piece_.size());
    const TokenId expected = in_vocab != id_of_piece_.end() ? in_vocab->second
                             : largest_added_ ? std::max(*largest_added_ + 1, vocab_count)
                                              : vocab_count;
    if (token.id != expected)
      fail(member_path(path, "id"),
           "is " + std::to_string(token.id) + ", but the Hugging Face library assigns this token " +
               std::to_string(expected) +
               " (the vocabulary's id, or the next after the vocabulary and earlier added tokens)");
    largest_added_ = std::max(largest_added_.value_or(0), token.id);
    if (token.normalized) {
      std::string storage;
      token.content = std::string(normalizer_.apply(token.content, storage));
    }
    const AddedToken& stored = added_tokens_.emplace_back(std::move(token));
    added_by_id_.emplace(stored.id, &stored);
    added_by_content_.emplace(stored.content, &stored);
  }
  std::vector<const AddedToken*> raw, normalized;
  for (const AddedToken& token : added_tokens_)
    (token.normalized ? normalized : raw).push_back(&token);
  raw_matcher_ = AddedTokenMatcher(raw);
  normalized_matcher_ = AddedTokenMatcher(normalized);
}

void HfBpeTokenizer::parse_post_processor(const json& node, const std::string& path) {
  const std::string type = type_of(node, path);
  if (type == "ByteLevel") return;  // it adjusts offsets only
  if (type == "Sequence") {
    const std::string list_path = member_path(path, "processors");
    const json& list = require_member(node, "processors", path);
    if (!list.is_array()) fail(list_path, "must be an array");
    for (std::size_t i = 0; i < list.size(); ++i)
      parse_post_processor(list[i], index_path(list_path, i));
    return;
  }
  std::vector<TokenId> before, after;
  if (type == "TemplateProcessing") {
    // Only the single-sequence template applies: odbatch never encodes pairs.
    const std::string single_path = member_path(path, "single");
    const json& single = require_member(node, "single", path);
    if (!single.is_array()) fail(single_path, "must be an array");
    const json& special_tokens = require_member(node, "special_tokens", path);
    bool seen_sequence = false;
    for (std::size_t i = 0; i < single.size(); ++i) {
      const std::string item_path = index_path(single_path, i);
      require_object(single[i], item_path);
      if (const json* sequence = find_member(single[i], "Sequence")) {
        const std::string sequence_path = member_path(item_path, "Sequence");
        require_object(*sequence, sequence_path);
        if (string_member(*sequence, "id", sequence_path) != "A" || seen_sequence)
          fail(sequence_path, "a single-sequence template holds sequence A once");
        seen_sequence = true;
      } else if (const json* special = find_member(single[i], "SpecialToken")) {
        const std::string special_path = member_path(item_path, "SpecialToken");
        require_object(*special, special_path);
        const std::string name = string_member(*special, "id", special_path);
        const std::string entry_path = member_path(member_path(path, "special_tokens"), name);
        const json& entry =
            require_member(special_tokens, name, member_path(path, "special_tokens"));
        require_object(entry, entry_path);
        const json& ids = require_member(entry, "ids", entry_path);
        if (!ids.is_array()) fail(member_path(entry_path, "ids"), "must be an array");
        for (std::size_t k = 0; k < ids.size(); ++k)
          (seen_sequence ? after : before)
              .push_back(id_value(ids[k], index_path(member_path(entry_path, "ids"), k)));
      } else {
        fail(item_path, "must hold Sequence or SpecialToken");
      }
    }
    if (!seen_sequence) fail(single_path, "lacks the sequence A");
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    // [CLS] A [SEP] for a single sequence; their other fields concern offsets and pairs.
    for (const auto& [key, into] : {std::pair{"cls", &before}, std::pair{"sep", &after}}) {
      const json& pair = require_member(node, key, path);
      if (!pair.is_array() || pair.size() != 2) fail(member_path(path, key), "must be [token, id]");
      into->push_back(id_value(pair[1], index_path(member_path(path, key), 1)));
    }
  } else {
    unsupported_type(path, type);
  }
  prefix_ids_.insert(prefix_ids_.begin(), before.begin(), before.end());
  suffix_ids_.insert(suffix_ids_.end(), after.begin(), after.end());
}

void HfBpeTokenizer::parse_decoder(const json& node, const std::string& path) {
  const std::string type = type_of(node, path);
  if (type == "Sequence") {
    const std::string list_path = member_path(path, "decoders");
    const json& list = require_member(node, "decoders", path);
    if (!list.is_array() || list.size() != 1)
      fail(list_path, "only a sequence of the ByteLevel decoder alone is supported");
    parse_decoder(list[0], index_path(list_path, 0));
    return;
  }
  if (type != "ByteLevel") unsupported_type(path, type);
}

void HfBpeTokenizer::encode_word(std::string_view word, std::vector<TokenId>& ids) const {
  if (ignore_merges_) {
    if (const auto found = id_of_bytes_.find(word); found != id_of_bytes_.end()) {
      ids.push_back(found->second);
      return;
    }
  }
  cache_.encode(word, ids, [this](std::string_view uncached, std::vector<TokenId>& out) {
    merge_word(uncached, out);
  });
}

void HfBpeTokenizer::merge_word(std::string_view word, std::vector<TokenId>& ids) const {
  text_detail::merge_byte_pairs(
      word, byte_ids_.data(),
      [this](TokenId left, TokenId right, std::uint32_t, std::uint32_t,
             std::uint32_t) -> std::optional<PairMerge> {
        const auto found = merges_.find(std::uint64_t{left} << 32 | right);
        if (found == merges_.end()) return std::nullopt;
        return found->second;
      },
      ids);
}

template <class PieceType>
void HfBpeTokenizer::pre_tokenize(std::string_view text, std::deque<std::string>& prefixed,
                                  std::vector<PieceType>& pieces) const {
  thread_local std::vector<PieceType> next;
  pieces.assign(1, PieceType{text});
  for (const PreTokenizerStep& step : pre_tokenizer_) {
    next.clear();
    if (const auto* split = std::get_if<SplitStep>(&step)) {
      for (const PieceType& piece : pieces) split_piece(*split, piece, next);
    } else {
      const auto& byte_level = std::get<ByteLevelStep>(step);
      for (PieceType piece : pieces) {
        if (byte_level.add_prefix_space && !text_of(piece).starts_with(' ')) {
          // Appended, not `" " + std::string(...)`, which GCC 12 misreads as an overlapping copy
          // (-Wrestrict) when fortified at -O3.
          std::string& spaced = prefixed.emplace_back(1, ' ');
          spaced += text_of(piece);
          piece = prefixed_with_space(piece, spaced);
        }
        if (!byte_level.gpt2_split) {
          next.push_back(piece);
          continue;
        }
        thread_local std::vector<MatchSpan> matches;
        matches.clear();
        const std::string_view piece_text = text_of(piece);
        byte_level.gpt2_split->find_all(piece_text, matches);
        // Isolated: matches and the text between them each become a piece.
        std::size_t previous = 0;
        for (const MatchSpan& match : matches) {
          if (previous != match.begin) next.push_back(part_of(piece, previous, match.begin));
          if (match.end > match.begin) next.push_back(part_of(piece, match.begin, match.end));
          previous = match.end;
        }
        if (previous != piece_text.size())
          next.push_back(part_of(piece, previous, piece_text.size()));
      }
    }
    pieces.swap(next);
  }
}

void HfBpeTokenizer::pre_tokenize_with_origins(std::string_view text,
                                               std::deque<std::string>& prefixed,
                                               std::vector<Piece>& pieces,
                                               std::vector<std::string_view>& words) const {
  pre_tokenize(text, prefixed, pieces);
  words.clear();
  for (const Piece& piece : pieces) words.push_back(piece.text);
}

void HfBpeTokenizer::encode_text(std::string_view text, std::size_t base, std::vector<TokenId>& ids,
                                 std::vector<TokenOffsets>* offsets) const {
  std::deque<std::string> prefixed;
  thread_local std::vector<std::string_view> words;
  thread_local std::vector<Piece> pieces;
  if (offsets == nullptr)
    pre_tokenize(text, prefixed, words);
  else
    pre_tokenize_with_origins(text, prefixed, pieces, words);
  // One loop, and so one call of encode_word, for both: the compiler then inlines the word
  // cache as it did before offsets existed.
  const Piece* piece = pieces.data();
  for (const std::string_view word : words) {
    const std::size_t first = offsets != nullptr ? ids.size() : 0;
    encode_word(word, ids);
    if (offsets == nullptr) continue;
    // The model's tokens spell the piece's bytes in order.
    std::size_t at = 0;
    for (std::size_t i = first; i < ids.size(); ++i) {
      const std::size_t end = at + decoded_bytes_[ids[i]].size();
      offsets->push_back({static_cast<std::uint32_t>(base + piece->origin_of(at)),
                          static_cast<std::uint32_t>(base + piece->origin_of(end))});
      at = end;
    }
    ++piece;
  }
}

void HfBpeTokenizer::encode_tokens(std::string_view text, const TextEncodeOptions& options,
                                   std::vector<TokenId>& ids,
                                   std::vector<TokenOffsets>* offsets) const {
  if (const std::size_t bad = text_detail::first_invalid_utf8(text); bad != std::string::npos)
    throw std::invalid_argument("text is not valid UTF-8 at byte " + std::to_string(bad));
  if (options.add_special_tokens) {
    ids.insert(ids.end(), prefix_ids_.begin(), prefix_ids_.end());
    if (offsets != nullptr) offsets->resize(offsets->size() + prefix_ids_.size());
  }
  std::vector<TextSplit> raw_splits, normalized_splits;
  std::string normalized_storage;
  raw_matcher_.split(text, options.recognize_special_tokens, raw_splits);
  for (const TextSplit& raw : raw_splits) {
    if (raw.id) {
      ids.push_back(*raw.id);
      if (offsets != nullptr)
        offsets->push_back(
            {static_cast<std::uint32_t>(raw.begin), static_cast<std::uint32_t>(raw.end)});
      continue;
    }
    const std::string_view original = text.substr(raw.begin, raw.end - raw.begin);
    const std::string_view normalized = normalizer_.apply(original, normalized_storage);
    // Offsets map straight back unless normalization changed the text.
    const bool changed = offsets != nullptr && normalized != original;
    const std::size_t first_offset = offsets != nullptr ? offsets->size() : 0;
    normalized_splits.clear();
    normalized_matcher_.split(normalized, options.recognize_special_tokens, normalized_splits);
    for (const TextSplit& part : normalized_splits) {
      const std::size_t base = changed ? 0 : raw.begin;
      if (part.id) {
        ids.push_back(*part.id);
        if (offsets != nullptr)
          offsets->push_back({static_cast<std::uint32_t>(base + part.begin),
                              static_cast<std::uint32_t>(base + part.end)});
      } else {
        encode_text(normalized.substr(part.begin, part.end - part.begin), base + part.begin, ids,
                    offsets);
      }
    }
    if (changed)
      NormalizationMap(normalizer_, original, normalized, raw.begin)
          .map_back(std::span(*offsets).subspan(first_offset));
  }
  if (options.add_special_tokens) {
    ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
    if (offsets != nullptr) {
      const auto end = static_cast<std::uint32_t>(text.size());
      offsets->insert(offsets->end(), suffix_ids_.size(), TokenOffsets{end, end});
    }
  }
}

std::string HfBpeTokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
  std::string bytes;
  for (const TokenId id : ids) {
    const bool in_model = id < pieces_.size() && !pieces_[id].empty();
    if (!in_model && !added_by_id_.contains(id))
      throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary");
    if (skip_special_tokens) {
      const auto added = added_by_id_.find(id);
      if (added != added_by_id_.end() && added->second->special) continue;
    }
    bytes += decoded_bytes_[id];
  }
  std::string text;
  text_detail::append_utf8_lossy(bytes, text);
  return text;
}

std::optional<TokenId> HfBpeTokenizer::token_to_id(std::string_view token) const {
  if (const auto added = added_by_content_.find(token); added != added_by_content_.end())
    return added->second->id;
  const auto found = id_of_piece_.find(token);
  if (found == id_of_piece_.end()) return std::nullopt;
  return found->second;
}

std::optional<std::string> HfBpeTokenizer::id_to_token(TokenId id) const {
  if (const auto added = added_by_id_.find(id); added != added_by_id_.end())
    return added->second->content;
  if (id < pieces_.size() && !pieces_[id].empty()) return pieces_[id];
  return std::nullopt;
}

}  // namespace

std::unique_ptr<TextTokenizer> parse_hf_tokenizer(std::string_view text,
                                                  const std::filesystem::path& origin) {
  if (nests_deeper_than(text, text_detail::kMaxTokenizerJsonDepth))
    throw TokenizerModelError(
        origin, "nests arrays and objects deeper than " +
                    std::to_string(text_detail::kMaxTokenizerJsonDepth) +
                    " levels, beyond any real tokenizer.json (a Sequence within a Sequence...)");
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& error) {
    throw TokenizerModelError(origin, std::string("not valid JSON: ") + error.what());
  }
  try {
    return std::make_unique<HfBpeTokenizer>(root);
  } catch (const JsonPathError& error) {
    throw TokenizerModelError(origin, error.path + ": " + error.problem);
  }
}

std::unique_ptr<TextTokenizer> load_hf_tokenizer(const std::filesystem::path& tokenizer_json) {
  return parse_hf_tokenizer(read_tokenizer_model_file(tokenizer_json), tokenizer_json);
}

}  // namespace odbatch
