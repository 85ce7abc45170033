#pragma once
// Which parts of a rendered conversation a model is trained on, found by rendering rather than by
// per-template code, so that any chat template gets assistant-only labels:
// - A template with {% generation %} blocks marks them itself: they are supervised.
// - Otherwise each assistant message i is the text between the rendering of messages[:i] with the
//   generation prompt (what the model sees before it answers) and the rendering of
//   messages[:i+1] without it, less the whitespace at its end (ChatML's "\n" after <|im_end|>: a
//   model stops at its end-of-turn token and never generates what follows). Both renderings
//   must be prefixes of the whole conversation's, or the conversation is refused with a
//   SupervisionError: a template that rewrites earlier turns when later ones follow (one that
//   drops past reasoning, say) cannot be supervised this way.
// docs/chat-templates.md states the rule and its limits.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "odbatch/text/jinja_template.hpp"

namespace odbatch {

class SupervisionError : public std::runtime_error {
 public:
  SupervisionError(std::size_t message_index, const std::string& problem);
  std::size_t message_index() const { return message_index_; }
  const std::string& problem() const { return problem_; }

 private:
  std::size_t message_index_;
  std::string problem_;
};

struct SupervisedRendering {
  std::string text;
  std::vector<jinja::TextRange> supervised;  // ascending, not overlapping
};

// Renders `messages` (dicts with a "role") with `variables` (bos_token, tools, ...; messages and
// add_generation_prompt are set here). Throws jinja::JinjaError from the template and
// SupervisionError.
SupervisedRendering render_supervised(const jinja::Template& chat_template,
                                      const jinja::Dict& variables,
                                      const std::vector<jinja::Value>& messages,
                                      const jinja::RenderOptions& options = {});

}  // namespace odbatch
