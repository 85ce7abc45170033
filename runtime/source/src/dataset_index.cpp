#include "odbatch/source/dataset_index.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>

#include "odbatch/core/stable_hash.hpp"
#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_file_format.hpp"
#include "odbatch/source/dataset_paths.hpp"
#include "odbatch/source/json_array_scanner.hpp"
#include "odbatch/source/open_byte_source.hpp"
#include "odbatch/source/tar_index_cache.hpp"

namespace odbatch {
namespace {

constexpr std::uint64_t kFingerprintDomain = 0x6a736f6e6c696478ULL;  // "jsonlidx"
constexpr std::string_view kUtf8ByteOrderMark = "\xef\xbb\xbf";

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The error of a dataset without records, naming its files (the first few of many).
std::string no_records(const std::vector<DatasetFile>& files) {
  constexpr std::size_t kNamed = 3;
  std::string names;
  for (std::size_t i = 0; i < files.size() && i < kNamed; ++i)
    names += (i == 0 ? "'" : ", '") + files[i].path + "'";
  if (files.size() > kNamed) names += " and " + std::to_string(files.size() - kNamed) + " more";
  return (files.size() == 1 ? "dataset file " + names + " holds"
                            : "dataset files " + names + " hold") +
         " no records (no line besides whitespace, or an empty JSON array)";
}

}  // namespace

std::string describe_location(std::string_view path, const RecordLocation& location) {
  if (location.element) {
    return std::string(path) + "[" + std::to_string(*location.element) + "]@" +
           std::to_string(location.offset);
  }
  return std::string(path) + ":" + std::to_string(location.line);
}

DatasetIndex DatasetIndex::build(std::span<const std::string> paths_or_patterns,
                                 const DatasetIndexOptions& options) {
  const std::vector<std::string> all(paths_or_patterns.begin(), paths_or_patterns.end());
  return build_sources(std::span(&all, 1), options);
}

DatasetIndex DatasetIndex::build_sources(std::span<const std::vector<std::string>> sources,
                                         const DatasetIndexOptions& options) {
  if (sources.size() > 1) {
    // Expanded together only to refuse a file named by two sources.
    std::vector<std::string> all;
    for (const auto& source : sources) all.insert(all.end(), source.begin(), source.end());
    expand_dataset_paths(all);
  }
  DatasetIndex index;
  std::map<std::string, std::string> names;  // identity -> the first name of the file
  for (const auto& source : sources) {
    const std::uint64_t before = index.record_count();
    for (auto& path : expand_dataset_paths(source))
      index.scan_file(std::move(path), options, names);
    index.source_records_.push_back(index.record_count() - before);
  }
  if (index.record_count() == 0) throw DatasetError(no_records(index.files_));
  index.offsets_.shrink_to_fit();
  index.lengths_.shrink_to_fit();
  index.line_jumps_.shrink_to_fit();
  return index;
}

void DatasetIndex::scan_file(std::string path, const DatasetIndexOptions& options,
                             std::map<std::string, std::string>& names) {
  if (files_.size() >= std::numeric_limits<std::uint32_t>::max()) {
    throw DatasetError(path + ": too many dataset files");
  }
  std::shared_ptr<const ByteSource> source = open_byte_source(path, options.remote);
  if (const auto [first, added] = names.emplace(source->identity(), path); !added) {
    throw DatasetError("dataset file '" + path + "' is the file '" + first->second + "' again (" +
                       source->identity() +
                       "); each file may be listed once, or its samples would be read twice");
  }
  const std::uint64_t expected_size = source->size();
  DatasetFile file{std::move(path), 0, offsets_.size(), 0, detect_dataset_file_format(*source)};
  std::uint64_t scanned = 0;
  switch (file.format) {
    case DatasetFileFormat::json_lines:
      scanned = scan_lines(*source);
      break;
    case DatasetFileFormat::json_array:
      scanned = scan_array(*source);
      break;
    case DatasetFileFormat::tar_shard:
      scanned = scan_tar(*source, options, file);
      break;
  }
  if (scanned != expected_size) {
    throw DatasetError(file.path + ": changed while being indexed (" +
                       std::to_string(expected_size) + " bytes before, " + std::to_string(scanned) +
                       " read)");
  }
  file.size_bytes = scanned;
  file.record_count = offsets_.size() - file.first_record;
  files_.push_back(std::move(file));
  sources_.push_back(std::move(source));
}

std::uint64_t DatasetIndex::scan_tar(const ByteSource& source, const DatasetIndexOptions& options,
                                     DatasetFile& file) {
  const auto shard = cached_tar_shard_index(source, options.tar_index_cache);
  const SampleId first = offsets_.size();
  offsets_.insert(offsets_.end(), shard.offsets.begin(), shard.offsets.end());
  lengths_.insert(lengths_.end(), shard.lengths.begin(), shard.lengths.end());
  for (const auto& flaw : shard.flaws) {
    flaws_.push_back({first + flaw.sample, RecordRejection{flaw.reason, flaw.message}});
  }
  file.ignored_members = shard.ignored_members;
  if (shard.offsets.empty()) {
    throw DatasetError(source.name() + ": a tar shard without samples (" +
                       std::to_string(shard.ignored_members) +
                       " members that belong to no sample); remove it from the dataset");
  }
  // The walk skips data it does not need; the shard's size is what was indexed.
  return source.size();
}

std::optional<RecordRejection> DatasetIndex::known_flaw(SampleId id) const {
  const auto it =
      std::lower_bound(flaws_.begin(), flaws_.end(), id,
                       [](const Flaw& flaw, SampleId value) { return flaw.record < value; });
  if (it == flaws_.end() || it->record != id) return std::nullopt;
  return it->rejection;
}

std::uint64_t DatasetIndex::scan_lines(const ByteSource& source) {
  // The line being scanned, which may span several buffer fills.
  std::uint64_t line = 1;
  std::uint64_t line_start = 0;
  bool line_has_content = false;
  char line_last_byte = '\0';
  std::uint64_t previous_line = 0;
  auto finish_line = [&](std::uint64_t line_end) {
    if (line_has_content) {
      if (line != previous_line + 1) line_jumps_.push_back({offsets_.size(), line});
      previous_line = line;
      offsets_.push_back(line_start);
      lengths_.push_back(line_end - line_start - (line_last_byte == '\r' ? 1 : 0));
    }
    ++line;
    line_start = line_end + 1;
    line_has_content = false;
    line_last_byte = '\0';
  };

  std::uint64_t buffer_offset = 0;  // file offset of the chunk's first byte
  source.read_sequentially(0, [&](std::string_view chunk) {
    const char* cursor = chunk.data();
    const char* const end = chunk.data() + chunk.size();
    while (cursor < end) {
      const auto* newline = static_cast<const char*>(std::memchr(cursor, '\n', end - cursor));
      const char* segment_end = newline != nullptr ? newline : end;
      if (!line_has_content) {
        line_has_content = std::find_if_not(cursor, segment_end, is_blank) != segment_end;
      }
      if (segment_end != cursor) line_last_byte = segment_end[-1];
      if (newline == nullptr) break;
      finish_line(buffer_offset + static_cast<std::uint64_t>(newline - chunk.data()));
      cursor = newline + 1;
    }
    buffer_offset += chunk.size();
    return true;
  });
  if (line_start < buffer_offset) finish_line(buffer_offset);  // no trailing newline
  return buffer_offset;
}

std::uint64_t DatasetIndex::scan_array(const ByteSource& source) {
  JsonArrayScanner scanner(source.name(), [this](std::uint64_t offset, std::uint64_t length) {
    offsets_.push_back(offset);
    lengths_.push_back(length);
  });
  std::uint64_t buffer_offset = 0;  // file offset of the chunk's first byte
  source.read_sequentially(0, [&](std::string_view bytes) {
    // detect_format saw the byte order mark; the scanner expects the array to come first.
    const std::size_t skipped =
        buffer_offset == 0 && bytes.starts_with(kUtf8ByteOrderMark) ? kUtf8ByteOrderMark.size() : 0;
    scanner.feed(bytes.substr(skipped), buffer_offset + skipped);
    buffer_offset += bytes.size();
    return true;
  });
  scanner.finish();
  return buffer_offset;
}

std::uint32_t DatasetIndex::file_of(SampleId id) const {
  // The last file starting at or before `id`; files without records start where the next does,
  // so they are never chosen for a valid id.
  const auto after = std::upper_bound(
      files_.begin(), files_.end(), id,
      [](SampleId value, const DatasetFile& file) { return value < file.first_record; });
  return static_cast<std::uint32_t>(after - files_.begin() - 1);
}

std::uint64_t DatasetIndex::line_of(SampleId id, const DatasetFile& file) const {
  const auto after =
      std::upper_bound(line_jumps_.begin(), line_jumps_.end(), id,
                       [](SampleId value, const LineJump& jump) { return value < jump.record; });
  if (after == line_jumps_.begin() || std::prev(after)->record < file.first_record) {
    return id - file.first_record + 1;
  }
  const auto& jump = *std::prev(after);
  return jump.line + (id - jump.record);
}

RecordLocation DatasetIndex::locate(SampleId id) const {
  if (id >= record_count()) {
    throw DatasetError("sample id " + std::to_string(id) + " is outside the dataset of " +
                       std::to_string(record_count()) + " records");
  }
  const std::uint32_t file = file_of(id);
  if (files_[file].format != DatasetFileFormat::json_lines) {
    return {file, offsets_[id], lengths_[id], 0, id - files_[file].first_record};
  }
  return {file, offsets_[id], lengths_[id], line_of(id, files_[file]), std::nullopt};
}

std::string DatasetIndex::describe(SampleId id) const {
  const auto location = locate(id);
  return describe_location(files_[location.file].path, location);
}

std::uint64_t DatasetIndex::fingerprint() const {
  StableHasher hasher(kFingerprintDomain);
  hasher.add(files_.size());
  for (const auto& file : files_) {
    const auto slash = file.path.find_last_of('/');
    hasher.add(slash == std::string::npos ? std::string_view(file.path)
                                          : std::string_view(file.path).substr(slash + 1));
    hasher.add(file.size_bytes).add(file.record_count);
  }
  return hasher.digest();
}

}  // namespace odbatch
