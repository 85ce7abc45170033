#include "render_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
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
  std::string location;  // "file:line"
  std::string text;
};

std::vector<SourceRecord> read_records(const std::filesystem::path& file,
                                       std::optional<std::size_t> only_line) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw RenderInputError(file.string() + ": cannot read");
  std::vector<SourceRecord> records;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (only_line && number != *only_line) continue;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    records.push_back({file.string() + ":" + std::to_string(number), line});
    if (only_line) break;
  }
  if (only_line && records.empty())
    throw RenderInputError(file.string() + ": no record at line " + std::to_string(*only_line));
  return records;
}

std::vector<SourceRecord> records_of(const RenderOptions& options, const PipelineConfig& config) {
  if (options.record) {
    const auto colon = options.record->rfind(':');
    if (colon == std::string::npos || colon + 1 == options.record->size())
      throw RenderInputError("--record " + *options.record + ": expected FILE:LINE");
    std::size_t line = 0;
    for (const char c : options.record->substr(colon + 1)) {
      if (c < '0' || c > '9' || line > 1'000'000'000)
        throw RenderInputError("--record " + *options.record + ": LINE is not a line number");
      line = line * 10 + static_cast<std::size_t>(c - '0');
    }
    if (line == 0) throw RenderInputError("--record " + *options.record + ": lines count from 1");
    return read_records(options.record->substr(0, colon), line);
  }
  if (options.records_file) return read_records(*options.records_file, std::nullopt);
  if (config.source.files.empty()) throw RenderInputError("the config names no source file");
  return read_records(config.source.files.front(), 1);
}

// Each image's visual token count, from its header (JPEG, PNG or WebP) and the config's geometry,
// as the pipeline's image decoder fixes it.
std::vector<std::uint32_t> visual_tokens(const Conversation& conversation,
                                         const PipelineConfig& config) {
  std::vector<std::uint32_t> tokens;
  ImageDecoder decoder(config.images.decoder_limits);
  for (const std::string& image : conversation.images) {
    const std::filesystem::path path = config.source.image_root / image;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw RenderInputError(path.string() + ": cannot read the image");
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    const auto header = decoder.read_header(bytes);
    if (!header) throw RenderInputError(path.string() + ": " + header.error().message);
    const auto target =
        smart_resize(header.value().height, header.value().width, config.images.geometry);
    if (!target) throw RenderInputError(path.string() + ": " + target.error().message);
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
    const auto parsed = parse_conversation(record.text, record.location);
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
      visual = visual_tokens(conversation, *config);
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
    report["records"] = std::move(all);
    std::cout << to_readable_json(report) << '\n';
  }
  return status;
}

}  // namespace odbatch::cli
