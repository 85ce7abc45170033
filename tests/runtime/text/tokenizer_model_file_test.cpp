// The tokenizer model path is checked before a byte is read: a FIFO, a directory or a device is a
// config error naming tokenizer.model and the path, never a hang or a bare stream error. The
// checkpoint's fingerprint of the model reads it the same way, and template files likewise, their
// errors naming the setting that gave the path.
#include <doctest/doctest.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "odbatch/config/checkpoint_settings.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/text/chat_template_config.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "source_test_files.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

// The error that `use` (which reads the model at `model`) throws, in words.
template <typename Use>
std::string model_error(const std::filesystem::path& model, Use use) {
  try {
    use();
  } catch (const TokenizerModelError& e) {
    CHECK(e.field() == "tokenizer.model");
    CHECK(e.model() == model);
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a TokenizerModelError: ") + e.what();
  }
  return "no error";
}

std::string model_error(const std::filesystem::path& model) {
  return model_error(model, [&] { ChatTokenizer tokenizer(model, {}); });
}

// Runs `use` on a FIFO made at `fifo` as the model and returns its error. A use that waits on the
// FIFO is let go after 10 s (by opening the FIFO's other end) and fails the test.
template <typename Use>
std::string fifo_error(const ScratchDirectory& dir, const std::filesystem::path& fifo, Use use) {
  dir.make_fifo(fifo.filename().string());
  std::string error;
  CHECK_MESSAGE(returns_before_deadline(fifo.string(), [&] { error = model_error(fifo, use); }),
                "reading a FIFO as the model still waited after 10 s");
  return error;
}

// A sparse file of `bytes` bytes at `path`: none is written, and none is read.
void make_sparse_file(const std::filesystem::path& path, std::uintmax_t bytes) {
  { std::ofstream create(path); }
  std::filesystem::resize_file(path, bytes);
}

// The index of one dataset file of one record in `dir`, for checkpoint_settings.
DatasetIndex one_record_index(const ScratchDirectory& dir) {
  const auto data = dir.path() / "data.jsonl";
  std::ofstream(data) << "{}\n";
  const std::string files[] = {data.string()};
  return DatasetIndex::build(files);
}

}  // namespace

TEST_CASE("a FIFO as the model is refused at once, not waited on") {
  const ScratchDirectory dir;
  const auto fifo = dir.path() / "model.fifo";
  CHECK(fifo_error(dir, fifo, [&] { ChatTokenizer tokenizer(fifo, {}); }) ==
        "tokenizer.model: " + fifo.string() + ": not a regular file (a FIFO)");
}

TEST_CASE("the checkpoint's fingerprint of the model refuses a FIFO too") {
  const ScratchDirectory dir;
  const auto index = one_record_index(dir);
  PipelineConfig config;
  config.tokenizer.model = dir.path() / "model.fifo";
  CHECK(fifo_error(dir, config.tokenizer.model, [&] { checkpoint_settings(config, index); }) ==
        "tokenizer.model: " + config.tokenizer.model.string() + ": not a regular file (a FIFO)");
}

TEST_CASE("a directory or a device as the model is an error naming the path") {
  const ScratchDirectory dir;
  CHECK(model_error(dir.path()) ==
        "tokenizer.model: " + dir.path().string() + ": not a regular file (a directory)");
  CHECK(model_error("/dev/null") ==
        "tokenizer.model: /dev/null: not a regular file (a character device)");
  const auto missing = dir.path() / "no-such.model";
  CHECK(model_error(missing) ==
        "tokenizer.model: " + missing.string() + ": cannot open: No such file or directory");
}

TEST_CASE("a file too large for a model is refused before it is read") {
  const ScratchDirectory dir;
  const auto huge = dir.path() / "huge.model";
  make_sparse_file(huge, kMaxTokenizerModelBytes + 1);
  CHECK(model_error(huge) == "tokenizer.model: " + huge.string() + ": larger than the limit of " +
                                 std::to_string(kMaxTokenizerModelBytes) + " bytes");
}

TEST_CASE("the model file's bytes are read whole") {
  const auto path = model_path(kChatModel);
  std::ifstream in(path, std::ios::binary);
  const std::string expected{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  REQUIRE(expected.size() > 1000);
  CHECK(read_tokenizer_model_file(path) == expected);
}

// The error the tokenizer gives for a template file at `path`, in words.
std::string template_error(const std::filesystem::path& path) {
  TokenizerOptions options = options_for(ChatTemplate::jinja);
  options.template_file = path;
  try {
    ChatTokenizer tokenizer(model_path(kChatModel), options);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("a template file that is not a regular file is refused at once, naming the setting") {
  const ScratchDirectory dir;
  const auto fifo = dir.make_fifo("chat.jinja");
  std::string error;
  CHECK(returns_before_deadline(fifo, [&] { error = template_error(fifo); }));
  CHECK(error == "template_file: " + fifo + ": not a regular file (a FIFO)");
  CHECK(template_error("/dev/zero") ==
        "template_file: /dev/zero: not a regular file (a character device)");
  CHECK(template_error(dir.path() / "config.json") ==
        "template_file: " + (dir.path() / "config.json").string() +
            ": cannot open: No such file or directory");
  std::filesystem::create_directory(dir.path() / "dir.jinja");
  CHECK(template_error(dir.path() / "dir.jinja") ==
        "template_file: " + (dir.path() / "dir.jinja").string() +
            ": not a regular file (a directory)");
  const auto huge = dir.path() / "huge.jinja";
  make_sparse_file(huge, kMaxTemplateFileBytes + 1);
  CHECK(template_error(huge) == "template_file: " + huge.string() + ": larger than the limit of " +
                                    std::to_string(kMaxTemplateFileBytes) + " bytes");
}

TEST_CASE("the checkpoint's fingerprint of a template file names the setting that gave it") {
  const ScratchDirectory dir;
  const auto index = one_record_index(dir);
  PipelineConfig config;
  config.tokenizer.model = model_path(kChatModel);
  config.tokenizer.options.chat_template = ChatTemplate::jinja;
  config.tokenizer.options.template_file = "/dev/zero";
  CHECK_THROWS_WITH_AS(
      checkpoint_settings(config, index),
      "tokenizer.template_file: /dev/zero: not a regular file (a character device)", ConfigError);
}

}  // namespace odbatch::test
