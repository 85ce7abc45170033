// Times Jinja chat template rendering: CPU microseconds per conversation for each real template
// in tests/runtime/text/data/chat_templates, on every conversation of data/sft/sharegpt.jsonl and
// openai.jsonl (ShareGPT turns converted to role/content messages), best of --repeat passes.
#include <time.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/text/chat_template_config.hpp"
#include "odbatch/text/jinja_template.hpp"

namespace odbatch::bench {
namespace {

namespace fs = std::filesystem;

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// One record's variables as transformers passes them: messages, tools=None, and the prompt flag.
jinja::Dict conversation_variables(const nlohmann::json& record) {
  jinja::Dict variables;
  std::vector<jinja::Value> messages;
  if (record.contains("messages")) {
    for (const auto& m : record["messages"]) {
      jinja::Dict message;
      message.set("role", jinja::Value(m["role"].get<std::string>()));
      message.set("content", jinja::Value(m["content"].get<std::string>()));
      messages.emplace_back(std::move(message));
    }
  } else {
    for (const auto& m : record["conversations"]) {
      const std::string from = m["from"].get<std::string>();
      jinja::Dict message;
      message.set("role", jinja::Value(from == "human" ? "user"
                                       : from == "gpt" ? "assistant"
                                                       : from));
      message.set("content", jinja::Value(m["value"].get<std::string>()));
      messages.emplace_back(std::move(message));
    }
  }
  variables.set("messages", jinja::Value(std::move(messages)));
  variables.set("tools", jinja::Value::none());
  variables.set("add_generation_prompt", jinja::Value(false));
  variables.set("bos_token", jinja::Value("<s>"));
  variables.set("eos_token", jinja::Value("</s>"));
  return variables;
}

int run(int argc, char** argv) {
  int repeat = 3;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc)
      repeat = static_cast<int>(parse_count("--repeat", argv[++i]));
    else if (arg == "--out" && i + 1 < argc)
      out_path = argv[++i];
    else
      throw std::invalid_argument("usage: odbatch_bench_chat_template [--repeat N] [--out FILE]");
  }
  const fs::path source_dir = ODBATCH_SOURCE_DIR;
  std::vector<jinja::Dict> conversations;
  std::uint64_t text_bytes = 0;
  for (const char* file : {"sharegpt.jsonl", "openai.jsonl"}) {
    std::ifstream in(source_dir / "data/sft" / file);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      conversations.push_back(conversation_variables(nlohmann::json::parse(line)));
      text_bytes += line.size();
    }
  }
  if (conversations.empty()) throw std::runtime_error("no conversations under data/sft");

  Report report;
  report["conversations"] = conversations.size();
  report["repeat"] = repeat;
  const fs::path template_dir = source_dir / "tests/runtime/text/data/chat_templates";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(template_dir))
    if (entry.path().extension() == ".jinja") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const std::string source = load_jinja_file(file);
    const double parse_start = thread_cpu_seconds();
    const jinja::Template chat_template(source);
    const double parse_seconds = thread_cpu_seconds() - parse_start;
    double best = 1e30;
    std::uint64_t rendered_bytes = 0;
    std::uint64_t raised = 0;
    for (int pass = 0; pass < repeat; ++pass) {
      rendered_bytes = 0;
      raised = 0;
      const double start = thread_cpu_seconds();
      for (const auto& variables : conversations) {
        try {
          rendered_bytes += chat_template.render(variables).text.size();
        } catch (const jinja::JinjaError&) {
          ++raised;  // Gemma-2 refuses system messages
        }
      }
      best = std::min(best, thread_cpu_seconds() - start);
    }
    auto& entry = report["templates"][file.filename().string()];
    entry["parse_us"] = rounded(parse_seconds * 1e6, 1);
    entry["render_us_per_conversation"] =
        rounded(best * 1e6 / static_cast<double>(conversations.size()), 2);
    entry["output_mb_per_s"] = rounded(static_cast<double>(rendered_bytes) / best / 1e6, 1);
    entry["raised"] = raised;
  }
  report["input_bytes"] = text_bytes;
  emit_report(report, out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  try {
    return odbatch::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "odbatch_bench_chat_template: " << e.what() << "\n";
    return 1;
  }
}
