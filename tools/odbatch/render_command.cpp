#include "render_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "json_output.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/vision_geometry.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/dataset_paths.hpp"
#include "odbatch/source/record_reader.hpp"
#include "odbatch/source/tar_sample.hpp"
#include "odbatch/text/chat_tokenizer.hpp"

namespace odbatch::cli {
namespace {

constexpr const char* kSupervisedColor = "\x1b[32m";  // green
constexpr const char* kImageColor = "\x1b[35m";       // magenta
constexpr const char* kResetColor = "\x1b[0m";

struct RenderInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SourceRecord {
  std::string
      location;  // as the pipeline's messages say: "file:line", "file[n]@offset", "shard:key"
  std::string text;
  bool tar_sample = false;
  std::vector<TarMember> members;         // a tar sample's members besides its record: its images
  std::optional<RecordRejection> unread;  // why the reader rejected it, as a pipeline would
};

SourceRecord source_record(Record record) {
  const bool tar_sample = !record.key.empty();
  return {record.where(), std::move(record.text), tar_sample, std::move(record.members), {}};
}

// Which record of a file to read, by its id or by what reading it tells.
struct RecordSelector {
  std::string spec;  // for messages
  std::function<bool(const DatasetIndex&, SampleId, const Record&)> matches;
};

// The records of `file` (JSON Lines, JSON array or tar shard) read through the dataset index as
// the pipeline reads them: all of them, or the first that `select` matches.
std::vector<SourceRecord> read_records(const std::string& file, const PipelineConfig& config,
                                       const std::optional<RecordSelector>& select) {
  const std::vector<std::string> files = {file};
  const auto index = std::make_shared<const DatasetIndex>(
      DatasetIndex::build(files, dataset_index_options(config.source)));
  const RecordReader reader(index, config.source.reader);
  std::vector<SourceRecord> records;
  for (SampleId id = 0; id < index->record_count(); ++id) {
    auto read = reader.read(id);
    if (auto* rejection = std::get_if<RecordRejection>(&read)) {
      if (!select) records.push_back({index->describe(id), {}, false, {}, std::move(*rejection)});
      continue;  // with a selector: not a record it can match
    }
    auto& record = std::get<Record>(read);
    if (!select) {
      records.push_back(source_record(std::move(record)));
    } else if (select->matches(*index, id, record)) {
      return {source_record(std::move(record))};
    }
  }
  if (select) throw RenderInputError(file + ": no record " + select->spec);
  return records;
}

// --record FILE:LINE (JSON Lines, lines from 1), FILE[N] (the N-th element of a JSON array or
// sample of a tar shard, from 0, as locations print them) or SHARD:KEY (a tar sample's key).
std::vector<SourceRecord> read_one_record(const std::string& spec, const PipelineConfig& config) {
  const auto bad = [&](const std::string& why) {
    return RenderInputError("--record " + spec + ": " + why);
  };
  const auto number = [&](std::string_view digits) {
    std::size_t value = 0;
    if (digits.empty()) throw bad("expected FILE:LINE, FILE[N] or SHARD:KEY");
    for (const char c : digits) {
      if (c < '0' || c > '9' || value > 1'000'000'000) return std::optional<std::size_t>();
      value = value * 10 + static_cast<std::size_t>(c - '0');
    }
    return std::optional<std::size_t>(value);
  };
  if (spec.ends_with("]")) {
    const auto open = spec.rfind('[');
    const auto n = open == std::string::npos
                       ? std::nullopt
                       : number(std::string_view(spec).substr(open + 1, spec.size() - open - 2));
    if (!n) throw bad("N in FILE[N] is not a number");
    return read_records(
        spec.substr(0, open), config,
        RecordSelector{"[" + std::to_string(*n) + "]",
                       [n](const DatasetIndex&, SampleId id, const Record&) { return id == *n; }});
  }
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon + 1 == spec.size())
    throw bad("expected FILE:LINE, FILE[N] or SHARD:KEY");
  const std::string file = spec.substr(0, colon);
  const std::string after = spec.substr(colon + 1);
  if (const auto line = number(after)) {
    if (*line == 0) throw bad("lines count from 1");
    return read_records(
        file, config,
        RecordSelector{"at line " + after,
                       [line, after](const DatasetIndex&, SampleId, const Record& r) {
                         // A shard's keys are often numbers: "000017".
                         return r.key.empty() ? r.line == *line : r.key == after;
                       }});
  }
  return read_records(
      file, config,
      RecordSelector{"with the key " + after, [after](const DatasetIndex&, SampleId,
                                                      const Record& r) { return r.key == after; }});
}

std::vector<SourceRecord> records_of(const RenderOptions& options, const PipelineConfig& config) {
  if (options.record) return read_one_record(*options.record, config);
  if (options.records_file)
    return read_records(options.records_file->string(), config, std::nullopt);
  if (config.source.files.empty()) throw RenderInputError("the config names no source file");
  const auto files = expand_dataset_paths(config.source.files);
  return read_records(
      files.front(), config,
      RecordSelector{"", [](const DatasetIndex&, SampleId, const Record&) { return true; }});
}

// The bytes of each image of a record: a file under the image root, or a tar sample's member.
std::vector<std::uint8_t> image_bytes(const SourceRecord& record, const std::string& image,
                                      const PipelineConfig& config) {
  if (record.tar_sample) {
    if (const auto* member = find_member(record.members, image)) return member->bytes;
    throw RenderInputError("image " + image + ": the sample has no such member");
  }
  const std::filesystem::path path = config.source.image_root / image;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RenderInputError(path.string() + ": cannot read the image");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Each image's visual token count, from its header (JPEG, PNG or WebP) and the config's geometry,
// as the pipeline's image decoder fixes it.
std::vector<std::uint32_t> visual_tokens(const SourceRecord& record,
                                         const Conversation& conversation,
                                         const PipelineConfig& config) {
  std::vector<std::uint32_t> tokens;
  ImageDecoder decoder(config.images.decoder_limits);
  for (const std::string& image : conversation.images) {
    const auto bytes = image_bytes(record, image, config);
    const auto header = decoder.read_header(bytes);
    if (!header) throw RenderInputError("image " + image + ": " + header.error().message);
    const auto target =
        smart_resize(header.value().height, header.value().width, config.images.geometry);
    if (!target) throw RenderInputError("image " + image + ": " + target.error().message);
    tokens.push_back(target.value().grid.tokens);
  }
  return tokens;
}

// The text with its supervised ranges coloured (or, without colour, bracketed by ⟦ ⟧).
void print_text(const SupervisedRendering& rendering, bool color) {
  std::size_t at = 0;
  for (const auto& range : rendering.supervised) {
    std::cout << rendering.text.substr(at, range.begin - at)
              << (color ? kSupervisedColor : "\u27e6")
              << rendering.text.substr(range.begin, range.end - range.begin)
              << (color ? kResetColor : "\u27e7");
    at = range.end;
  }
  std::cout << rendering.text.substr(at) << '\n';
}

// A piece as one printable cell: control characters escaped.
std::string printable(const std::string& piece) {
  std::string out;
  for (const char c : piece) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

bool in_image(const TokenizedSample& sample, std::size_t position) {
  for (const ImageSpan& span : sample.image_spans)
    if (position >= span.offset && position < span.offset + span.length) return true;
  return false;
}

void print_tokens(const ChatTokenizer& tokenizer, const TokenizedSample& sample, bool color) {
  std::cout << "tokens: " << sample.input_ids.size() << ", supervised targets "
            << sample.supervised_targets << (sample.truncated ? ", truncated" : "") << '\n';
  std::cout << "   pos        id  L  piece\n";
  for (std::size_t i = 0; i < sample.input_ids.size();) {
    const auto id = static_cast<std::uint32_t>(sample.input_ids[i]);
    const bool supervised = sample.labels[i] != kIgnoreLabel;
    std::size_t run = 1;
    if (in_image(sample, i))
      while (i + run < sample.input_ids.size() && sample.input_ids[i + run] == sample.input_ids[i])
        ++run;
    char head[64];
    std::snprintf(head, sizeof head, "%6zu  %8u  %s  ", i, id, supervised ? "*" : " ");
    const char* paint = supervised ? kSupervisedColor : run > 1 ? kImageColor : nullptr;
    std::cout << head << (color && paint ? paint : "") << printable(tokenizer.token_text(id))
              << (run > 1 ? " x" + std::to_string(run) + " (image)" : "")
              << (color && paint ? kResetColor : "") << '\n';
    i += run;
  }
}

// The image settings in effect (from [images] and its preprocessor_config file), which decide
// the records' image token counts and pixels.
Report images_report(const ImageStageConfig& images) {
  const auto& g = images.geometry;
  const auto& p = images.pixel_values;
  return {{"patch_size", g.patch_size},
          {"merge_size", g.merge_size},
          {"min_pixels", g.min_pixels},
          {"max_pixels", g.max_pixels},
          {"temporal_patch_size", p.temporal_patch_size},
          {"rescale_factor", p.rescale_factor},
          {"image_mean", p.image_mean},
          {"image_std", p.image_std},
          {"pixel_values", std::string(to_string(p.dtype))},
          {"jpeg_dct_scaling", images.decoder_limits.jpeg_dct_scaling}};
}

Report json_of(const SourceRecord& record, const ChatTokenizer& tokenizer,
               const std::variant<SupervisedRendering, TokenizeError>& rendering,
               const TokenizeResult& result) {
  Report out;
  out["record"] = record.location;
  const auto* error = std::get_if<TokenizeError>(&result);
  if (const auto* refused = std::get_if<TokenizeError>(&rendering)) error = refused;
  if (error) {
    out["error"] = {{"reason", to_string(error->reason)}, {"message", error->message}};
    return out;
  }
  const auto& rendered = std::get<SupervisedRendering>(rendering);
  const auto& sample = std::get<TokenizedSample>(result);
  out["text"] = rendered.text;
  Report ranges = Report::array();
  for (const auto& range : rendered.supervised) ranges.push_back({range.begin, range.end});
  out["supervised_ranges"] = ranges;
  out["input_ids"] = sample.input_ids;
  out["labels"] = sample.labels;
  Report pieces = Report::array();
  for (const auto id : sample.input_ids)
    pieces.push_back(tokenizer.token_text(static_cast<std::uint32_t>(id)));
  out["pieces"] = pieces;
  Report images = Report::array();
  for (const ImageSpan& span : sample.image_spans)
    images.push_back({{"offset", span.offset}, {"length", span.length}});
  out["image_spans"] = images;
  out["supervised_targets"] = sample.supervised_targets;
  out["truncated"] = sample.truncated;
  return out;
}

}  // namespace

int run_render_command(const RenderOptions& options) {
  std::optional<PipelineConfig> config;
  std::optional<ChatTokenizer> tokenizer;
  std::vector<SourceRecord> records;
  try {
    config = PipelineConfig::from_toml_file(options.config);
    tokenizer.emplace(config->tokenizer.model, effective_tokenizer_options(*config));
    records = records_of(options, *config);
  } catch (const std::exception& e) {
    std::cerr << "odbatch render: " << e.what() << '\n';
    return 2;
  }
  const bool color = options.color.value_or(isatty(STDOUT_FILENO) == 1);
  int status = 0;
  Report all = Report::array();
  for (const SourceRecord& record : records) {
    // A tar sample's image members are its images when its record names none, as in a pipeline.
    if (record.unread) {
      if (options.json)
        all.push_back({{"record", record.location},
                       {"error",
                        {{"reason", to_string(record.unread->reason)},
                         {"message", record.unread->message}}}});
      else
        std::cout << "== " << record.location << ": refused: " << record.unread->message << "\n\n";
      status = 1;
      continue;
    }
    std::vector<std::string> member_images;
    for (const auto* member : implicit_images(record.members))
      member_images.push_back(member->extension);
    const auto parsed = parse_conversation(record.text, record.location, member_images);
    if (const auto* rejection = std::get_if<RecordRejection>(&parsed)) {
      if (options.json)
        all.push_back({{"record", record.location},
                       {"error", {{"reason", "bad_record"}, {"message", rejection->message}}}});
      else
        std::cout << "== " << record.location << ": refused: " << rejection->message << "\n\n";
      status = 1;
      continue;
    }
    const auto& conversation = std::get<Conversation>(parsed);
    std::vector<std::uint32_t> visual;
    try {
      visual = visual_tokens(record, conversation, *config);
    } catch (const RenderInputError& e) {
      std::cerr << "odbatch render: " << record.location << ": " << e.what() << '\n';
      return 2;
    }
    const auto rendering = tokenizer->render(conversation, visual);
    const TokenizeResult result = tokenizer->tokenize(conversation, visual);
    if (options.json) {
      all.push_back(json_of(record, *tokenizer, rendering, result));
      if (all.back().contains("error")) status = 1;
      continue;
    }
    std::cout << "== " << record.location << " (" << conversation.messages.size() << " messages, "
              << conversation.images.size() << " images)\n";
    const auto* error = std::get_if<TokenizeError>(&result);
    if (const auto* refused = std::get_if<TokenizeError>(&rendering)) error = refused;
    if (error) {
      std::cout << "refused (" << to_string(error->reason) << "): " << error->message << "\n\n";
      status = 1;
      continue;
    }
    print_text(std::get<SupervisedRendering>(rendering), color);
    std::cout << '\n';
    print_tokens(*tokenizer, std::get<TokenizedSample>(result), color);
    std::cout << '\n';
  }
  if (options.json) {
    Report report = command_report("render");
    report["images"] = images_report(config->images);
    report["records"] = std::move(all);
    std::cout << to_readable_json(report) << '\n';
  }
  return status;
}

}  // namespace odbatch::cli
