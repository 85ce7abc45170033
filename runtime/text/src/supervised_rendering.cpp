#include "odbatch/text/supervised_rendering.hpp"

#include <string_view>
#include <utility>

namespace odbatch {
namespace {

bool is_assistant(const jinja::Value& message) {
  if (!message.is_dict()) return false;
  const jinja::Value* role = message.as_dict().find("role");
  return role != nullptr && role->is_string() && role->as_string() == "assistant";
}

bool is_trailing_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

class PrefixRenderer {
 public:
  PrefixRenderer(const jinja::Template& chat_template, const jinja::Dict& variables,
                 const std::vector<jinja::Value>& messages, const jinja::RenderOptions& options)
      : template_(chat_template), variables_(variables), messages_(messages), options_(options) {}

  // The rendering of the first `count` messages.
  jinja::RenderResult render(std::size_t count, bool add_generation_prompt) const {
    jinja::Dict variables = variables_;
    variables.set("messages",
                  jinja::Value(std::vector<jinja::Value>(
                      messages_.begin(), messages_.begin() + static_cast<std::ptrdiff_t>(count))));
    variables.set("add_generation_prompt", jinja::Value(add_generation_prompt));
    return template_.render(variables, options_);
  }

 private:
  const jinja::Template& template_;
  const jinja::Dict& variables_;
  const std::vector<jinja::Value>& messages_;
  const jinja::RenderOptions& options_;
};

}  // namespace

SupervisionError::SupervisionError(std::size_t message_index, const std::string& problem)
    : std::runtime_error("message " + std::to_string(message_index) + ": " + problem),
      message_index_(message_index),
      problem_(problem) {}

SupervisedRendering render_supervised(const jinja::Template& chat_template,
                                      const jinja::Dict& variables,
                                      const std::vector<jinja::Value>& messages,
                                      const jinja::RenderOptions& options) {
  const PrefixRenderer renderer(chat_template, variables, messages, options);
  jinja::RenderResult whole = renderer.render(messages.size(), false);
  SupervisedRendering result;
  if (!whole.generation_ranges.empty()) {
    result.supervised = std::move(whole.generation_ranges);
    result.text = std::move(whole.text);
    return result;
  }
  const std::string_view text = whole.text;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (!is_assistant(messages[i])) continue;
    const auto render_prefix = [&](std::size_t count, bool prompt) {
      try {
        return renderer.render(count, prompt).text;
      } catch (const jinja::JinjaError& error) {
        throw SupervisionError(i, "the template cannot render the conversation up to it (" +
                                      std::string(error.what()) + ")");
      }
    };
    const std::string prompt = render_prefix(i, true);
    const std::string answered = render_prefix(i + 1, false);
    if (!text.starts_with(answered))
      throw SupervisionError(i,
                             "the conversation up to this assistant message renders differently "
                             "from the start of the whole conversation: the template rewrites "
                             "earlier turns, so its supervised text cannot be found");
    if (!std::string_view(answered).starts_with(prompt))
      throw SupervisionError(i,
                             "the generation prompt before this assistant message is not where "
                             "its rendering starts, so its supervised text cannot be found");
    std::size_t end = answered.size();
    while (end > prompt.size() && is_trailing_space(answered[end - 1])) --end;
    if (end > prompt.size()) result.supervised.push_back({prompt.size(), end});
  }
  result.text = std::move(whole.text);
  return result;
}

}  // namespace odbatch
