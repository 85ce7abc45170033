#include "odbatch/text/sentencepiece_tokenizer.hpp"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "odbatch/text/chat_tokenizer.hpp"
#include "utf8_text.hpp"

namespace odbatch {
namespace {

class SentencePieceTokenizer final : public TextTokenizer {
 public:
  explicit SentencePieceTokenizer(const std::filesystem::path& model) {
    if (const auto status = processor_.LoadFromSerializedProto(read_tokenizer_model_file(model));
        !status.ok())
      throw TokenizerModelError(model, "cannot load the sentencepiece model: " + status.ToString());
    for (int id = 0; id < processor_.GetPieceSize(); ++id) {
      if (!processor_.IsControl(id)) continue;
      special_ids_.push_back(static_cast<TokenId>(id));
      controls_.emplace_back(processor_.IdToPiece(id), static_cast<TokenId>(id));
    }
    // Longest first, so that the first control piece found at a position is the longest.
    std::stable_sort(controls_.begin(), controls_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  }

  void encode_tokens(std::string_view text, const TextEncodeOptions& options,
                     std::vector<TokenId>& ids, std::vector<TokenOffsets>* offsets) const override {
    if (const std::size_t bad = text_detail::first_invalid_utf8(text); bad != std::string::npos)
      throw std::invalid_argument("text is not valid UTF-8 at byte " + std::to_string(bad));
    if (options.add_special_tokens && processor_.bos_id() >= 0) {
      ids.push_back(static_cast<TokenId>(processor_.bos_id()));
      if (offsets != nullptr) offsets->push_back({0, 0});
    }
    std::size_t done = 0;
    if (options.recognize_special_tokens) {
      for (std::size_t position = 0; position < text.size(); ++position) {
        const auto control = std::find_if(controls_.begin(), controls_.end(), [&](const auto& c) {
          return text.substr(position).starts_with(c.first);
        });
        if (control == controls_.end()) continue;
        encode_ordinary(text, done, position, ids, offsets);
        ids.push_back(control->second);
        done = position + control->first.size();
        if (offsets != nullptr)
          offsets->push_back(
              {static_cast<std::uint32_t>(position), static_cast<std::uint32_t>(done)});
        position = done - 1;
      }
    }
    encode_ordinary(text, done, text.size(), ids, offsets);
  }

  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens) const override {
    std::string text;
    std::vector<int> run;
    const auto flush = [&] {
      std::string decoded;
      if (const auto status = processor_.Decode(run, &decoded); !status.ok())
        throw std::runtime_error("sentencepiece cannot decode: " + status.ToString());
      text += decoded;
      run.clear();
    };
    for (const TokenId id : ids) {
      if (id >= vocab_size())
        throw std::out_of_range("token id " + std::to_string(id) + " is not in the vocabulary");
      if (!processor_.IsControl(static_cast<int>(id))) {
        run.push_back(static_cast<int>(id));
        continue;
      }
      flush();
      if (!skip_special_tokens) text += processor_.IdToPiece(static_cast<int>(id));
    }
    flush();
    return text;
  }

  std::optional<TokenId> token_to_id(std::string_view token) const override {
    const int id = processor_.PieceToId(std::string(token));
    // PieceToId answers the unknown piece's id for pieces it does not know.
    if (id == processor_.unk_id() && processor_.IdToPiece(id) != token) return std::nullopt;
    return static_cast<TokenId>(id);
  }

  std::optional<std::string> id_to_token(TokenId id) const override {
    if (id >= vocab_size()) return std::nullopt;
    return processor_.IdToPiece(static_cast<int>(id));
  }

  std::uint32_t vocab_size() const override {
    return static_cast<std::uint32_t>(processor_.GetPieceSize());
  }
  std::span<const TokenId> special_token_ids() const override { return special_ids_; }

 private:
  // Encodes text[begin, end); sentencepiece reports each piece's bytes in the text it was
  // given, which its normalization (whitespace, NFKC) may have changed.
  void encode_ordinary(std::string_view text, std::size_t begin, std::size_t end,
                       std::vector<TokenId>& ids, std::vector<TokenOffsets>* offsets) const {
    if (begin == end) return;
    const std::string part(text.substr(begin, end - begin));
    if (offsets == nullptr) {
      std::vector<int> pieces;
      if (const auto status = processor_.Encode(part, &pieces); !status.ok())
        throw std::runtime_error("sentencepiece cannot encode the text: " + status.ToString());
      for (const int id : pieces) ids.push_back(static_cast<TokenId>(id));
      return;
    }
    sentencepiece::ImmutableSentencePieceText pieces;
    if (const auto status = processor_.Encode(part, pieces.mutable_proto()); !status.ok())
      throw std::runtime_error("sentencepiece cannot encode the text: " + status.ToString());
    const auto base = static_cast<std::uint32_t>(begin);
    for (std::size_t i = 0; i < pieces.pieces_size(); ++i) {
      const auto piece = pieces.pieces(static_cast<int>(i));
      ids.push_back(piece.id());
      offsets->push_back({base + piece.begin(), base + piece.end()});
    }
  }

  sentencepiece::SentencePieceProcessor processor_;  // Encode and Decode are const, thread-safe
  std::vector<std::pair<std::string, TokenId>> controls_;
  std::vector<TokenId> special_ids_;
};

}  // namespace

std::unique_ptr<TextTokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model) {
  return std::make_unique<SentencePieceTokenizer>(model);
}

}  // namespace odbatch
