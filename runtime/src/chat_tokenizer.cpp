#include "odbatch/runtime/chat_tokenizer.hpp"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "template_rendering.hpp"
#include "token_sequence_builder.hpp"

namespace odbatch {

void validate(const TokenizerOptions& options) {
  if (options.max_seq_len == 0) throw ConfigError("max_seq_len", "must be at least 1");
  const std::pair<std::string_view, const std::string*> pieces[] = {
      {"image_piece", &options.image_piece},
      {"vision_start_piece", &options.vision_start_piece},
      {"vision_end_piece", &options.vision_end_piece},
  };
  for (std::size_t i = 0; i < std::size(pieces); ++i) {
    const auto& [field, piece] = pieces[i];
    if (piece->empty()) throw ConfigError(std::string(field), "must not be empty");
    for (std::size_t j = 0; j < i; ++j)
      if (*pieces[j].second == *piece)
        throw ConfigError(std::string(field), "'" + *piece + "' is already " +
                                                  std::string(pieces[j].first) +
                                                  "; the vision pieces must differ");
  }
  if (options.default_system_prompt &&
      options.default_system_prompt->find(kImagePlaceholder) != std::string::npos)
    throw ConfigError("default_system_prompt",
                      "must not contain the image placeholder " + std::string(kImagePlaceholder));
}

TokenizerModelError::TokenizerModelError(const std::filesystem::path& model,
                                         const std::string& problem)
    : std::runtime_error(model.string() + ": " + problem), model_(model) {}

struct ChatTokenizer::Impl {
  TokenizerOptions options;
  bool add_bos = false;
  sentencepiece::SentencePieceProcessor model;
  SequenceVocabulary vocabulary;
  TemplateTokens template_tokens;
};

namespace {

int required_piece(const sentencepiece::SentencePieceProcessor& model,
                   const std::filesystem::path& path, const std::string& piece,
                   std::string_view needed_by) {
  const int id = model.PieceToId(piece);
  if (id == model.unk_id())
    throw TokenizerModelError(path, "no single piece '" + piece + "' (" + std::string(needed_by) +
                                        "); train the model with it among "
                                        "--user_defined_symbols");
  return id;
}

std::vector<int> encode_fixed_text(const sentencepiece::SentencePieceProcessor& model,
                                   const std::filesystem::path& path, std::string_view text) {
  std::vector<int> ids;
  const auto status = model.Encode(text, &ids);
  if (!status.ok())
    throw TokenizerModelError(path, "cannot encode template text: " + status.ToString());
  return ids;
}

// Every i >= 1 with a label: position i - 1 predicts it once the model shifts.
std::uint32_t count_supervised_targets(const std::vector<std::int32_t>& labels) {
  if (labels.empty()) return 0;
  return static_cast<std::uint32_t>(std::count_if(
      labels.begin() + 1, labels.end(), [](std::int32_t label) { return label != kIgnoreLabel; }));
}

}  // namespace

ChatTokenizer::ChatTokenizer(const std::filesystem::path& model, TokenizerOptions options) {
  validate(options);
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const TokenizerOptions& configured = impl->options;
  impl->add_bos = configured.add_bos.value_or(configured.chat_template == ChatTemplate::llama2);

  auto& sp = impl->model;
  if (const auto status = sp.Load(model.string()); !status.ok())
    throw TokenizerModelError(model, "cannot load the sentencepiece model: " + status.ToString());

  auto& vocabulary = impl->vocabulary;
  vocabulary.model = &sp;
  vocabulary.image = required_piece(sp, model, configured.image_piece, "image_piece");
  vocabulary.vision_start =
      required_piece(sp, model, configured.vision_start_piece, "vision_start_piece");
  vocabulary.vision_end =
      required_piece(sp, model, configured.vision_end_piece, "vision_end_piece");
  vocabulary.reserved = {vocabulary.image, vocabulary.vision_start, vocabulary.vision_end};

  auto& tokens = impl->template_tokens;
  tokens.bos = sp.bos_id();
  tokens.eos = sp.eos_id();
  if (impl->add_bos && tokens.bos < 0)
    throw TokenizerModelError(model, "the model has no BOS token, which add_bos asks for");
  switch (configured.chat_template) {
    case ChatTemplate::chatml:
      tokens.im_start = required_piece(sp, model, "<|im_start|>", "chat_template chatml");
      tokens.im_end = required_piece(sp, model, "<|im_end|>", "chat_template chatml");
      vocabulary.reserved.push_back(tokens.im_start);
      vocabulary.reserved.push_back(tokens.im_end);
      for (const auto role : {Role::system, Role::user, Role::assistant})
        tokens.role_headers[static_cast<std::size_t>(role)] =
            encode_fixed_text(sp, model, std::string(chat_role_name(role)) + "\n");
      tokens.turn_separator = encode_fixed_text(sp, model, "\n");
      break;
    case ChatTemplate::llama2:
      if (tokens.eos < 0)
        throw TokenizerModelError(model,
                                  "the model has no EOS token, which chat_template llama2 needs");
      break;
  }
  impl_ = std::move(impl);
}

ChatTokenizer::ChatTokenizer(ChatTokenizer&&) noexcept = default;
ChatTokenizer& ChatTokenizer::operator=(ChatTokenizer&&) noexcept = default;
ChatTokenizer::~ChatTokenizer() = default;

const TokenizerOptions& ChatTokenizer::options() const {
  return impl_->options;
}

std::uint32_t ChatTokenizer::vocab_size() const {
  return static_cast<std::uint32_t>(impl_->model.GetPieceSize());
}

TokenizeResult ChatTokenizer::tokenize(
    const Conversation& conversation,
    std::span<const std::uint32_t> visual_tokens_per_image) const {
  const TokenizerOptions& configured = impl_->options;
  if (conversation.messages.empty())
    return TokenizeError{TokenizeErrorReason::unsupported_roles,
                         "the conversation has no messages"};
  if (conversation.images.size() != visual_tokens_per_image.size())
    return TokenizeError{TokenizeErrorReason::image_mismatch,
                         "the conversation has " + std::to_string(conversation.images.size()) +
                             " images but " + std::to_string(visual_tokens_per_image.size()) +
                             " visual token counts were given"};

  TokenSequenceBuilder builder(impl_->vocabulary, conversation, visual_tokens_per_image,
                               configured.max_seq_len);
  const TemplateSettings settings{impl_->template_tokens, impl_->add_bos,
                                  configured.default_system_prompt};
  switch (configured.chat_template) {
    case ChatTemplate::chatml:
      render_chatml(conversation, settings, builder);
      break;
    case ChatTemplate::llama2:
      render_llama2(conversation, settings, builder);
      break;
  }
  TokenizeResult result = builder.finish();
  auto* sample = std::get_if<TokenizedSample>(&result);
  if (!sample) return result;

  // The builder rejected any image not wholly within max_seq_len, so a cut only drops text.
  if (sample->input_ids.size() > configured.max_seq_len) {
    if (configured.over_length == OverLengthPolicy::reject)
      return TokenizeError{TokenizeErrorReason::over_length,
                           std::to_string(sample->input_ids.size()) + " tokens, over max_seq_len " +
                               std::to_string(configured.max_seq_len)};
    sample->input_ids.resize(configured.max_seq_len);
    sample->labels.resize(configured.max_seq_len);
    sample->truncated = true;
  }
  sample->supervised_targets = count_supervised_targets(sample->labels);
  if (sample->supervised_targets == 0 && configured.zero_labels == ZeroLabelPolicy::reject)
    return TokenizeError{
        TokenizeErrorReason::no_supervised_tokens,
        sample->truncated
            ? "no supervised token is left after truncation to max_seq_len " +
                  std::to_string(configured.max_seq_len)
            : std::string("no supervised token: the conversation has no assistant reply")};
  return result;
}

}  // namespace odbatch
