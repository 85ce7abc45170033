#include "odbatch/source/dataset_file_format.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/dataset_error.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kBlockBytes = 512;
constexpr std::string_view kUtf8ByteOrderMark = "\xef\xbb\xbf";

enum class NamedFormat : std::uint8_t { unknown, tar, json, compressed };

// The file name's suffix, lower-cased, without a URL's query or fragment.
std::string file_name(std::string_view path) {
  path = path.substr(0, path.find_first_of("?#"));
  const auto slash = path.rfind('/');
  std::string name(slash == std::string_view::npos ? path : path.substr(slash + 1));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

NamedFormat named_format(std::string_view path) {
  const std::string name = file_name(path);
  const auto ends_with_any = [&](std::initializer_list<std::string_view> suffixes) {
    return std::any_of(suffixes.begin(), suffixes.end(),
                       [&](std::string_view suffix) { return name.ends_with(suffix); });
  };
  if (ends_with_any(
          {".gz", ".tgz", ".bz2", ".tbz", ".tbz2", ".xz", ".txz", ".zst", ".tzst", ".zstd"}))
    return NamedFormat::compressed;
  if (name.ends_with(".tar")) return NamedFormat::tar;
  if (ends_with_any({".json", ".jsonl", ".ndjson"})) return NamedFormat::json;
  return NamedFormat::unknown;
}

// The checksum field's value: octal digits, optionally led by spaces and ended by a NUL or space.
bool stored_checksum(std::string_view field, std::uint64_t& value) {
  std::size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  const std::size_t first_digit = i;
  value = 0;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i)
    value = value * 8 + static_cast<std::uint64_t>(field[i] - '0');
  if (i == first_digit) return false;
  for (; i < field.size(); ++i)
    if (field[i] != ' ' && field[i] != '\0') return false;
  return true;
}

bool is_zero_block(std::string_view block) {
  return block.size() >= kBlockBytes &&
         std::all_of(block.begin(), block.begin() + kBlockBytes, [](char c) { return c == '\0'; });
}

[[noreturn]] void refuse_compressed(const ByteSource& source, std::string_view compression) {
  throw DatasetError(source.name() + ": is " + std::string(compression) +
                     "-compressed; records cannot be read from it by offset (decompress it, "
                     "e.g. shards as plain .tar)");
}

// JSON array or JSON Lines by the first byte besides whitespace, reading on as far as it takes.
DatasetFileFormat json_format(const ByteSource& source, std::string_view probe) {
  std::uint64_t next = probe.size();
  if (probe.starts_with(kUtf8ByteOrderMark)) probe.remove_prefix(kUtf8ByteOrderMark.size());
  std::array<char, 4096> more{};
  for (std::string_view bytes = probe;;) {
    const auto first = bytes.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos) {
      return bytes[first] == '[' ? DatasetFileFormat::json_array : DatasetFileFormat::json_lines;
    }
    const std::size_t got = source.read_at(more.data(), more.size(), next);
    if (got == 0) return DatasetFileFormat::json_lines;
    bytes = std::string_view(more.data(), got);
    next += got;
  }
}

}  // namespace

bool is_tar_header(std::string_view block) {
  if (block.size() < kBlockBytes) return false;
  std::uint64_t stored = 0;
  if (!stored_checksum(block.substr(148, 8), stored)) return false;
  std::uint64_t unsigned_sum = 0;
  std::int64_t signed_sum = 0;
  for (std::size_t i = 0; i < kBlockBytes; ++i) {
    const char c = i >= 148 && i < 156 ? ' ' : block[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return stored == unsigned_sum || static_cast<std::int64_t>(stored) == signed_sum;
}

std::string_view compression_of(std::string_view bytes) {
  if (bytes.starts_with("\x1f\x8b")) return "gzip";
  if (bytes.size() >= 4 && bytes.starts_with("BZh") && bytes[3] >= '1' && bytes[3] <= '9')
    return "bzip2";
  if (bytes.starts_with(std::string_view("\xfd"
                                         "7zXZ\0",
                                         6)))
    return "xz";
  if (bytes.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
  return {};
}

DatasetFileFormat detect_dataset_file_format(const ByteSource& source) {
  std::array<char, 4096> buffer{};
  const std::size_t got = source.read_at(buffer.data(), buffer.size(), 0);
  const std::string_view probe(buffer.data(), got);
  const NamedFormat named = named_format(source.name());
  const std::string_view compression = compression_of(probe);
  if (!compression.empty()) refuse_compressed(source, compression);
  if (named == NamedFormat::compressed) {
    throw DatasetError(source.name() +
                       ": is named as a compressed file but holds no gzip, bzip2, xz or zstd "
                       "stream; records cannot be read from a compressed file by offset");
  }
  const bool tar_header = is_tar_header(probe);
  if (named == NamedFormat::tar) {
    if (tar_header || (got > 0 && is_zero_block(probe))) return DatasetFileFormat::tar_shard;
    if (got == 0) throw DatasetError(source.name() + ": is an empty file, not a tar shard");
    throw DatasetError(source.name() + ": is named as a tar shard but " +
                       (got < kBlockBytes
                            ? "is " + std::to_string(got) + " bytes, shorter than one tar header"
                            : std::string("its first block is not a tar header "
                                          "(its checksum does not match)")));
  }
  if (tar_header) {
    if (named == NamedFormat::json) {
      throw DatasetError(source.name() +
                         ": is named as JSON but starts with a tar header; name a shard .tar");
    }
    return DatasetFileFormat::tar_shard;
  }
  return json_format(source, probe);
}

}  // namespace odbatch
