// Times the chat tokenizer: CPU time per sample and tokens per second for each chat template,
// and the overhead over raw sentencepiece Encode of the same message texts. Conversations come
// from --data FILE (JSONL, ShareGPT or OpenAI chat records; repeatable), by default every
// data/sft/*.jsonl of the source tree, or from the license texts under /usr/share/common-licenses
// when there is no dataset (or with --synthetic).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/text/chat_tokenizer.hpp"

namespace odbatch::bench {
namespace {

namespace fs = std::filesystem;

// A typical Qwen2-VL image: 448 x 448 pixels, 14-pixel patches merged 2 x 2.
constexpr std::uint32_t kVisualTokensPerImage = 256;
constexpr std::uint32_t kMaxSeqLen = 16384;
constexpr std::string_view kLicenseDir = "/usr/share/common-licenses";

struct Options {
  std::string model;
  std::vector<std::string> data;
  bool synthetic = false;
  int repeat = 3;
  std::string out_path;
};

struct Sample {
  Conversation conversation;
  std::vector<std::uint32_t> visual_tokens;
};

struct Corpus {
  std::string source;
  std::vector<std::string> files;
  std::vector<Sample> samples;
  std::uint64_t unparsed_records = 0;
  std::uint64_t images = 0;
  std::uint64_t text_bytes = 0;

  void add(Conversation conversation) {
    images += conversation.images.size();
    for (const auto& message : conversation.messages) text_bytes += message.content.size();
    std::vector<std::uint32_t> visual_tokens(conversation.images.size(), kVisualTokensPerImage);
    samples.push_back({std::move(conversation), std::move(visual_tokens)});
  }
};

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// The least CPU time of `repeat` passes: the one least disturbed by other load.
template <class Pass>
double best_cpu_seconds(int repeat, Pass&& pass) {
  double best = 0;
  for (int i = 0; i < repeat; ++i) {
    const double start = thread_cpu_seconds();
    pass();
    const double seconds = thread_cpu_seconds() - start;
    if (i == 0 || seconds < best) best = seconds;
  }
  return best;
}

std::optional<Role> role_named(std::string_view name) {
  if (name == "system") return Role::system;
  if (name == "user" || name == "human") return Role::user;
  if (name == "assistant" || name == "gpt") return Role::assistant;
  return std::nullopt;
}

// Just enough of the two record styles to time the tokenizer; the pipeline's own parser is
// what validates datasets.
std::optional<Conversation> parse_record(std::string_view line) {
  const auto record = nlohmann::json::parse(line, nullptr, false);
  if (!record.is_object()) return std::nullopt;
  const bool sharegpt = record.contains("conversations");
  const auto& turns =
      sharegpt ? record["conversations"] : record.value("messages", nlohmann::json());
  if (!turns.is_array()) return std::nullopt;
  Conversation conversation;
  for (const auto& turn : turns) {
    const auto role = turn.value(sharegpt ? "from" : "role", nlohmann::json());
    const auto content = turn.value(sharegpt ? "value" : "content", nlohmann::json());
    if (!role.is_string() || !content.is_string()) return std::nullopt;
    const auto parsed_role = role_named(role.get<std::string>());
    if (!parsed_role) return std::nullopt;
    conversation.messages.push_back({*parsed_role, content.get<std::string>()});
  }
  if (const auto image = record.value("image", nlohmann::json()); image.is_string())
    conversation.images.push_back(image.get<std::string>());
  if (const auto images = record.value("images", nlohmann::json()); images.is_array())
    for (const auto& image : images) {
      if (!image.is_string()) return std::nullopt;
      conversation.images.push_back(image.get<std::string>());
    }
  return conversation;
}

Corpus dataset_corpus(const std::vector<std::string>& files) {
  Corpus corpus;
  corpus.source = "jsonl";
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file);
    corpus.files.push_back(file);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      if (auto conversation = parse_record(line))
        corpus.add(std::move(*conversation));
      else
        ++corpus.unparsed_records;
    }
  }
  return corpus;
}

// Question/answer conversations over the license texts' paragraphs, one image in every fourth.
Corpus license_corpus() {
  Corpus corpus;
  corpus.source = std::string(kLicenseDir) + " (synthetic conversations)";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kLicenseDir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    corpus.files.push_back(file.string());
    std::ifstream in(file);
    std::vector<std::string> paragraphs(1);
    for (std::string line; std::getline(in, line);) {
      if (line.find_first_not_of(" \t") == std::string::npos) {
        if (!paragraphs.back().empty()) paragraphs.emplace_back();
      } else {
        paragraphs.back() += line + "\n";
      }
    }
    for (std::size_t i = 0; i + 1 < paragraphs.size(); i += 2) {
      Conversation conversation;
      conversation.messages.push_back({Role::system, "You explain software licenses."});
      const bool with_image = corpus.samples.size() % 4 == 0;
      conversation.messages.push_back(
          {Role::user, std::string(with_image ? "<image>\n" : "") + "What follows this in " +
                           file.filename().string() + "?\n" + paragraphs[i]});
      conversation.messages.push_back({Role::assistant, paragraphs[i + 1]});
      if (with_image) conversation.images.push_back("page.jpg");
      corpus.add(std::move(conversation));
    }
  }
  return corpus;
}

// A unigram model with the chat and vision pieces, trained on the license texts.
std::string train_license_model() {
  const fs::path directory = fs::temp_directory_path() / "odbatch_tokenize_bench";
  fs::create_directories(directory);
  std::string inputs;
  for (const auto& entry : fs::directory_iterator(kLicenseDir))
    if (entry.is_regular_file()) inputs += (inputs.empty() ? "" : ",") + entry.path().string();
  const std::unordered_map<std::string, std::string> arguments{
      {"input", inputs},
      {"model_prefix", (directory / "licenses").string()},
      {"vocab_size", "4000"},
      {"hard_vocab_limit", "false"},
      {"model_type", "unigram"},
      {"user_defined_symbols",
       "<|im_start|>,<|im_end|>,<|vision_start|>,<|vision_end|>,<|image_pad|>"},
      {"num_threads", "1"},
      {"minloglevel", "2"},
  };
  const auto status = sentencepiece::SentencePieceTrainer::Train(arguments);
  if (!status.ok()) throw std::runtime_error("training a model failed: " + status.ToString());
  return (directory / "licenses.model").string();
}

// Raw Encode of exactly the texts the tokenizer encodes from the messages: each content's runs
// between image placeholders, one call each, into one reused vector.
std::uint64_t encode_message_texts(const sentencepiece::SentencePieceProcessor& processor,
                                   const Corpus& corpus) {
  std::vector<int> ids;
  std::uint64_t tokens = 0;
  for (const auto& sample : corpus.samples)
    for (const auto& message : sample.conversation.messages) {
      const std::string_view content = message.content;
      for (std::size_t start = 0; start <= content.size();) {
        const auto end = std::min(content.find(kImagePlaceholder, start), content.size());
        if (end > start) {
          if (!processor.Encode(content.substr(start, end - start), &ids).ok())
            throw std::runtime_error("Encode failed");
          tokens += ids.size();
        }
        start = end + kImagePlaceholder.size();
      }
    }
  return tokens;
}

struct TemplateRun {
  std::uint64_t tokens = 0;  // input_ids of accepted samples, image blocks included
  std::uint64_t image_block_tokens = 0;
  std::uint64_t supervised_targets = 0;
  std::uint64_t truncated = 0;
  std::map<std::string, std::uint64_t> errors;
};

TemplateRun tokenize_corpus(const ChatTokenizer& tokenizer, const Corpus& corpus) {
  TemplateRun run;
  for (const auto& sample : corpus.samples) {
    const auto result = tokenizer.tokenize(sample.conversation, sample.visual_tokens);
    if (const auto* error = std::get_if<TokenizeError>(&result)) {
      ++run.errors[std::string(to_string(error->reason))];
      continue;
    }
    const auto& tokenized = std::get<TokenizedSample>(result);
    run.tokens += tokenized.input_ids.size();
    for (const auto& image : tokenized.image_spans) run.image_block_tokens += image.length + 2;
    run.supervised_targets += tokenized.supervised_targets;
    run.truncated += tokenized.truncated ? 1 : 0;
  }
  return run;
}

int run(Options options) {
  const fs::path source_dir = ODBATCH_SOURCE_DIR;
  if (options.data.empty() && !options.synthetic && fs::is_directory(source_dir / "data/sft")) {
    for (const auto& entry : fs::directory_iterator(source_dir / "data/sft"))
      if (entry.path().extension() == ".jsonl") options.data.push_back(entry.path().string());
    std::sort(options.data.begin(), options.data.end());
  }
  const fs::path dataset_model = source_dir / "data/tokenizer/odbatch-unigram-8k.model";
  if (options.model.empty())
    options.model = !options.synthetic && fs::exists(dataset_model) ? dataset_model.string()
                                                                    : train_license_model();
  const Corpus corpus = options.data.empty() ? license_corpus() : dataset_corpus(options.data);
  if (corpus.samples.empty()) throw std::runtime_error("no conversations to tokenize");

  sentencepiece::SentencePieceProcessor processor;
  if (const auto status = processor.Load(options.model); !status.ok())
    throw std::runtime_error(options.model + ": " + status.ToString());

  const auto samples = static_cast<double>(corpus.samples.size());
  Report report;
  report["benchmark"] = "tokenize";
  report["model"] = options.model;
  report["model_pieces"] = processor.GetPieceSize();
  report["corpus"] = {{"source", corpus.source},
                      {"files", corpus.files},
                      {"conversations", corpus.samples.size()},
                      {"unparsed_records", corpus.unparsed_records},
                      {"images", corpus.images},
                      {"text_bytes", corpus.text_bytes}};
  report["visual_tokens_per_image"] = kVisualTokensPerImage;
  report["max_seq_len"] = kMaxSeqLen;
  report["repeat"] = options.repeat;
  report["cpu_time"] = "thread CPU seconds, best of repeat passes over the corpus";

  std::uint64_t raw_tokens = 0;
  const double raw_seconds = best_cpu_seconds(
      options.repeat, [&] { raw_tokens = encode_message_texts(processor, corpus); });
  report["raw_encode"] = {
      {"cpu_s", rounded(raw_seconds, 4)},
      {"cpu_us_per_sample", rounded(raw_seconds / samples * 1e6, 2)},
      {"tokens", raw_tokens},
      {"tokens_per_s", rounded(static_cast<double>(raw_tokens) / raw_seconds, 0)},
      {"mb_per_s", rounded(static_cast<double>(corpus.text_bytes) / raw_seconds / 1e6, 2)}};

  Report templates = Report::array();
  for (const auto chat_template : {ChatTemplate::chatml, ChatTemplate::llama2}) {
    TokenizerOptions tokenizer_options;
    tokenizer_options.chat_template = chat_template;
    tokenizer_options.max_seq_len = kMaxSeqLen;
    const ChatTokenizer tokenizer(options.model, tokenizer_options);
    TemplateRun result;
    const double seconds =
        best_cpu_seconds(options.repeat, [&] { result = tokenize_corpus(tokenizer, corpus); });
    const auto text_tokens = result.tokens - result.image_block_tokens;
    templates.push_back(
        {{"template", to_string(chat_template)},
         {"cpu_s", rounded(seconds, 4)},
         {"cpu_us_per_sample", rounded(seconds / samples * 1e6, 2)},
         {"tokens", result.tokens},
         {"tokens_per_s", rounded(static_cast<double>(result.tokens) / seconds, 0)},
         {"text_tokens", text_tokens},
         {"text_tokens_per_s", rounded(static_cast<double>(text_tokens) / seconds, 0)},
         {"supervised_targets", result.supervised_targets},
         {"truncated_samples", result.truncated},
         {"errors", result.errors},
         {"overhead_vs_raw_encode", rounded(seconds / raw_seconds, 3)}});
  }
  report["templates"] = std::move(templates);
  emit_report(report, options.out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  odbatch::bench::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--model" && has_value) {
      options.model = argv[++i];
    } else if (arg == "--data" && has_value) {
      options.data.emplace_back(argv[++i]);
    } else if (arg == "--synthetic") {
      options.synthetic = true;
    } else if (arg == "--repeat" && has_value) {
      options.repeat = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--out" && has_value) {
      options.out_path = argv[++i];
    } else {
      std::cerr << "usage: " << argv[0]
                << " [--model FILE] [--data FILE]... [--synthetic] [--repeat N (3)] [--out FILE]\n";
      return 2;
    }
  }
  try {
    return odbatch::bench::run(std::move(options));
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
