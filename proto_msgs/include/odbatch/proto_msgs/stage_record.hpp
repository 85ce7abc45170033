#pragma once
// A record as record stages see and change it (odbatch/stage.hpp): after parsing, before
// tokenization. Its images are named with the size their file's header declares, so a stage can
// decide from it (an aspect-ratio filter) before anything is decoded.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "odbatch/core/conversation.hpp"
#include "odbatch/core/sample.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"

namespace odbatch {

struct StageImage {
  // Relative to source.image_root, or a WebDataset sample's member name. A stage may drop or
  // reorder images (with their <image> placeholders) or name another file; a path it adds is
  // read after the stages.
  std::string path;
  // As the file's header declares them; 0 for a path a stage added (not read yet).
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  // Set by a stage: the rectangle of the source (within width x height) the image is cut to
  // before it is resized; its visual tokens follow from the crop's size. The image is then
  // decoded at full size.
  std::optional<ImageCrop> crop = std::nullopt;

  friend bool operator==(const StageImage&, const StageImage&) = default;
};

struct StageRecord {
  SampleId id = 0;
  std::string where;         // "file:line", for messages
  std::uint32_t source = 0;  // 0: source.files; i: the i-th [[source.mix]] entry
  // Each user message holds one <image> placeholder per image, in the order of `images`.
  std::vector<Message> messages;
  std::vector<StageImage> images;
  // The record's top-level keys other than its conversation and images, each value as its JSON
  // text ("\"wiki\"", "42", "{\"a\": 1}").
  std::map<std::string, std::string> fields;
  // Variables the chat template sees for this record, beside messages and the special tokens
  // (a Jinja template only).
  std::map<std::string, std::string> template_variables;
  // The record's tools and its own template variables (`chat_template_kwargs`), as JSON text
  // (Conversation's tools_json and template_variables_json); empty: none.
  std::string tools_json;
  std::string template_kwargs_json;

  friend bool operator==(const StageRecord&, const StageRecord&) = default;
};

}  // namespace odbatch
