#pragma once
// Where every record of a dataset lies, from one streaming scan of its files.
//
// Three kinds of file, told apart by name and content together (dataset_file_format.hpp): a
// WebDataset tar shard, whose samples are the records (tar_shard_index.hpp); one JSON array whose
// elements are the records (LLaVA-style instruction sets; see JsonArrayScanner); JSON Lines. The
// kinds may be mixed in one dataset, and each file may be local or an http(s):// URL
// (open_byte_source.hpp); each file (by ByteSource::identity) is read once.
// In JSON Lines a record is a line holding anything besides whitespace; its bytes exclude the line
// terminator ("\n" or "\r\n"). A record's global sample id is its position in the concatenation of
// all files' records in file order, so ids are stable across runs and machines for the same files.
// Memory is 16 bytes per record, 16 per run of blank lines, a message per flawed tar sample and a
// little per file: never proportional to the dataset's bytes.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/source/dataset_file_format.hpp"
#include "odbatch/source/record_rejection.hpp"
#include "odbatch/source/remote_source_options.hpp"

namespace odbatch {

class ByteSource;

struct DatasetFile {
  std::string path;  // or URL
  std::uint64_t size_bytes = 0;
  SampleId first_record = 0;  // global id of the file's first record
  std::uint64_t record_count = 0;
  DatasetFileFormat format = DatasetFileFormat::json_lines;
  std::uint64_t ignored_members = 0;  // of a tar shard: directories, links, names without a key
};

struct RecordLocation {
  std::uint32_t file = 0;  // index into DatasetIndex::files()
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t line = 0;  // 1-based in JSON Lines; 0 in an array or shard, which has `element`
  // 0-based index of the element in a JSON array file, or of the sample in a tar shard.
  std::optional<std::uint64_t> element;

  friend bool operator==(const RecordLocation&, const RecordLocation&) = default;
};

// Where a record is, for messages and the ledger: "path:line" in a JSON Lines file, and
// "path[element]@offset" in a JSON array file or tar shard (`element` as Python's
// json.load(f)[element], or the sample's position in the shard; `offset` the byte where the
// element or the sample's first header starts).
std::string describe_location(std::string_view path, const RecordLocation& location);

struct DatasetIndexOptions {
  // Where tar shards' indexes are cached (tar_index_cache.hpp); empty: shards are indexed on
  // every build.
  std::filesystem::path tar_index_cache;
  RemoteSourceOptions remote;
};

class DatasetIndex {
 public:
  // Expands `paths_or_patterns` (see expand_dataset_paths) and scans every file once with a
  // fixed-size buffer. Throws DatasetError naming the file for unreadable files, files that are
  // not regular files (never waiting on a FIFO), files that change size while being scanned,
  // compressed files, files whose name and content disagree, tar shards without samples, a file
  // reached by two names (a link, a symlink, another spelling of a URL), and JSON arrays whose
  // elements cannot be told apart (see JsonArrayScanner), and naming the files when none of them
  // holds a record.
  static DatasetIndex build(std::span<const std::string> paths_or_patterns,
                            const DatasetIndexOptions& options = {});
  // Several sources' files in one index, in source order, so ids count on from one source to the
  // next (epoch_selection.hpp mixes them). Throws as build() does, and DatasetError when two
  // sources name the same file.
  static DatasetIndex build_sources(std::span<const std::vector<std::string>> sources,
                                    const DatasetIndexOptions& options = {});

  // The number of records of each source (build(): one source).
  std::span<const std::uint64_t> source_record_counts() const { return source_records_; }

  std::uint64_t record_count() const { return offsets_.size(); }
  std::span<const DatasetFile> files() const { return files_; }
  // The open source of file `file` (< files().size()), which the record reader reads.
  const ByteSource& source(std::uint32_t file) const { return *sources_[file]; }

  // Why a record is rejected before it is read, when the index already knows (a flawed tar
  // sample: tar_shard_index.hpp).
  std::optional<RecordRejection> known_flaw(SampleId id) const;

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
  struct Flaw {
    SampleId record = 0;
    RecordRejection rejection;
  };
  // Appends the records of one file; `names` maps the identity of each file scanned so far
  // (ByteSource::identity) to its name, so that a file reached by two names is refused.
  void scan_file(std::string path, const DatasetIndexOptions& options,
                 std::map<std::string, std::string>& names);
  // Append the records of a file of each format; return the bytes read.
  std::uint64_t scan_lines(const ByteSource& source);
  std::uint64_t scan_array(const ByteSource& source);
  std::uint64_t scan_tar(const ByteSource& source, const DatasetIndexOptions& options,
                         DatasetFile& file);
  std::uint32_t file_of(SampleId id) const;
  std::uint64_t line_of(SampleId id, const DatasetFile& file) const;

  std::vector<DatasetFile> files_;
  std::vector<std::uint64_t> source_records_;
  std::vector<std::shared_ptr<const ByteSource>> sources_;
  std::vector<Flaw> flaws_;  // ascending by record
  std::vector<std::uint64_t> offsets_;
  std::vector<std::uint64_t> lengths_;
  std::vector<LineJump> line_jumps_;
};

}  // namespace odbatch
