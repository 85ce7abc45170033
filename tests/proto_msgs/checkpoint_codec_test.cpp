// The checkpoint file round-trips; every truncation, every flipped byte, a foreign file and an
// unknown version are rejected with a message naming the file; its size stays within 16 bytes
// per window sample plus a small header.
#include "odbatch/proto_msgs/checkpoint_codec.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace odbatch {
namespace {

Checkpoint sample_checkpoint(std::size_t window) {
  Checkpoint c;
  c.epoch = 3;
  c.steps_taken = 1234;
  c.progress = {98'765, 12'345'678};
  c.world_size = 2;
  c.settings = {{"dataset", "0123456789abcdef"}, {"batching.window", "4096"}};
  for (std::uint32_t r = 0; r < 2; ++r) {
    RankCheckpoint rank;
    rank.rank = r;
    rank.round = 77;
    rank.round_first_step = 1230;
    rank.cursor = 50'000 + r;
    rank.shard_size = 60'000;
    rank.before_round = {98'000, 12'000'000};
    for (std::size_t w = 0; w < window; ++w)
      rank.window.push_back(
          {(std::uint64_t{1} << 40) + w * 7919, w < window / 2 ? 3u : 0u, w % 3 == 0});
    c.ranks.push_back(std::move(rank));
  }
  return c;
}

std::string decode_error(std::span<const std::byte> bytes) {
  try {
    decode_checkpoint(bytes, "state.ckpt");
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "decoded";
}

TEST_CASE("a checkpoint round-trips through its encoding") {
  const auto checkpoint = sample_checkpoint(100);
  CHECK(decode_checkpoint(encode_checkpoint(checkpoint), "x") == checkpoint);
  CHECK(decode_checkpoint(encode_checkpoint(Checkpoint{}), "x") == Checkpoint{});
  // An epoch resumed twice onto other world sizes carries both checkpoints it came from.
  auto resumed = sample_checkpoint(3);
  auto middle = sample_checkpoint(2);
  middle.origin = std::make_shared<const Checkpoint>(sample_checkpoint(1));
  resumed.origin = std::make_shared<const Checkpoint>(middle);
  const auto decoded = decode_checkpoint(encode_checkpoint(resumed), "x");
  CHECK(decoded == resumed);
  REQUIRE(decoded.origin);
  REQUIRE(decoded.origin->origin);
  CHECK(decoded.origin->origin->ranks.front().window.size() == 1);
  CHECK_FALSE(decoded == sample_checkpoint(3));
}

TEST_CASE("every truncation and every corrupted byte is an error naming the file") {
  const auto bytes = encode_checkpoint(sample_checkpoint(5));
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    CAPTURE(size);
    const auto error = decode_error(std::span(bytes).first(size));
    CHECK(error.starts_with("state.ckpt: "));
  }
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    CAPTURE(at);
    auto corrupt = bytes;
    corrupt[at] ^= std::byte{0x5A};
    CHECK(decode_error(corrupt).starts_with("state.ckpt: "));
  }
  CHECK(decode_error(std::span(bytes).first(bytes.size() - 1)).find("truncated") !=
        std::string::npos);
  auto flipped = bytes;
  flipped[30] ^= std::byte{1};
  CHECK(decode_error(flipped).find("checksum mismatch") != std::string::npos);
  auto newer = bytes;
  newer[8] = std::byte{9};
  CHECK(decode_error(newer).find("checkpoint format version 9") != std::string::npos);
  const std::string text = "{\"not\": \"a checkpoint\"}";
  CHECK(decode_error(std::as_bytes(std::span(text))).find("not an odbatch checkpoint") !=
        std::string::npos);
}

TEST_CASE("bytes after a whole checkpoint are called trailing bytes, not a truncation") {
  auto bytes = encode_checkpoint(sample_checkpoint(5));
  bytes.resize(bytes.size() + 3, std::byte{0});
  const auto error = decode_error(bytes);
  CHECK(error.starts_with("state.ckpt: 3 trailing bytes after the checkpoint (the header "));
  CHECK(error.find("truncated") == std::string::npos);
  bytes.resize(bytes.size() - 4);
  CHECK(decode_error(bytes).starts_with("state.ckpt: truncated checkpoint: "));
}

TEST_CASE("a setting named twice is corrupt: it could hide a mismatch on resume") {
  auto checkpoint = sample_checkpoint(1);
  checkpoint.settings.push_back({"batching.window", "8"});
  const auto error = decode_error(encode_checkpoint(checkpoint));
  CHECK(error.starts_with("state.ckpt: corrupt checkpoint at byte "));
  CHECK(error.find("setting batching.window appears twice") != std::string::npos);
}

TEST_CASE("the size is at most 16 bytes per window sample plus a small fixed part") {
  const auto empty = encode_checkpoint(sample_checkpoint(0)).size();
  const auto full = encode_checkpoint(sample_checkpoint(4096)).size();
  CHECK(empty < 4096);
  CHECK(full - empty <= 16 * 2 * 4096);
}

TEST_CASE("checkpoint files are written whole and read back") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("odbatch-checkpoint-codec-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "state.ckpt";
  const auto checkpoint = sample_checkpoint(10);
  write_checkpoint_file(file, checkpoint);
  CHECK(read_checkpoint_file(file) == checkpoint);
  CHECK_FALSE(std::filesystem::exists(dir / "state.ckpt.tmp"));
  std::filesystem::resize_file(file, 20);
  CHECK_THROWS_WITH_AS(read_checkpoint_file(file), doctest::Contains("truncated"), CheckpointError);
  const auto missing = (dir / "missing.ckpt").string();
  CHECK_THROWS_WITH_AS(read_checkpoint_file(missing),
                       (missing + ": cannot read the checkpoint: no such file").c_str(),
                       CheckpointError);
  // A directory given as the checkpoint is named, in words of its own (the stream library's
  // "basic_filebuf::underflow error reading the file: Is a directory" names no file).
  CHECK_THROWS_WITH_AS(
      read_checkpoint_file(dir),
      (dir.string() + ": cannot read the checkpoint: a directory, not a checkpoint file").c_str(),
      CheckpointError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace odbatch
