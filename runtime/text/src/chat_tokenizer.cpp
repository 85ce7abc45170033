#include "odbatch/text/chat_tokenizer.hpp"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <bitset>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "jinja_chat_encoder.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/regular_file.hpp"
#include "odbatch/text/chat_template_config.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "odbatch/text/sentencepiece_tokenizer.hpp"
#include "odbatch/text/tiktoken_presets.hpp"
#include "template_rendering.hpp"
#include "token_sequence_builder.hpp"

namespace odbatch {

TokenizerModelError::TokenizerModelError(const std::filesystem::path& model,
                                         const std::string& problem)
    : ConfigError("tokenizer.model", model.string() + ": " + problem), model_(model) {}

std::string read_tokenizer_model_file(const std::filesystem::path& model) {
  try {
    return read_regular_file(model.string(), kMaxTokenizerModelBytes);
  } catch (const FileReadError& e) {
    throw TokenizerModelError(model, e.problem());
  }
}

struct ChatTokenizer::Impl {
  TokenizerOptions options;
  // Set for a Jinja template, or a preset over a tokenizer.json or tiktoken file; otherwise the
  // preset renders straight into sentencepiece ids below.
  std::unique_ptr<const JinjaChatEncoder> jinja;
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

// Where text cut between two printable ASCII characters x and y encodes, up to the cut, to the
// pieces the whole text's encoding starts with. sentencepiece (0.1.97) normalizes the text before
// such a cut as the whole text's start: printable ASCII character by character (case folding at
// most), the same dummy prefix, no whitespace before the cut to collapse or strip. Then, if no
// piece can span the cut, unigram's best path to it is the best path of the text before it
// (Viterbi fixes the best path to a position from the positions before it), and BPE never merges
// across it (its merges form pieces, in an order set by score and position); and if the piece
// after the cut is a known one, sentencepiece merges no unknown pieces across it.
//  - Before a space (y = ' '): no piece may hold whitespace ("▁", or a space where the model keeps
//    spaces) right after a character that is not whitespace, and "▁" must be a piece. Models
//    trained without whitespace splitting or with whitespace as a suffix have pieces such as
//    "of▁the" or "the▁": they get no cut at all, and are encoded whole.
//  - Between x and y otherwise, for text without spaces: no piece may hold x and y side by side
//    (in either case), and y must be a piece of its own (in both cases).
ExactCuts exact_cuts_of(const sentencepiece::SentencePieceProcessor& model) {
  constexpr std::string_view kLowerBlock = "\xE2\x96\x81";  // U+2581, sentencepiece's space
  const auto is_piece = [&](const std::string& piece) {
    const int id = model.PieceToId(piece);
    return id != model.unk_id() && !model.IsControl(id) && !model.IsUnused(id);
  };
  if (!is_piece(std::string(kLowerBlock))) return {};
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  std::bitset<128 * 128> side_by_side;  // ASCII pairs some piece holds, lower-cased
  for (int id = 0; id < model.GetPieceSize(); ++id) {
    const std::string_view piece = model.IdToPiece(id);
    bool after_other = false;
    for (std::size_t at = 0; at < piece.size();) {
      const std::size_t whitespace = piece[at] == ' ' ? 1
                                     : piece.substr(at).starts_with(kLowerBlock)
                                         ? kLowerBlock.size()
                                         : 0;
      if (whitespace > 0 && after_other) return {};
      after_other = whitespace == 0;
      at += std::max<std::size_t>(whitespace, 1);
    }
    for (std::size_t at = 1; at < piece.size(); ++at) {
      const auto x = static_cast<unsigned char>(lower(piece[at - 1]));
      const auto y = static_cast<unsigned char>(lower(piece[at]));
      if (x < 128 && y < 128) side_by_side[x * 128 + y] = true;
    }
  }
  return ExactCuts([&](char x, char y) {
    return !side_by_side[static_cast<std::size_t>(lower(x)) * 128 +
                         static_cast<std::size_t>(lower(y))] &&
           is_piece(std::string(1, y)) && is_piece(std::string(1, lower(y)));
  });
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

// The canonical ChatML template, for the chatml preset over a tokenizer.json or tiktoken file:
// byte for byte what the sentencepiece preset renders.
constexpr std::string_view kChatmlTemplate =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] "
    "+ '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\n' }}{% endif %}";

std::unique_ptr<const TextTokenizer> load_text_tokenizer(const std::filesystem::path& model,
                                                         TokenizerFormat format,
                                                         const TokenizerOptions& options) {
  switch (format) {
    case TokenizerFormat::hf_json:
      return load_hf_tokenizer(model);
    case TokenizerFormat::tiktoken:
      return load_tiktoken(model, tiktoken_preset_options(options.tiktoken_preset));
    case TokenizerFormat::sentencepiece:
    case TokenizerFormat::automatic:
      break;
  }
  return load_sentencepiece_tokenizer(model);
}

std::unique_ptr<const JinjaChatEncoder> make_jinja_encoder(const std::filesystem::path& model,
                                                           TokenizerFormat format,
                                                           const TokenizerOptions& options) {
  TokenizerOptions effective = options;
  std::string source;
  std::string origin;
  // transformers passes tools and documents (None when absent) and the special tokens.
  jinja::Dict variables;
  variables.set("tools", jinja::Value::none());
  variables.set("documents", jinja::Value::none());
  switch (options.chat_template) {
    case ChatTemplate::jinja:
      origin = options.template_file.string();
      try {
        if (options.template_file.extension() == ".json") {
          const ChatTemplateConfig config =
              load_tokenizer_config(options.template_file, options.template_name);
          source = config.chat_template;
          add_special_tokens(config, variables);
        } else {
          source = load_jinja_file(options.template_file);
        }
      } catch (const ChatTemplateConfigError& error) {
        throw ConfigError("template_file", error.what());
      }
      break;
    case ChatTemplate::chatml:
      if (options.add_bos.value_or(false))
        throw ConfigError("add_bos",
                          "the chatml preset adds a BOS only over a sentencepiece model; use "
                          "template = \"jinja\" with a template that writes bos_token");
      source = kChatmlTemplate;
      origin = "the chatml preset";
      effective.image_content = ImageContent::text;
      break;
    case ChatTemplate::llama2:
      throw ConfigError("template",
                        "the llama2 preset needs a sentencepiece model; with a " +
                            std::string(to_string(format)) +
                            " file use template = \"jinja\" and the model's own template");
  }
  if (options.bos_token) variables.set("bos_token", jinja::Value(*options.bos_token));
  if (options.eos_token) variables.set("eos_token", jinja::Value(*options.eos_token));
  // As transformers passes apply_chat_template's keyword arguments: over the special tokens.
  for (const auto& [name, json] : options.template_variables)
    variables.set(name, jinja::Value::from_json(json));
  return std::make_unique<const JinjaChatEncoder>(load_text_tokenizer(model, format, options),
                                                  effective, source, origin, std::move(variables));
}

}  // namespace

ChatTokenizer::ChatTokenizer(const std::filesystem::path& model, TokenizerOptions options) {
  validate(options);
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const TokenizerOptions& configured = impl->options;
  const TokenizerFormat format = resolved_format(configured.format, model);
  if (format != TokenizerFormat::sentencepiece || configured.chat_template == ChatTemplate::jinja) {
    impl->jinja = make_jinja_encoder(model, format, configured);
    impl_ = std::move(impl);
    return;
  }
  impl->add_bos = configured.add_bos.value_or(configured.chat_template == ChatTemplate::llama2);

  auto& sp = impl->model;
  if (const auto status = sp.LoadFromSerializedProto(read_tokenizer_model_file(model));
      !status.ok())
    throw TokenizerModelError(model, "cannot load the sentencepiece model: " + status.ToString());

  auto& vocabulary = impl->vocabulary;
  vocabulary.model = &sp;
  vocabulary.image = required_piece(sp, model, configured.image_piece, "image_piece");
  vocabulary.vision_start =
      required_piece(sp, model, configured.vision_start_piece, "vision_start_piece");
  vocabulary.vision_end =
      required_piece(sp, model, configured.vision_end_piece, "vision_end_piece");
  vocabulary.reserved = {vocabulary.image, vocabulary.vision_start, vocabulary.vision_end};
  vocabulary.cuts = exact_cuts_of(sp);

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
            encode_fixed_text(sp, model, std::string(role_name(role)) + "\n");
      tokens.turn_separator = encode_fixed_text(sp, model, "\n");
      break;
    case ChatTemplate::llama2:
      if (tokens.eos < 0)
        throw TokenizerModelError(model,
                                  "the model has no EOS token, which chat_template llama2 needs");
      break;
    case ChatTemplate::jinja:
      break;  // served by make_jinja_encoder
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
  if (impl_->jinja) return impl_->jinja->tokenizer().vocab_size();
  return static_cast<std::uint32_t>(impl_->model.GetPieceSize());
}

std::string ChatTokenizer::token_text(std::uint32_t id) const {
  if (impl_->jinja) return impl_->jinja->tokenizer().id_to_token(id).value_or("");
  if (id >= static_cast<std::uint32_t>(impl_->model.GetPieceSize())) return "";
  return impl_->model.IdToPiece(static_cast<int>(id));
}

std::variant<SupervisedRendering, TokenizeError> ChatTokenizer::render(
    const Conversation& conversation,
    std::span<const std::uint32_t> visual_tokens_per_image) const {
  if (impl_->jinja) return impl_->jinja->render(conversation);
  TokenizeResult result = tokenize(conversation, visual_tokens_per_image);
  if (auto* error = std::get_if<TokenizeError>(&result)) return std::move(*error);
  const auto& ids = std::get<TokenizedSample>(result).input_ids;
  SupervisedRendering rendering;
  if (const auto status =
          impl_->model.Decode(std::vector<int>(ids.begin(), ids.end()), &rendering.text);
      !status.ok())
    rendering.text = "(cannot decode: " + status.ToString() + ")";
  return rendering;
}

TokenizeResult ChatTokenizer::render_preset(
    const Conversation& conversation,
    std::span<const std::uint32_t> visual_tokens_per_image) const {
  const TokenizerOptions& configured = impl_->options;
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
    case ChatTemplate::jinja:
      break;  // served by the Jinja encoder
  }
  return builder.finish();
}

namespace {

// What only a Jinja template can render: tools, tool calls and results, template variables.
std::optional<std::string> preset_cannot_render(const Conversation& conversation) {
  if (!conversation.tools_json.empty()) return "the conversation has tools";
  if (!conversation.template_variables_json.empty())
    return "the record sets template variables (chat_template_kwargs)";
  for (std::size_t i = 0; i < conversation.messages.size(); ++i) {
    const Message& message = conversation.messages[i];
    if (message.role == Role::tool) return "message " + std::to_string(i) + " is a tool's result";
    if (calls_tools(message)) return "message " + std::to_string(i) + " calls tools";
  }
  return std::nullopt;
}

}  // namespace

TokenizeResult ChatTokenizer::tokenize(const Conversation& conversation,
                                       std::span<const std::uint32_t> visual_tokens_per_image,
                                       const TemplateVariables& variables) const {
  const TokenizerOptions& configured = impl_->options;
  if (!variables.empty() && !impl_->jinja)
    return TokenizeError{TokenizeErrorReason::template_refused,
                         "template variable " + variables.begin()->first + " was set, but the " +
                             std::string(to_string(configured.chat_template)) +
                             " preset over a sentencepiece model takes no variables (use "
                             "tokenizer.template = \"jinja\")"};
  if (conversation.messages.empty())
    return TokenizeError{TokenizeErrorReason::unsupported_roles,
                         "the conversation has no messages"};
  if (!impl_->jinja)
    if (const auto problem = preset_cannot_render(conversation))
      return TokenizeError{TokenizeErrorReason::unsupported_roles,
                           *problem + ": the " + std::string(to_string(configured.chat_template)) +
                               " preset over a sentencepiece model renders system, user and "
                               "assistant text only (use tokenizer.template = \"jinja\")"};
  if (conversation.images.size() != visual_tokens_per_image.size())
    return TokenizeError{TokenizeErrorReason::image_mismatch,
                         "the conversation has " + std::to_string(conversation.images.size()) +
                             " images but " + std::to_string(visual_tokens_per_image.size()) +
                             " visual token counts were given"};

  TokenizeResult result =
      impl_->jinja ? impl_->jinja->tokenize(conversation, visual_tokens_per_image, variables)
                   : render_preset(conversation, visual_tokens_per_image);
  auto* sample = std::get_if<TokenizedSample>(&result);
  if (!sample) return result;

  // Both engines keep the first max_seq_len tokens and reject any image not wholly within them,
  // so a cut only drops text; the full length is not known.
  if (sample->truncated && configured.over_length == OverLengthPolicy::reject) {
    std::uint64_t visual_tokens = 0;
    for (const auto tokens : visual_tokens_per_image) visual_tokens += tokens;
    return TokenizeError{
        TokenizeErrorReason::over_length,
        "more than max_seq_len " + std::to_string(configured.max_seq_len) + " tokens" +
            (visual_tokens == 0
                 ? std::string(kTextOverLengthRemedy)
                 : ", " + std::to_string(visual_tokens) + " of them visual tokens of its " +
                       std::to_string(visual_tokens_per_image.size()) + " image(s)" +
                       std::string(2 * visual_tokens >= configured.max_seq_len
                                       ? kImageOverLengthRemedy
                                       : kTextOverLengthRemedy))};
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
