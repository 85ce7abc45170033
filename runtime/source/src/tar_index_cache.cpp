#include "odbatch/source/tar_index_cache.hpp"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "odbatch/core/hex_digest.hpp"
#include "odbatch/core/stable_hash.hpp"
#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/regular_file.hpp"
#include "stored_checksum.hpp"

namespace odbatch {
namespace {

constexpr std::string_view kMagic = "odbatch tar index 3\n";
// A cache file ends with a checksum of what precedes it (8 bytes, little-endian), so that one
// edited or damaged on disk is indexed again rather than trusted.
constexpr std::uint64_t kChecksumDomain = 0x74617273756dULL;  // "tarsum"
// The largest cache file read: far above any shard's index, and a FIFO or device is refused.
constexpr std::uint64_t kMaxCacheFileBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kNameHashDomain = 0x746172696478ULL;  // "taridx"
// Bounds what a corrupt cache file can make the loader allocate.
constexpr std::uint64_t kMaxTextBytes = std::uint64_t{1} << 20;

std::filesystem::path cache_file(const std::filesystem::path& dir, const ByteSource& shard) {
  const auto slash = shard.name().find_last_of('/');
  const std::string base =
      slash == std::string::npos ? shard.name() : shard.name().substr(slash + 1);
  return dir / (base + "." + hex_digest(StableHasher(kNameHashDomain).add(shard.name()).digest()) +
                ".index");
}

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  void u64(std::uint64_t value) { out_.write(reinterpret_cast<const char*>(&value), sizeof value); }
  void text(std::string_view value) {
    u64(value.size());
    out_.write(value.data(), static_cast<std::streamsize>(value.size()));
  }

 private:
  std::ostream& out_;
};

class Reader {
 public:
  explicit Reader(std::istream& in) : in_(in) {}
  std::optional<std::uint64_t> u64() {
    std::uint64_t value = 0;
    if (!in_.read(reinterpret_cast<char*>(&value), sizeof value)) return std::nullopt;
    return value;
  }
  std::optional<std::string> text() {
    const auto size = u64();
    if (!size || *size > kMaxTextBytes) return std::nullopt;
    std::string value(*size, '\0');
    if (!in_.read(value.data(), static_cast<std::streamsize>(value.size()))) return std::nullopt;
    return value;
  }

 private:
  std::istream& in_;
};

std::optional<TarShardIndex> load(const std::filesystem::path& file, const ByteSource& shard) {
  std::string bytes;
  try {
    bytes = read_regular_file(file.string(), kMaxCacheFileBytes);
  } catch (const FileReadError&) {
    return std::nullopt;  // none yet, or unusable: the shard is indexed again
  }
  if (bytes.size() < kStoredChecksumBytes) return std::nullopt;
  const std::string_view body =
      std::string_view(bytes).substr(0, bytes.size() - kStoredChecksumBytes);
  if (stored_checksum(kChecksumDomain, body) != std::string_view(bytes).substr(body.size()))
    return std::nullopt;
  std::istringstream in(std::string(body), std::ios::binary);
  Reader read(in);
  const auto magic = read.text();
  const auto name = read.text();
  const auto version = read.text();
  if (magic != kMagic || name != shard.name() || version != shard.version()) return std::nullopt;
  const auto samples = read.u64();
  // Each sample takes 16 bytes of the file: a count beyond the shard's size is corruption.
  if (!samples || *samples > shard.size()) return std::nullopt;
  TarShardIndex index;
  index.offsets.resize(*samples);
  index.lengths.resize(*samples);
  for (std::uint64_t i = 0; i < *samples; ++i) {
    const auto offset = read.u64();
    const auto length = read.u64();
    if (!offset || !length || *offset + *length > shard.size()) return std::nullopt;
    index.offsets[i] = *offset;
    index.lengths[i] = *length;
  }
  const auto flaws = read.u64();
  if (!flaws || *flaws > *samples) return std::nullopt;
  for (std::uint64_t i = 0; i < *flaws; ++i) {
    const auto sample = read.u64();
    const auto reason = read.u64();
    auto message = read.text();
    if (!sample || *sample >= *samples || !reason ||
        *reason > static_cast<std::uint64_t>(kLastRecordRejectReason) || !message) {
      return std::nullopt;
    }
    index.flaws.push_back({*sample, static_cast<RecordRejectReason>(*reason), std::move(*message)});
  }
  const auto ignored = read.u64();
  if (!ignored) return std::nullopt;
  index.ignored_members = *ignored;
  return index;
}

void store(const std::filesystem::path& file, const ByteSource& shard, const TarShardIndex& index) {
  const auto temporary =
      file.parent_path() / (file.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ostringstream body(std::ios::binary);
    Writer write(body);
    write.text(kMagic);
    write.text(shard.name());
    write.text(shard.version());
    write.u64(index.offsets.size());
    for (std::size_t i = 0; i < index.offsets.size(); ++i) {
      write.u64(index.offsets[i]);
      write.u64(index.lengths[i]);
    }
    write.u64(index.flaws.size());
    for (const auto& flaw : index.flaws) {
      write.u64(flaw.sample);
      write.u64(static_cast<std::uint64_t>(flaw.reason));
      write.text(flaw.message);
    }
    write.u64(index.ignored_members);
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::string bytes = body.str() + stored_checksum(kChecksumDomain, body.str());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw DatasetError(file.parent_path().string() + ": cannot write the tar index cache file " +
                         temporary.filename().string() + ": " + std::strerror(errno));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, file, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw DatasetError(file.string() + ": cannot store the tar index cache: " + error.message());
  }
}

}  // namespace

TarShardIndex cached_tar_shard_index(const ByteSource& shard,
                                     const std::filesystem::path& cache_dir) {
  if (cache_dir.empty()) return index_tar_shard(shard);
  const auto file = cache_file(cache_dir, shard);
  if (auto cached = load(file, shard)) return std::move(*cached);
  std::error_code error;
  std::filesystem::create_directories(cache_dir, error);
  if (error) {
    throw DatasetError(cache_dir.string() +
                       ": cannot create the tar index cache directory: " + error.message());
  }
  auto index = index_tar_shard(shard);
  store(file, shard, index);
  return index;
}

}  // namespace odbatch
