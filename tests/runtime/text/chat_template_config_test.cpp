// Loading a chat template and its special tokens from tokenizer_config.json or a .jinja file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "odbatch/text/chat_template_config.hpp"
#include "odbatch/text/jinja_template.hpp"

namespace odbatch::test {
namespace {

const std::filesystem::path template_dir = ODBATCH_CHAT_TEMPLATE_DIR;

std::string config_error(std::string_view json, std::string_view name = "default") {
  try {
    parse_tokenizer_config(json, "tokenizer_config.json", name);
  } catch (const ChatTemplateConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("chat template config: a string template and AddedToken or plain special tokens") {
  const auto config = parse_tokenizer_config(
      R"({"chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}",
          "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
          "eos_token": "</s>", "pad_token": null})",
      "tokenizer_config.json");
  CHECK(config.bos_token == "<s>");
  CHECK(config.eos_token == "</s>");
  CHECK_FALSE(config.pad_token.has_value());
  CHECK_FALSE(config.unk_token.has_value());
  jinja::Dict variables = jinja::Value::from_json(R"({"messages": [{"content": "hi"}]})").as_dict();
  add_special_tokens(config, variables);
  CHECK(jinja::Template(config.chat_template).render(variables).text == "<s>hi");
}

TEST_CASE("chat template config: a named list of templates") {
  const char* json = R"({"chat_template": [{"name": "default", "template": "D"},
                                           {"name": "tool_use", "template": "T"}]})";
  CHECK(parse_tokenizer_config(json, "x").chat_template == "D");
  CHECK(parse_tokenizer_config(json, "x", "tool_use").chat_template == "T");
  CHECK(config_error(json, "rag") ==
        "tokenizer_config.json: no chat template named \"rag\" (it has: default, tool_use)");
}

TEST_CASE("chat template config: errors name the file and the problem") {
  CHECK(config_error("{}") == "tokenizer_config.json: has no \"chat_template\"");
  CHECK(config_error(R"({"chat_template": 3})").find("must be a string or a list") !=
        std::string::npos);
  CHECK(config_error(R"({"chat_template": [{"name": "default"}]})").find("needs string") !=
        std::string::npos);
  CHECK(config_error(R"({"chat_template": "x", "eos_token": 5})") ==
        "tokenizer_config.json: \"eos_token\" must be a string or an object with a string "
        "\"content\"");
  CHECK(config_error("{").find("invalid JSON") != std::string::npos);
  CHECK_THROWS_AS(load_tokenizer_config(template_dir / "missing.json"), ChatTemplateConfigError);
}

TEST_CASE("chat template config: the real Qwen2-VL template from a file and from a config") {
  const std::string source = load_jinja_file(template_dir / "qwen2-vl-7b-instruct.jinja");
  const auto directory = std::filesystem::temp_directory_path() /
                         ("odbatch_chat_template_config_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const auto config_path = directory / "tokenizer_config.json";
  {
    std::ofstream out(config_path);
    jinja::Dict config;
    config.set("chat_template", jinja::Value(source));
    config.set("eos_token", jinja::Value("<|im_end|>"));
    out << jinja::to_json(jinja::Value(std::move(config)));
  }
  const auto config = load_tokenizer_config(config_path);
  std::filesystem::remove_all(directory);
  CHECK(config.chat_template == source);
  CHECK(config.eos_token == "<|im_end|>");
  const jinja::Dict variables = jinja::Value::from_json(R"({"messages": [
      {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is it?"}]},
      {"role": "assistant", "content": "A cat."}], "add_generation_prompt": false})")
                                    .as_dict();
  CHECK(jinja::Template(config.chat_template).render(variables).text ==
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>What is it?<|im_end|>\n"
        "<|im_start|>assistant\nA cat.<|im_end|>\n");
}

}  // namespace
}  // namespace odbatch::test
