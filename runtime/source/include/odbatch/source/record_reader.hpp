#pragma once
// Reads indexed records (JSON Lines lines, JSON array elements, tar shard samples) by global
// sample id, with positioned reads on the index's open sources.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "odbatch/core/sample.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader_options.hpp"
#include "odbatch/source/record_rejection.hpp"
#include "odbatch/source/tar_sample.hpp"

namespace odbatch {

struct Record {
  SampleId id = 0;
  // The line without its terminator, the array element, or a tar sample's conversation member.
  std::string text;
  std::string_view file;  // the file's path as the index holds it
  std::uint64_t line = 0;
  std::optional<std::uint64_t> element;  // in a JSON array file or tar shard (then line is 0)
  std::uint64_t offset = 0;              // of the record's first byte in the file
  // A tar sample's key and its members besides the conversation (its images).
  std::string key;
  std::vector<TarMember> members;

  // For messages: "shard.tar:key" for a tar sample, else describe_location(): "path:line" or
  // "path[element]@offset".
  std::string where() const;
};

// Thread-safe: read() is const and uses positioned reads only, so threads may share one reader.
class RecordReader {
 public:
  // Opens every file of `index` and checks each still has its indexed size. Holds one file
  // descriptor per dataset file. Throws DatasetError naming the file on failure.
  explicit RecordReader(std::shared_ptr<const DatasetIndex> index,
                        RecordReaderOptions options = {});
  RecordReader(RecordReader&&) noexcept;
  RecordReader& operator=(RecordReader&&) noexcept;
  ~RecordReader();

  // The record's bytes, or why it is rejected before parsing: record_too_long, a flaw the index
  // found (tar_shard_index.hpp), or a tar sample without its conversation member
  // (missing_member) or damaged since it was indexed. Throws DatasetError for an id outside the
  // dataset, a failed read, or a file that shrank since it was indexed.
  std::variant<Record, RecordRejection> read(SampleId id) const;

  const DatasetIndex& index() const { return *index_; }

 private:
  // Splits a tar sample's bytes in `record.text` into its conversation and other members.
  std::optional<RecordRejection> split_sample(Record& record) const;

  std::shared_ptr<const DatasetIndex> index_;
  RecordReaderOptions options_;
};

}  // namespace odbatch
