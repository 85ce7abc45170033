// The tokenizer model path is checked before a byte is read: a FIFO, a directory or a device is a
// config error naming tokenizer.model and the path, never a hang or a bare stream error. The
// checkpoint's fingerprint of the model reads it the same way.
#include <doctest/doctest.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "odbatch/config/checkpoint_settings.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/source/dataset_index.hpp"
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

}  // namespace

TEST_CASE("a FIFO as the model is refused at once, not waited on") {
  const ScratchDirectory dir;
  const auto fifo = dir.path() / "model.fifo";
  CHECK(fifo_error(dir, fifo, [&] { ChatTokenizer tokenizer(fifo, {}); }) ==
        "tokenizer.model: " + fifo.string() + ": not a regular file (a FIFO)");
}

TEST_CASE("the checkpoint's fingerprint of the model refuses a FIFO too") {
  const ScratchDirectory dir;
  const auto data = dir.path() / "data.jsonl";
  std::ofstream(data) << "{}\n";
  const std::string files[] = {data.string()};
  const auto index = DatasetIndex::build(files);
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
  { std::ofstream create(huge); }
  // Sparse: no byte is written, and none is read.
  std::filesystem::resize_file(huge, kMaxTokenizerModelBytes + 1);
  CHECK(model_error(huge) == "tokenizer.model: " + huge.string() + ": larger than " +
                                 std::to_string(kMaxTokenizerModelBytes) +
                                 " bytes, too large for a tokenizer model");
}

TEST_CASE("the model file's bytes are read whole") {
  const auto path = model_path(kChatModel);
  std::ifstream in(path, std::ios::binary);
  const std::string expected{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  REQUIRE(expected.size() > 1000);
  CHECK(read_tokenizer_model_file(path) == expected);
}

}  // namespace odbatch::test
