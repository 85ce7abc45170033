#include "token_sequence_builder.hpp"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace odbatch {

namespace {

// Typical text takes 3 to 5 bytes a token, so this rarely reallocates and never holds more than
// max_seq_len tokens.
std::size_t expected_tokens(const Conversation& conversation,
                            std::span<const std::uint32_t> visual_tokens_per_image,
                            std::uint32_t max_seq_len) {
  std::uint64_t expected = 16;
  for (const auto& message : conversation.messages) expected += message.content.size() / 3 + 16;
  for (const auto visual_tokens : visual_tokens_per_image) expected += visual_tokens + 2;
  return static_cast<std::size_t>(std::min<std::uint64_t>(expected, max_seq_len));
}

// The first prefix of a long text to encode for `wanted` pieces: typical text takes 3 to 5 bytes
// a piece, so one encoding usually suffices, and text of up to 64 KiB is encoded whole.
constexpr std::size_t kMinPrefixBytes = std::size_t{64} << 10;
std::size_t first_prefix_bytes(std::size_t wanted) {
  return std::max(kMinPrefixBytes, 8 * wanted);
}

}  // namespace

TokenSequenceBuilder::TokenSequenceBuilder(const SequenceVocabulary& vocabulary,
                                           const Conversation& conversation,
                                           std::span<const std::uint32_t> visual_tokens_per_image,
                                           std::uint32_t max_seq_len)
    : vocabulary_(vocabulary),
      conversation_(conversation),
      visual_tokens_per_image_(visual_tokens_per_image),
      max_seq_len_(max_seq_len) {
  const auto expected = expected_tokens(conversation, visual_tokens_per_image, max_seq_len);
  sample_.input_ids.reserve(expected);
  sample_.labels.reserve(expected);
  sample_.image_spans.reserve(visual_tokens_per_image.size());
}

void TokenSequenceBuilder::text(std::string_view text, bool supervised) {
  if (failed() || past_max_seq_len_ || text.empty()) return;
  if (!pending_text_.empty() && pending_supervised_ != supervised) flush_text();
  if (pending_text_.empty()) {
    pending_from_ = location_;
    pending_supervised_ = supervised;
  }
  pending_to_ = location_;
  pending_text_ += text;
}

void TokenSequenceBuilder::content(std::string_view content, bool supervised) {
  std::size_t start = 0;
  for (auto at = content.find(kImagePlaceholder); at != std::string_view::npos;
       at = content.find(kImagePlaceholder, start)) {
    text(content.substr(start, at - start), supervised);
    image();
    start = at + kImagePlaceholder.size();
  }
  text(content.substr(start), supervised);
}

void TokenSequenceBuilder::token(int id, bool supervised) {
  if (failed()) return;
  flush_text();
  push(id, supervised);
}

void TokenSequenceBuilder::tokens(std::span<const int> ids, bool supervised) {
  if (failed()) return;
  flush_text();
  append(ids, supervised);
}

void TokenSequenceBuilder::append(std::span<const int> ids, bool supervised) {
  auto& input_ids = sample_.input_ids;
  auto& labels = sample_.labels;
  const std::size_t room = max_seq_len_ - input_ids.size();
  if (ids.size() > room) {
    ids = ids.first(room);
    past_max_seq_len_ = true;
  }
  input_ids.insert(input_ids.end(), ids.begin(), ids.end());
  if (supervised)
    labels.insert(labels.end(), ids.begin(), ids.end());
  else
    labels.insert(labels.end(), ids.size(), kIgnoreLabel);
}

void TokenSequenceBuilder::fail(TokenizeErrorReason reason, std::string message) {
  if (!error_) error_ = TokenizeError{reason, std::move(message)};
}

TokenizeResult TokenSequenceBuilder::finish() {
  flush_text();
  if (!failed() && next_image_ != visual_tokens_per_image_.size())
    fail(TokenizeErrorReason::image_mismatch,
         "the conversation has " + std::to_string(visual_tokens_per_image_.size()) +
             " images but its messages hold " + std::to_string(next_image_) + " " +
             std::string(kImagePlaceholder) + " placeholders");
  if (error_) return std::move(*error_);
  sample_.truncated = past_max_seq_len_;
  return std::move(sample_);
}

void TokenSequenceBuilder::flush_text() {
  if (failed() || pending_text_.empty()) return;
  // One piece past the room tells that the sequence goes on past max_seq_len.
  const std::size_t room = max_seq_len_ - sample_.input_ids.size();
  encode_leading(pending_text_, room + 1);
  pending_text_.clear();
  // Only what is kept must not read as template structure: text past the cut is never used.
  for (const int id : std::span(encoded_).first(std::min(encoded_.size(), room))) {
    if (std::find(vocabulary_.reserved.begin(), vocabulary_.reserved.end(), id) ==
        vocabulary_.reserved.end())
      continue;
    std::string where = describe(pending_from_);
    if (pending_to_ != pending_from_) where += " to " + describe(pending_to_);
    fail(TokenizeErrorReason::special_piece_in_text, where + ": text encodes to the piece '" +
                                                         vocabulary_.model->IdToPiece(id) +
                                                         "', which the template emits only by id");
    return;
  }
  append(encoded_, pending_supervised_);
}

void TokenSequenceBuilder::encode_leading(std::string_view text, std::size_t wanted) {
  // The whole text's pieces up to a cut are those of the text before it (see ExactCuts), so a
  // prefix yielding `wanted` pieces gives the same first pieces.
  // A prefix that falls short is doubled and encoded again: at most twice the work of encoding
  // the prefix needed.
  const ExactCuts& cuts = vocabulary_.cuts;
  std::size_t prefix = cuts.any() ? first_prefix_bytes(wanted) : text.size();
  for (;;) {
    const std::size_t cut =
        prefix >= text.size() ? text.size() : cuts.first_at_or_after(text, prefix);
    encode(text.substr(0, cut));
    if (cut == text.size() || encoded_.size() >= wanted) return;
    prefix = 2 * cut;
  }
}

void TokenSequenceBuilder::encode(std::string_view text) {
  const auto status = vocabulary_.model->Encode(text, &encoded_);
  if (!status.ok())
    throw std::runtime_error(describe(pending_from_) +
                             ": sentencepiece cannot encode: " + status.ToString());
}

void TokenSequenceBuilder::image() {
  if (failed()) return;
  const auto index = next_image_;
  if (index >= visual_tokens_per_image_.size()) {
    fail(TokenizeErrorReason::image_mismatch,
         location() + ": " + std::string(kImagePlaceholder) + " placeholder number " +
             std::to_string(index + 1) + ", but the conversation has " +
             std::to_string(visual_tokens_per_image_.size()) + " images");
    return;
  }
  const std::uint32_t visual_tokens = visual_tokens_per_image_[index];
  if (visual_tokens == 0) {
    fail(TokenizeErrorReason::image_mismatch,
         location() + ": image " + std::to_string(index) + " has no visual tokens");
    return;
  }
  flush_text();
  if (failed()) return;
  // The whole block must fit: a cut through an image is invalid for the vision tower, and a
  // dropped image would leave its pixels without tokens.
  if (past_max_seq_len_) {
    fail(TokenizeErrorReason::over_length,
         location() + ": image " + std::to_string(index) + " (" + std::to_string(visual_tokens) +
             " visual tokens) comes after the first max_seq_len " + std::to_string(max_seq_len_) +
             " tokens; images are never cut" + std::string(kImageOverLengthRemedy));
    return;
  }
  const std::uint64_t block_end = std::uint64_t{sample_.input_ids.size()} + visual_tokens + 2;
  if (block_end > max_seq_len_) {
    fail(TokenizeErrorReason::over_length,
         location() + ": image " + std::to_string(index) + " (" + std::to_string(visual_tokens) +
             " visual tokens) would end at token " + std::to_string(block_end) +
             ", past max_seq_len " + std::to_string(max_seq_len_) + "; images are never cut" +
             std::string(kImageOverLengthRemedy));
    return;
  }
  push(vocabulary_.vision_start, false);
  const auto offset = static_cast<std::uint32_t>(sample_.input_ids.size());
  sample_.input_ids.insert(sample_.input_ids.end(), visual_tokens, vocabulary_.image);
  sample_.labels.insert(sample_.labels.end(), visual_tokens, kIgnoreLabel);
  push(vocabulary_.vision_end, false);
  sample_.image_spans.push_back({offset, visual_tokens});
  ++next_image_;
}

void TokenSequenceBuilder::push(int id, bool supervised) {
  append(std::span(&id, 1), supervised);
}

std::string TokenSequenceBuilder::describe(std::size_t location) const {
  if (location == kDefaultSystemPrompt) return "the default system prompt";
  return "message " + std::to_string(location) + " (" +
         std::string(role_name(conversation_.messages[location].role)) + ")";
}

}  // namespace odbatch
