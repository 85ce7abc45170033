// Encode throughput of odbatch's byte-level BPE (tokenizer.json) and tiktoken tokenizers, single
// thread, in MB/s of the dataset's message text (also with token offsets), side by side with the
// reference libraries timed in the same run: Hugging Face's `tokenizers` (Rust, through its Node
// binding) and js-tiktoken. The tokenizers, the texts and the npm packages are those the oracle
// tests' fixture (tests/runtime/text/tokenizer_oracles.sh) writes into the build tree; run `ctest
// -R text.tokenizer_oracles` once first. The references run in node
// (bench/text_tokenizer_bench.js), timed inside node so that its start-up is not counted.
#include <time.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/text/hf_tokenizer.hpp"
#include "odbatch/text/tiktoken_tokenizer.hpp"

namespace odbatch::bench {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTokenizers = {"qwen2", "llama3",      "gpt2",
                                              "nemo",  "cl100k_base", "o200k_base"};

struct Options {
  fs::path oracle_dir = ODBATCH_TOKENIZER_ORACLE_DIR;
  int repeat = 5;
  bool references = true;
  std::string out_path;
};

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

std::unique_ptr<TextTokenizer> load(const fs::path& dir, const std::string& name) {
  if (fs::exists(dir / (name + ".json"))) return load_hf_tokenizer(dir / (name + ".json"));
  TiktokenOptions options;
  options.pattern = tiktoken_pattern_preset(name);
  std::ifstream specials_file(dir / (name + ".specials.json"));
  const auto specials = nlohmann::json::parse(specials_file);
  for (const auto& [special, id] : specials.items())
    options.special_tokens.emplace_back(special, id.get<TokenId>());
  return load_tiktoken(dir / (name + ".tiktoken"), options);
}

// The reference libraries' timings, or a note saying why there are none.
Report reference_timings(const Options& options) {
  std::string command = "TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1 node '" +
                        std::string(ODBATCH_SOURCE_DIR) + "/bench/text_tokenizer_bench.js' '" +
                        (options.oracle_dir / "npm").string() + "' '" +
                        options.oracle_dir.string() + "' " + std::to_string(options.repeat);
  for (const auto& name : kTokenizers) command += " " + name;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {{"skipped", "cannot start node"}};
  std::string output;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  if (pclose(pipe) != 0) return {{"skipped", "node failed: " + command}};
  return Report::parse(output);
}

int run(const Options& options) {
  std::vector<std::string> texts;
  std::ifstream in(options.oracle_dir / "dataset.jsonl");
  if (!in)
    throw std::runtime_error("no " + (options.oracle_dir / "dataset.jsonl").string() +
                             ": run ctest -R text.tokenizer_oracles first");
  std::uint64_t bytes = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    texts.push_back(nlohmann::json::parse(line).get<std::string>());
    bytes += texts.back().size();
  }

  Report report;
  report["bench"] = "text_tokenizer";
  report["texts"] = texts.size();
  report["text_bytes"] = bytes;
  report["repeat"] = options.repeat;
  const Report references = options.references ? reference_timings(options) : Report();
  Report results = Report::array();
  for (const std::string& name : kTokenizers) {
    const auto tokenizer = load(options.oracle_dir, name);
    std::vector<TokenId> ids;
    double best = 1e300, first = 0;
    std::uint64_t tokens = 0;
    for (int pass = 0; pass < options.repeat; ++pass) {
      tokens = 0;
      const double start = thread_cpu_seconds();
      for (const std::string& text : texts) {
        ids.clear();
        tokenizer->encode_into(text, {}, ids);
        tokens += ids.size();
      }
      const double seconds = thread_cpu_seconds() - start;
      if (pass == 0) first = seconds;
      best = std::min(best, seconds);
    }
    // The same with each token's byte range (encode_with_offsets_into), the word cache warm.
    std::vector<TokenOffsets> offsets;
    double best_with_offsets = 1e300;
    for (int pass = 0; pass < options.repeat; ++pass) {
      const double start = thread_cpu_seconds();
      for (const std::string& text : texts) {
        ids.clear();
        offsets.clear();
        tokenizer->encode_with_offsets_into(text, {}, ids, offsets);
      }
      best_with_offsets = std::min(best_with_offsets, thread_cpu_seconds() - start);
    }
    Report entry;
    entry["tokenizer"] = name;
    entry["tokens"] = tokens;
    entry["odbatch_mb_per_s"] = rounded(static_cast<double>(bytes) / best / 1e6, 2);
    // The first pass starts with an empty word cache: every distinct word is merged once.
    entry["odbatch_first_pass_mb_per_s"] = rounded(static_cast<double>(bytes) / first / 1e6, 2);
    entry["odbatch_with_offsets_mb_per_s"] =
        rounded(static_cast<double>(bytes) / best_with_offsets / 1e6, 2);
    if (references.contains(name)) {
      const auto& reference = references[name];
      const double seconds = reference["seconds"].get<double>();
      entry["reference"] = reference["library"];
      entry["reference_mb_per_s"] = rounded(static_cast<double>(bytes) / seconds / 1e6, 2);
      entry["reference_tokens"] = reference["tokens"];
      entry["speedup"] = rounded(seconds / best, 2);
    }
    results.push_back(entry);
  }
  report["results"] = results;
  if (references.contains("skipped")) report["references"] = references;
  emit_report(report, options.out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  using namespace odbatch::bench;
  try {
    Options options;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      const auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
        return argv[++i];
      };
      if (flag == "--oracle-dir") {
        options.oracle_dir = value();
      } else if (flag == "--repeat") {
        options.repeat = static_cast<int>(parse_count(flag, value()));
      } else if (flag == "--no-references") {
        options.references = false;
      } else if (flag == "--out") {
        options.out_path = value();
      } else {
        std::cerr << "usage: odbatch_bench_text_tokenizer [--oracle-dir DIR] [--repeat N] "
                     "[--no-references] [--out FILE]\n";
        return 2;
      }
    }
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "odbatch_bench_text_tokenizer: " << error.what() << "\n";
    return 1;
  }
}
