#pragma once
// Reads indexed records (JSON Lines lines, JSON array elements) by global sample id, with
// positioned reads on files kept open.
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

namespace odbatch {

class FileDescriptor;

struct Record {
  SampleId id = 0;
  std::string text;       // the line without its terminator, or the array element
  std::string_view file;  // the file's path as the index holds it
  std::uint64_t line = 0;
  std::optional<std::uint64_t> element;  // in a JSON array file (then line is 0)
  std::uint64_t offset = 0;              // of the record's first byte in the file

  // describe_location(): "path:line" or "path[element]@offset", for messages.
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

  // The record's bytes, or a record_too_long rejection. Throws DatasetError for an id outside
  // the dataset, a failed read, or a file that shrank since it was indexed.
  std::variant<Record, RecordRejection> read(SampleId id) const;

  const DatasetIndex& index() const { return *index_; }

 private:
  std::shared_ptr<const DatasetIndex> index_;
  RecordReaderOptions options_;
  std::vector<FileDescriptor> files_;
};

}  // namespace odbatch
