#pragma once
// Where every record of a dataset lies, from one streaming scan of its files.
//
// Two kinds of file, told apart by content, not by name (".json" files that hold JSON Lines are
// common): a file whose first byte besides whitespace (after a UTF-8 byte order mark) is '[' is
// one JSON array whose elements are the records (LLaVA-style instruction sets; see
// JsonArrayScanner), any other file is JSON Lines. Both kinds may be mixed in one dataset.
// In JSON Lines a record is a line holding anything besides whitespace; its bytes exclude the line
// terminator ("\n" or "\r\n"). A record's global sample id is its position in the concatenation of
// all files' records in file order, so ids are stable across runs and machines for the same files.
// Memory is 16 bytes per record, 16 per run of blank lines and a little per file: never
// proportional to the dataset's bytes.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/core/sample.hpp"

namespace odbatch {

class FileDescriptor;

enum class DatasetFileFormat : std::uint8_t {
  json_lines,  // one record per line
  json_array,  // one record per element of a top-level array
};

struct DatasetFile {
  std::string path;
  std::uint64_t size_bytes = 0;
  SampleId first_record = 0;  // global id of the file's first record
  std::uint64_t record_count = 0;
  DatasetFileFormat format = DatasetFileFormat::json_lines;
};

struct RecordLocation {
  std::uint32_t file = 0;  // index into DatasetIndex::files()
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t line = 0;  // 1-based in JSON Lines; 0 in a JSON array, which has `element`
  std::optional<std::uint64_t> element;  // 0-based index in a JSON array file

  friend bool operator==(const RecordLocation&, const RecordLocation&) = default;
};

// Where a record is, for messages and the ledger: "path:line" in a JSON Lines file, and
// "path[element]@offset" in a JSON array file (`element` as Python's json.load(f)[element],
// `offset` the byte where the element starts).
std::string describe_location(std::string_view path, const RecordLocation& location);

class DatasetIndex {
 public:
  // Expands `paths_or_patterns` (see expand_dataset_paths) and scans every file once with a
  // fixed-size buffer. Throws DatasetError naming the file for unreadable files, files that are
  // not regular files (never waiting on a FIFO), files that change size while being scanned and
  // JSON arrays whose elements cannot be told apart (see JsonArrayScanner), and naming the files
  // when none of them holds a record.
  static DatasetIndex build(std::span<const std::string> paths_or_patterns);

  std::uint64_t record_count() const { return offsets_.size(); }
  std::span<const DatasetFile> files() const { return files_; }

  // Throws DatasetError for an id outside [0, record_count()).
  RecordLocation locate(SampleId id) const;

  // describe_location() of a record, for messages.
  std::string describe(SampleId id) const;

  // Identifies the dataset for resume checks: a stable hash of the files' names (without their
  // directories, so a dataset may move), sizes and record counts, in order.
  std::uint64_t fingerprint() const;

 private:
  // A record whose line number does not follow from the previous record's (the first record of
  // a file not on line 1, or one after blank lines); later records count on from it.
  struct LineJump {
    SampleId record = 0;
    std::uint64_t line = 0;
  };
  // Appends the records of one file, read through `buffer`.
  void scan_file(std::string path, std::vector<char>& buffer);
  // Append the records of a file of either format; return the bytes read.
  std::uint64_t scan_lines(const FileDescriptor& fd, std::vector<char>& buffer);
  std::uint64_t scan_array(const FileDescriptor& fd, std::vector<char>& buffer);
  std::uint32_t file_of(SampleId id) const;
  std::uint64_t line_of(SampleId id, const DatasetFile& file) const;

  std::vector<DatasetFile> files_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::uint64_t> lengths_;
  std::vector<LineJump> line_jumps_;
};

}  // namespace odbatch
