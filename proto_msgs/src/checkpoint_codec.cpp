#include "odbatch/proto_msgs/checkpoint_codec.hpp"

#include <array>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>

#include "odbatch/core/stable_hash.hpp"
#include "odbatch/proto_msgs/little_endian.hpp"
#include "odbatch/proto_msgs/varint.hpp"

namespace odbatch {
namespace {

constexpr std::array<char, 8> kMagic = {'O', 'D', 'B', 'C', 'K', 'P', 'T', '\n'};
constexpr std::size_t kHeaderSize = kMagic.size() + 4 + 8;  // magic, version, body length
constexpr std::size_t kChecksumSize = 8;
constexpr std::uint64_t kChecksumDomain = 0x636b70745f626f64ULL;  // "ckpt_bod"

std::uint64_t checksum(std::span<const std::byte> body) {
  StableHasher hasher(kChecksumDomain);
  // Eight bytes at a time, then the tail: the hash covers every byte and the length.
  std::size_t at = 0;
  for (; at + 8 <= body.size(); at += 8) hasher.add(wire::load_le<std::uint64_t>(body.data() + at));
  std::uint64_t tail = 0;
  for (unsigned shift = 0; at < body.size(); ++at, shift += 8)
    tail |= std::to_integer<std::uint64_t>(body[at]) << shift;
  return hasher.add(tail).add(body.size()).digest();
}

class BodyWriter {
 public:
  void number(std::uint64_t value) {
    std::array<std::byte, wire::kMaxVarint64Size> bytes;
    const std::byte* end = wire::store_varint64(bytes.data(), value);
    out_.insert(out_.end(), bytes.cbegin(), bytes.cbegin() + (end - bytes.data()));
  }
  void text(const std::string& value) {
    number(value.size());
    for (const char c : value) out_.push_back(static_cast<std::byte>(c));
  }
  std::vector<std::byte>& bytes() { return out_; }

 private:
  std::vector<std::byte> out_;
};

class BodyReader {
 public:
  BodyReader(std::span<const std::byte> body, std::size_t offset, const std::string& source)
      : at_(body.data()),
        begin_(body.data()),
        end_(body.data() + body.size()),
        offset_(offset),
        source_(source) {}

  std::uint64_t number(const char* what) {
    const auto read = wire::load_varint64(at_, end_);
    if (read.status != wire::VarintStatus::ok)
      fail(std::string(what) + (read.status == wire::VarintStatus::truncated
                                    ? " is cut off"
                                    : " is not a valid number"));
    at_ = read.end;
    return read.value;
  }
  std::uint32_t number32(const char* what) {
    const auto value = number(what);
    if (value > 0xFFFFFFFFu) fail(std::string(what) + " " + std::to_string(value) + " too large");
    return static_cast<std::uint32_t>(value);
  }
  // A count of items that each take at least one byte: never more than the bytes left.
  std::uint64_t count(const char* what) {
    const auto value = number(what);
    if (value > static_cast<std::uint64_t>(end_ - at_))
      fail(std::string(what) + " " + std::to_string(value) + " exceeds the bytes left");
    return value;
  }
  std::string text(const char* what) {
    const auto size = count(what);
    std::string value(reinterpret_cast<const char*>(at_), size);
    at_ += size;
    return value;
  }
  bool done() const { return at_ == end_; }
  [[noreturn]] void fail(const std::string& problem) const {
    throw CheckpointError(source_ + ": corrupt checkpoint at byte " +
                          std::to_string(offset_ + static_cast<std::size_t>(at_ - begin_)) + ": " +
                          problem);
  }

 private:
  const std::byte* at_;
  const std::byte* begin_;
  const std::byte* end_;
  std::size_t offset_;
  const std::string& source_;
};

// Origins nest at most this deep (one per re-sharding resume within an epoch).
constexpr int kMaxOriginDepth = 64;

void write_body(const Checkpoint& checkpoint, BodyWriter& body) {
  body.number(checkpoint.epoch);
  body.number(checkpoint.steps_taken);
  body.number(checkpoint.progress.samples);
  body.number(checkpoint.progress.tokens);
  body.number(checkpoint.world_size);
  body.number(checkpoint.settings.size());
  for (const auto& setting : checkpoint.settings) {
    body.text(setting.name);
    body.text(setting.value);
  }
  body.number(checkpoint.ranks.size());
  for (const auto& rank : checkpoint.ranks) {
    body.number(rank.rank);
    body.number(rank.round);
    body.number(rank.round_first_step);
    body.number(rank.cursor);
    body.number(rank.shard_size);
    body.number(rank.before_round.samples);
    body.number(rank.before_round.tokens);
    body.number(rank.window.size());
    for (const auto& sample : rank.window) {
      body.number(sample.id);
      body.number((std::uint64_t{sample.age} << 1) | (sample.taken ? 1u : 0u));
    }
  }
  body.number(checkpoint.origin ? 1 : 0);
  if (checkpoint.origin) write_body(*checkpoint.origin, body);
}

Checkpoint read_body(BodyReader& in, int depth) {
  Checkpoint checkpoint;
  checkpoint.epoch = in.number("epoch");
  checkpoint.steps_taken = in.number("steps taken");
  checkpoint.progress.samples = in.number("samples consumed");
  checkpoint.progress.tokens = in.number("tokens consumed");
  checkpoint.world_size = in.number32("world size");
  const auto settings = in.count("settings");
  for (std::uint64_t i = 0; i < settings; ++i) {
    auto name = in.text("setting name");
    auto value = in.text("setting value");
    // A resume compares settings by name: a repeated name could only hide a mismatch.
    for (const auto& earlier : checkpoint.settings)
      if (earlier.name == name) in.fail("setting " + name.substr(0, 64) + " appears twice");
    checkpoint.settings.push_back({std::move(name), std::move(value)});
  }
  const auto ranks = in.count("ranks");
  for (std::uint64_t i = 0; i < ranks; ++i) {
    RankCheckpoint rank;
    rank.rank = in.number32("rank");
    rank.round = in.number("round");
    rank.round_first_step = in.number("round's first step");
    rank.cursor = in.number("cursor");
    rank.shard_size = in.number("shard size");
    rank.before_round.samples = in.number("samples before the round");
    rank.before_round.tokens = in.number("tokens before the round");
    const auto window = in.count("window size");
    rank.window.reserve(window);
    for (std::uint64_t w = 0; w < window; ++w) {
      CheckpointWindowSample sample;
      sample.id = in.number("window sample id");
      const auto age_and_taken = in.number("window sample age");
      if ((age_and_taken >> 1) > 0xFFFFFFFFu) in.fail("window sample age too large");
      sample.age = static_cast<std::uint32_t>(age_and_taken >> 1);
      sample.taken = (age_and_taken & 1) != 0;
      rank.window.push_back(sample);
    }
    checkpoint.ranks.push_back(std::move(rank));
  }
  const auto has_origin = in.number("origin flag");
  if (has_origin > 1) in.fail("origin flag " + std::to_string(has_origin));
  if (has_origin) {
    if (depth == kMaxOriginDepth) in.fail("origins nested deeper than " + std::to_string(depth));
    checkpoint.origin = std::make_shared<const Checkpoint>(read_body(in, depth + 1));
  }
  return checkpoint;
}

}  // namespace

std::vector<std::byte> encode_checkpoint(const Checkpoint& checkpoint) {
  BodyWriter body;
  write_body(checkpoint, body);
  return frame_checkpoint_body(body.bytes());
}

bool has_checkpoint_magic(std::span<const std::byte> bytes) {
  return bytes.size() >= kMagic.size() &&
         std::equal(kMagic.begin(), kMagic.end(), bytes.begin(),
                    [](char c, std::byte b) { return static_cast<std::byte>(c) == b; });
}

std::vector<std::byte> frame_checkpoint_body(std::span<const std::byte> bytes) {
  std::vector<std::byte> out(kHeaderSize + bytes.size() + kChecksumSize);
  for (std::size_t i = 0; i < kMagic.size(); ++i) out[i] = static_cast<std::byte>(kMagic[i]);
  wire::store_le<std::uint32_t>(out.data() + kMagic.size(), kCheckpointVersion);
  wire::store_le<std::uint64_t>(out.data() + kMagic.size() + 4, bytes.size());
  std::copy(bytes.begin(), bytes.end(), out.begin() + kHeaderSize);
  wire::store_le<std::uint64_t>(out.data() + kHeaderSize + bytes.size(), checksum(bytes));
  return out;
}

Checkpoint decode_checkpoint(std::span<const std::byte> bytes, const std::string& source) {
  const auto fail = [&](const std::string& problem) -> CheckpointError {
    return CheckpointError(source + ": " + problem);
  };
  if (!has_checkpoint_magic(bytes)) throw fail("not an odbatch checkpoint (no checkpoint header)");
  if (bytes.size() < kHeaderSize + kChecksumSize)
    throw fail("truncated checkpoint: " + std::to_string(bytes.size()) + " bytes");
  const auto version = wire::load_le<std::uint32_t>(bytes.data() + kMagic.size());
  if (version != kCheckpointVersion)
    throw fail("checkpoint format version " + std::to_string(version) + ", this odbatch reads " +
               std::to_string(kCheckpointVersion));
  const auto length = wire::load_le<std::uint64_t>(bytes.data() + kMagic.size() + 4);
  const std::uint64_t content = bytes.size() - kHeaderSize - kChecksumSize;
  if (length < content)
    throw fail(std::to_string(content - length) +
               " trailing bytes after the checkpoint (the header announces " +
               std::to_string(length) + " bytes of content, the file has " +
               std::to_string(content) + ")");
  if (length > content)
    throw fail("truncated checkpoint: the header announces " + std::to_string(length) +
               " bytes of content, the file has " + std::to_string(content));
  const auto body = bytes.subspan(kHeaderSize, length);
  if (wire::load_le<std::uint64_t>(bytes.data() + kHeaderSize + length) != checksum(body))
    throw fail("corrupt checkpoint: checksum mismatch");

  BodyReader in(body, kHeaderSize, source);
  Checkpoint checkpoint = read_body(in, 0);
  if (!in.done()) in.fail("bytes after the checkpoint");
  try {
    for (const Checkpoint* c = &checkpoint; c; c = c->origin.get()) {
      for (const auto& rank : c->ranks) validate_rank_checkpoint(*c, rank);
      // An origin is a whole checkpoint: every rank's part, in rank order.
      if (c != &checkpoint)
        for (std::uint32_t r = 0; r < c->world_size; ++r)
          if (c->ranks.size() != c->world_size || c->ranks[r].rank != r)
            throw CheckpointError("the checkpoint it was resumed from lacks rank " +
                                  std::to_string(r) + "'s part, or holds parts out of order");
    }
  } catch (const CheckpointError& e) {
    throw fail(e.what());
  }
  return checkpoint;
}

void write_checkpoint_file(const std::filesystem::path& file, const Checkpoint& checkpoint) {
  const auto bytes = encode_checkpoint(checkpoint);
  auto temporary = file;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) throw CheckpointError(temporary.string() + ": cannot write the checkpoint");
  }
  std::error_code error;
  std::filesystem::rename(temporary, file, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw CheckpointError(file.string() + ": cannot write the checkpoint: " + error.message());
  }
}

Checkpoint read_checkpoint_file(const std::filesystem::path& file) {
  const auto cannot_read = [&](const std::string& why) {
    return CheckpointError(file.string() + ": cannot read the checkpoint: " + why);
  };
  // Only a regular file: opening a FIFO would block, and reading a directory fails with the
  // stream library's words, which do not name the file.
  std::error_code error;
  const auto type = std::filesystem::status(file, error).type();
  if (type == std::filesystem::file_type::not_found) throw cannot_read("no such file");
  if (error) throw cannot_read(error.message());
  if (type == std::filesystem::file_type::directory)
    throw cannot_read("a directory, not a checkpoint file");
  if (type != std::filesystem::file_type::regular) throw cannot_read("not a regular file");
  std::vector<char> chars;
  try {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw cannot_read(std::error_code(errno, std::generic_category()).message());
    chars.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) throw cannot_read("read error");
  } catch (const std::ios_base::failure& e) {  // an I/O error, in the stream library's words
    throw cannot_read(e.what());
  }
  return decode_checkpoint(
      std::span(reinterpret_cast<const std::byte*>(chars.data()), chars.size()), file.string());
}

}  // namespace odbatch
