#include "jinja_chat_encoder.hpp"

#include <algorithm>
#include <bitset>
#include <stdexcept>
#include <utility>

#include "odbatch/core/config.hpp"
#include "token_sequence_builder.hpp"

namespace odbatch {
namespace {

std::string describe_message(std::size_t index, const Message& message) {
  return "message " + std::to_string(index) + " (" + std::string(role_name(message.role)) + ")";
}

std::size_t count_placeholders(std::string_view content) {
  std::size_t count = 0;
  for (std::size_t at = content.find(kImagePlaceholder); at != std::string_view::npos;
       at = content.find(kImagePlaceholder, at + kImagePlaceholder.size()))
    ++count;
  return count;
}

// {"type": "image"} for each placeholder and {"type": "text", "text": ...} for the text around.
jinja::Value content_parts(std::string_view content) {
  std::vector<jinja::Value> parts;
  const auto text_part = [&](std::string_view text) {
    if (text.empty()) return;
    jinja::Dict part;
    part.set("type", jinja::Value("text"));
    part.set("text", jinja::Value(text));
    parts.emplace_back(std::move(part));
  };
  std::size_t from = 0;
  for (std::size_t at = content.find(kImagePlaceholder); at != std::string_view::npos;
       at = content.find(kImagePlaceholder, from)) {
    text_part(content.substr(from, at - from));
    jinja::Dict image;
    image.set("type", jinja::Value("image"));
    parts.emplace_back(std::move(image));
    from = at + kImagePlaceholder.size();
  }
  text_part(content.substr(from));
  return jinja::Value(std::move(parts));
}

std::string replace_placeholders(std::string_view content, std::string_view image_text) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = content.find(kImagePlaceholder); at != std::string_view::npos;
       at = content.find(kImagePlaceholder, from)) {
    out.append(content.substr(from, at - from)).append(image_text);
    from = at + kImagePlaceholder.size();
  }
  out.append(content.substr(from));
  return out;
}

// {"role": ..., "content": ...} and the message's other keys as the record has them (a `content`
// among them, null, stands for the record's missing one).
jinja::Value message_value(std::string_view role, jinja::Value content,
                           std::string_view fields_json = {}) {
  jinja::Dict message;
  message.set("role", jinja::Value(role));
  message.set("content", std::move(content));
  if (!fields_json.empty()) {
    const jinja::Value fields = jinja::Value::from_json(fields_json);
    for (const auto& [key, value] : fields.as_dict().entries()) message.set(key, value);
  }
  return jinja::Value(std::move(message));
}

}  // namespace

JinjaChatEncoder::JinjaChatEncoder(std::unique_ptr<const TextTokenizer> tokenizer,
                                   const TokenizerOptions& options,
                                   const std::string& template_source,
                                   std::string_view template_origin, jinja::Dict variables)
    : tokenizer_(std::move(tokenizer)),
      options_(options),
      template_([&] {
        try {
          return jinja::Template(template_source);
        } catch (const jinja::JinjaError& error) {
          throw ConfigError("template_file",
                            std::string(template_origin) + ":" + std::to_string(error.line()) +
                                ":" + std::to_string(error.column()) + ": " + error.message());
        }
      }()),
      variables_(std::move(variables)) {
  const std::chrono::sys_days day =
      options_.template_date
          ? *parse_template_date(*options_.template_date)
          : std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  render_options_.clock = [day] { return std::chrono::system_clock::time_point(day); };
  // The image token is any single token (a sentencepiece model's user-defined piece, too); a
  // tokenizer without one refuses conversations with images.
  image_id_ = tokenizer_->token_to_id(options_.image_piece);
  if (options_.image_content == ImageContent::text)
    image_text_ = options_.image_text.value_or(options_.vision_start_piece + options_.image_piece +
                                               options_.vision_end_piece);
  // Text must not forge what only the template or the images write: special tokens and the
  // vision pieces.
  for (const TokenId id : tokenizer_->special_token_ids())
    if (auto text = tokenizer_->id_to_token(id); text && !text->empty())
      special_texts_.push_back(std::move(*text));
  for (const std::string* piece :
       {&options_.image_piece, &options_.vision_start_piece, &options_.vision_end_piece})
    if (std::find(special_texts_.begin(), special_texts_.end(), *piece) == special_texts_.end())
      special_texts_.push_back(*piece);
}

std::variant<std::vector<jinja::Value>, TokenizeError> JinjaChatEncoder::template_messages(
    const Conversation& conversation) const {
  if (conversation.messages.empty())
    return TokenizeError{TokenizeErrorReason::unsupported_roles,
                         "the conversation has no messages"};
  std::vector<jinja::Value> messages;
  messages.reserve(conversation.messages.size() + 1);
  if (options_.default_system_prompt && conversation.messages.front().role != Role::system)
    messages.push_back(message_value("system", jinja::Value(*options_.default_system_prompt)));
  std::size_t placeholders = 0;
  for (std::size_t index = 0; index < conversation.messages.size(); ++index) {
    const Message& message = conversation.messages[index];
    for (const std::string& special : special_texts_)
      if (message.content.find(special) != std::string::npos)
        return TokenizeError{TokenizeErrorReason::special_piece_in_text,
                             describe_message(index, message) + " holds the special token '" +
                                 special + "' as text"};
    const std::size_t images = count_placeholders(message.content);
    placeholders += images;
    jinja::Value content;
    if (images == 0)
      content = jinja::Value(message.content);
    else if (options_.image_content == ImageContent::parts)
      content = content_parts(message.content);
    else
      content = jinja::Value(replace_placeholders(message.content, image_text_));
    messages.push_back(
        message_value(role_name(message.role), std::move(content), message.fields_json));
  }
  if (placeholders != conversation.images.size())
    return TokenizeError{TokenizeErrorReason::image_mismatch,
                         "the conversation has " + std::to_string(placeholders) + " " +
                             std::string(kImagePlaceholder) + " placeholders but " +
                             std::to_string(conversation.images.size()) + " images"};
  return messages;
}

std::variant<SupervisedRendering, TokenizeError> JinjaChatEncoder::render(
    const Conversation& conversation, const std::map<std::string, std::string>& extra) const {
  auto messages = template_messages(conversation);
  if (auto* error = std::get_if<TokenizeError>(&messages)) return std::move(*error);
  const auto& values = std::get<std::vector<jinja::Value>>(messages);
  try {
    if (extra.empty() && conversation.tools_json.empty() &&
        conversation.template_variables_json.empty())
      return render_supervised(template_, variables_, values, render_options_);
    // Over the configured variables: the record's tools and chat_template_kwargs, then what its
    // record stages set.
    jinja::Dict variables = variables_;
    if (!conversation.tools_json.empty())
      variables.set("tools", jinja::Value::from_json(conversation.tools_json));
    if (!conversation.template_variables_json.empty()) {
      const jinja::Value kwargs = jinja::Value::from_json(conversation.template_variables_json);
      for (const auto& [name, value] : kwargs.as_dict().entries()) variables.set(name, value);
    }
    for (const auto& [name, value] : extra) variables.set(name, jinja::Value(value));
    return render_supervised(template_, variables, values, render_options_);
  } catch (const jinja::JinjaError& error) {
    return TokenizeError{TokenizeErrorReason::template_refused,
                         "the chat template refused the conversation: " + error.message() +
                             " (template line " + std::to_string(error.line()) + ":" +
                             std::to_string(error.column()) + ")"};
  } catch (const SupervisionError& error) {
    // The index counts the default system prompt when one was added.
    const bool added = values.size() > conversation.messages.size();
    const std::size_t index = error.message_index() - (added ? 1 : 0);
    return TokenizeError{
        TokenizeErrorReason::template_refused,
        describe_message(index, conversation.messages[index]) + ": " + error.problem()};
  }
}

TokenizeResult JinjaChatEncoder::tokenize(const Conversation& conversation,
                                          std::span<const std::uint32_t> visual_tokens_per_image,
                                          const std::map<std::string, std::string>& extra) const {
  if (!conversation.images.empty() && !image_id_)
    return TokenizeError{TokenizeErrorReason::image_mismatch,
                         "the conversation has images but image_piece '" + options_.image_piece +
                             "' is not a single token of the tokenizer"};
  auto rendered = render(conversation, extra);
  if (auto* error = std::get_if<TokenizeError>(&rendered)) return std::move(*error);
  const SupervisedRendering& rendering = std::get<SupervisedRendering>(rendered);

  thread_local std::vector<TokenId> ids;
  thread_local std::vector<TokenOffsets> offsets;
  ids.clear();
  offsets.clear();
  try {
    tokenizer_->encode_with_offsets_into(rendering.text, {.recognize_special_tokens = true}, ids,
                                         offsets);
  } catch (const std::invalid_argument& error) {
    return TokenizeError{
        TokenizeErrorReason::template_refused,
        std::string("the rendered conversation cannot be encoded: ") + error.what()};
  }

  TokenizedSample sample;
  const std::size_t limit = options_.max_seq_len;
  sample.input_ids.reserve(std::min<std::size_t>(limit, ids.size()));
  sample.labels.reserve(sample.input_ids.capacity());
  const auto& ranges = rendering.supervised;
  std::size_t range = 0;
  std::size_t image = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == image_id_) {
      const std::string which = "image " + std::to_string(image);
      if (image == visual_tokens_per_image.size())
        return TokenizeError{TokenizeErrorReason::image_mismatch,
                             "the template wrote more image tokens ('" + options_.image_piece +
                                 "') than the conversation has images (" +
                                 std::to_string(visual_tokens_per_image.size()) + ")"};
      const std::uint32_t length = visual_tokens_per_image[image];
      if (length == 0)
        return TokenizeError{TokenizeErrorReason::image_mismatch, which + " has no visual token"};
      if (sample.input_ids.size() + length > limit)
        return TokenizeError{TokenizeErrorReason::over_length,
                             which + " is not wholly within max_seq_len " + std::to_string(limit) +
                                 " tokens" + std::string(kImageOverLengthRemedy)};
      sample.image_spans.push_back({static_cast<std::uint32_t>(sample.input_ids.size()), length});
      sample.input_ids.insert(sample.input_ids.end(), length,
                              static_cast<std::int32_t>(*image_id_));
      sample.labels.insert(sample.labels.end(), length, kIgnoreLabel);
      ++image;
      continue;
    }
    if (sample.input_ids.size() == limit) {
      sample.truncated = true;
      if (std::find(ids.begin() + static_cast<std::ptrdiff_t>(i), ids.end(), *image_id_) !=
          ids.end())
        return TokenizeError{TokenizeErrorReason::over_length,
                             "image " + std::to_string(image) + " lies past max_seq_len " +
                                 std::to_string(limit) + " tokens" +
                                 std::string(kImageOverLengthRemedy)};
      break;
    }
    const TokenOffsets& at = offsets[i];
    while (range < ranges.size() && ranges[range].end <= at.begin) ++range;
    const bool supervised = range < ranges.size() && at.end > at.begin &&
                            at.begin < ranges[range].end && at.end > ranges[range].begin;
    const auto id = static_cast<std::int32_t>(ids[i]);
    sample.input_ids.push_back(id);
    sample.labels.push_back(supervised ? id : kIgnoreLabel);
  }
  if (!sample.truncated && image != visual_tokens_per_image.size())
    return TokenizeError{TokenizeErrorReason::image_mismatch,
                         "the template wrote " + std::to_string(image) + " image tokens ('" +
                             options_.image_piece + "') for " +
                             std::to_string(visual_tokens_per_image.size()) +
                             " images: image_content or image_piece does not match the template"};
  return sample;
}

}  // namespace odbatch
