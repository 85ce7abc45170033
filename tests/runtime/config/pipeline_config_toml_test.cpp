#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"

using namespace odbatch;

namespace {

constexpr std::string_view kMinimal = R"(
[source]
files = ["train.jsonl", "/abs/more-*.jsonl"]
image_root = "images"

[tokenizer]
model = "spm.model"
)";

PipelineConfig parse(const std::string& document) {
  return PipelineConfig::from_toml(document, "p.toml", "/base");
}

std::string error_of(const std::string& document) {
  try {
    parse(document);
  } catch (const ConfigFileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a minimal pipeline file takes the defaults and resolves paths against its directory") {
  const auto c = parse(std::string(kMinimal));
  CHECK(c.source.files == std::vector<std::string>{"/base/train.jsonl", "/abs/more-*.jsonl"});
  CHECK(c.source.image_root == "/base/images");
  CHECK(c.tokenizer.model == "/base/spm.model");
  CHECK(c.tokenizer.workers == 2);
  CHECK(c.flow.layout == BatchLayout::padded);
  CHECK(!c.flow.lookahead.has_value());
  CHECK(c.batching == BatchingConfig{});
}

TEST_CASE("every table is read") {
  const auto c = parse(std::string(kMinimal) + R"(
[images]
workers = 3
max_pixels = 200704
[batching]
token_budget = 4096
window = 512
[pipeline]
layout = "packed"
prefetch = 7
pad_id = 2
reader_capacity = 9
lookahead = 0
)");
  CHECK(c.images.workers == 3);
  CHECK(c.images.geometry.max_pixels == 200704);
  CHECK(c.batching.token_budget == 4096);
  CHECK(c.batching.window == 512);
  CHECK(c.flow.layout == BatchLayout::packed);
  CHECK(c.flow.prefetch == 7);
  CHECK(c.flow.pad_id == 2);
  CHECK(c.flow.reader_capacity == 9);
  CHECK(c.flow.lookahead == 0u);
  CHECK(reader_lookahead(c) == 0);
  CHECK(first_round_lookahead(c, 0) == 0);
}

TEST_CASE("the tokenizer takes its length and label policies from the batching table") {
  const auto c =
      parse(std::string(kMinimal) + "[batching]\nmax_seq_len = 123\nover_length = \"reject\"\n");
  const auto options = effective_tokenizer_options(c);
  CHECK(options.max_seq_len == 123);
  CHECK(options.over_length == OverLengthPolicy::reject);
}

TEST_CASE("errors name the file, line and key") {
  CHECK(error_of(std::string(kMinimal) + "[sources]\nx = 1\n").find("p.toml:8") !=
        std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[sources]\nx = 1\n").find("unknown table") !=
        std::string::npos);
  const auto unknown_key = error_of(std::string(kMinimal) + "[pipeline]\nprefech = 3\n");
  CHECK(unknown_key.find("pipeline.prefech") != std::string::npos);
  CHECK(unknown_key.find("unknown key") != std::string::npos);
  // A key of another table says which.
  CHECK(error_of(std::string(kMinimal) + "[images]\nimage_piece = \"<image>\"\n")
            .find("images.image_piece: unknown key; it is a [tokenizer] key") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[pipeline]\nwindow = 8\n")
            .find("pipeline.window: unknown key; it is a [batching] key") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[batching]\nprefetch = 8\n")
            .find("batching.prefetch: unknown key; it is a [pipeline] key") != std::string::npos);
  CHECK(
      error_of(std::string(kMinimal) + "[pipeline]\nworkers = 2\n")
          .find("pipeline.workers: unknown key; it is a [images], [tokenizer] or [[stage]] key") !=
      std::string::npos);
  const auto bad_value = error_of(std::string(kMinimal) + "[pipeline]\nlayout = \"ragged\"\n");
  CHECK(bad_value.find("pipeline.layout") != std::string::npos);
  CHECK(bad_value.find("padded, packed") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[tokenizer.x]\n").find("tokenizer.x") !=
        std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[images]\nworkers = 0\n").find("images.workers") !=
        std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[batching]\nwindow = -1\n").find("batching.window") !=
        std::string::npos);
  CHECK(error_of("[tokenizer]\nmodel = \"m\"\n").find("source.files") != std::string::npos);
  CHECK(error_of("[source\n").find("TOML syntax error") != std::string::npos);
}

TEST_CASE("an evaluation pipeline reads every record once an epoch, in file order") {
  CHECK(parse(std::string(kMinimal)).source.shuffle);
  CHECK(parse(std::string(kMinimal) + "[pipeline]\nmode = \"training\"\n").source.shuffle);
  const auto evaluation = parse(std::string(kMinimal) + "[pipeline]\nmode = \"evaluation\"\n");
  CHECK(!evaluation.source.shuffle);
  const std::string explicit_order = R"(
[source]
files = ["eval.jsonl"]
shuffle = false
[[source.mix]]
files = ["more.jsonl"]
epochs_per_pass = 1
[tokenizer]
model = "spm.model"
[pipeline]
mode = "evaluation"
)";
  CHECK(!parse(explicit_order).source.shuffle);
  // Settings that would leave records out, or read them in another order each epoch, are refused
  // under their own keys.
  std::string shuffled = explicit_order;
  shuffled.replace(shuffled.find("shuffle = false"), 15, "shuffle = true");
  CHECK(error_of(shuffled).find("p.toml:4:11") != std::string::npos);
  CHECK(error_of(shuffled).find("source.shuffle: an evaluation does not shuffle") !=
        std::string::npos);
  std::string partial = explicit_order;
  partial.replace(partial.find("epochs_per_pass = 1"), 19, "fraction = 0.5");
  CHECK(error_of(partial).find("source.mix[0].fraction: an evaluation reads each source whole") !=
        std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[pipeline]\nmode = \"eval\"\n")
            .find("pipeline.mode: expected \"training\" or \"evaluation\", not \"eval\"") !=
        std::string::npos);
}

TEST_CASE("template variables are typed values a Jinja template sees") {
  const std::string jinja = R"(
[source]
files = ["d.jsonl"]
[tokenizer]
model = "tokenizer.json"
template_file = "tokenizer_config.json"
template_variables = { enable_thinking = false, date_string = "26 Jul 2024", nested = { a = [1, 2.5] } }
)";
  const auto variables = parse(jinja).tokenizer.options.template_variables;
  CHECK(variables == std::map<std::string, std::string>{{"date_string", R"("26 Jul 2024")"},
                                                        {"enable_thinking", "false"},
                                                        {"nested", R"({"a":[1,2.5]})"}});
  std::string reserved = jinja;
  reserved.replace(reserved.find("enable_thinking"), 15, "tools");
  CHECK(error_of(reserved).find(
            "tokenizer.template_variables.tools: set by the pipeline, not by the configuration") !=
        std::string::npos);
  std::string dated = jinja;
  dated.replace(dated.find("\"26 Jul 2024\""), 13, "2024-07-26");
  CHECK(error_of(dated).find("tokenizer.template_variables.date_string: a TOML date or time has "
                             "no JSON form; write it as a string") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[tokenizer.template_variables]\nx = 1\n")
            .find("template_variables: applies to template = \"jinja\" only") != std::string::npos);
}

TEST_CASE("the bundled example loads") {
  const auto c = PipelineConfig::from_toml_file(ODBATCH_EXAMPLES_DIR "/pipeline.toml");
  CHECK(c.source.files.size() == 1);
  CHECK(c.batching.window == 4096);
  CHECK(c.batching.warmup == Warmup::short_ramp);
  CHECK(reader_lookahead(c) == 4096);
  CHECK(first_round_lookahead(c, 0) == 512);
}

TEST_CASE("budget mode and layout: every combination, incompatible ones refused naming both keys") {
  struct Combination {
    std::string_view budget_mode;             // "" when the file leaves it out
    std::string_view layout;                  // "" when the file leaves it out
    std::optional<BatchLayout> layout_taken;  // nullopt: a config error
  };
  const Combination table[] = {
      {"", "", BatchLayout::padded},
      {"", "padded", BatchLayout::padded},
      {"", "packed", BatchLayout::packed},
      {"padded", "", BatchLayout::padded},
      {"padded", "padded", BatchLayout::padded},
      // Padded groups have sum of lengths <= rows x longest <= budget: packed rows keep it.
      {"padded", "packed", BatchLayout::packed},
      // The layout follows a packed budget unless the file says otherwise...
      {"packed", "", BatchLayout::packed},
      {"packed", "packed", BatchLayout::packed},
      // ...and padding packed groups would take rows x longest tokens, far above the budget.
      {"packed", "padded", std::nullopt},
  };
  for (const auto& c : table) {
    CAPTURE(c.budget_mode);
    CAPTURE(c.layout);
    std::string document(kMinimal);
    if (!c.budget_mode.empty())
      document += "[batching]\nbudget_mode = \"" + std::string(c.budget_mode) + "\"\n";
    if (!c.layout.empty()) document += "[pipeline]\nlayout = \"" + std::string(c.layout) + "\"\n";
    if (c.layout_taken) {
      CHECK(error_of(document) == "");
      if (error_of(document).empty()) CHECK(parse(document).flow.layout == *c.layout_taken);
    } else {
      const auto error = error_of(document);
      CHECK(error.find("pipeline.layout") != std::string::npos);
      CHECK(error.find("batching.budget_mode") != std::string::npos);
    }
  }
}

TEST_CASE("a configuration built in code is checked the same way") {
  auto config = parse(std::string(kMinimal));
  config.batching.budget_mode = BudgetMode::packed;
  config.flow.layout = BatchLayout::padded;
  try {
    validate(config);
    FAIL("a packed budget with a padded layout was accepted");
  } catch (const ConfigError& e) {
    CHECK(e.field() == "pipeline.layout");
    CHECK(std::string(e.what()).find("batching.budget_mode") != std::string::npos);
  }
  config.flow.layout = BatchLayout::packed;
  CHECK_NOTHROW(validate(config));
}

TEST_CASE("a mixed source built in code takes 1 to 2^32 epochs a pass") {
  auto config = parse(std::string(kMinimal));
  config.source.mix.push_back(
      MixSourceConfig{.files = {"x"}, .epochs_per_pass = kMaxEpochsPerPass});
  CHECK_NOTHROW(validate(config));
  for (const std::uint64_t epochs : {std::uint64_t{0}, kMaxEpochsPerPass + 1}) {
    config.source.mix[0].epochs_per_pass = epochs;
    try {
      validate(config);
      FAIL("epochs_per_pass = " << epochs << " was accepted");
    } catch (const ConfigError& e) {
      CHECK(e.field() == "source.mix[0].epochs_per_pass");
      CHECK(std::string(e.what()).find("must be between 1 and 4294967296") != std::string::npos);
    }
  }
}

TEST_CASE("a model's own tokenizer file and Jinja template are configured in [tokenizer]") {
  constexpr std::string_view kQwen = R"(
[source]
files = ["train.jsonl"]
[tokenizer]
model = "qwen2/tokenizer.json"
template_file = "qwen2/tokenizer_config.json"
template_name = "default"
eos_token = "<|im_end|>"
template_date = "2024-07-26"
image_content = "parts"
)";
  const auto c = parse(std::string(kQwen));
  const TokenizerOptions& t = c.tokenizer.options;
  CHECK(t.chat_template == ChatTemplate::jinja);  // implied by template_file
  CHECK(t.template_file == "/base/qwen2/tokenizer_config.json");
  CHECK(resolved_format(t.format, c.tokenizer.model) == TokenizerFormat::hf_json);
  CHECK(t.eos_token == "<|im_end|>");
  CHECK_FALSE(t.bos_token.has_value());
  CHECK(t.template_date == "2024-07-26");

  const auto tiktoken = parse(std::string(kMinimal) +
                              "format = \"tiktoken\"\ntiktoken_preset = \"llama3\"\n"
                              "template = \"jinja\"\ntemplate_file = \"llama3.jinja\"\n");
  CHECK(tiktoken.tokenizer.options.format == TokenizerFormat::tiktoken);
  CHECK(tiktoken.tokenizer.options.tiktoken_preset == "llama3");

  // A preset named beside a template file, and values out of their range, name the key.
  CHECK(error_of(std::string(kMinimal) + "template = \"chatml\"\ntemplate_file = \"t.jinja\"\n")
            .find("tokenizer.template_file") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "format = \"bpe\"\n").find("tokenizer.format") !=
        std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "template_file = \"t.jinja\"\ntemplate_date = \"soon\"\n")
            .find("tokenizer.template_date") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "image_content = \"inline\"\n")
            .find("tokenizer.image_content") != std::string::npos);
}
