#include "odbatch/source/record_reader.hpp"

#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/file_descriptor.hpp"

namespace odbatch {

std::string Record::where() const {
  return describe_location(file, {0, offset, text.size(), line, element});
}

RecordReader::RecordReader(std::shared_ptr<const DatasetIndex> index, RecordReaderOptions options)
    : index_(std::move(index)), options_(options) {
  files_.reserve(index_->files().size());
  for (const auto& file : index_->files()) {
    auto fd = FileDescriptor::open_regular_file(file.path);
    const auto size = fd.size_when_opened();
    if (size != file.size_bytes) {
      throw DatasetError(file.path + ": changed since it was indexed (" +
                         std::to_string(file.size_bytes) + " bytes then, " + std::to_string(size) +
                         " now)");
    }
    files_.push_back(std::move(fd));
  }
}

RecordReader::RecordReader(RecordReader&&) noexcept = default;
RecordReader& RecordReader::operator=(RecordReader&&) noexcept = default;
RecordReader::~RecordReader() = default;

std::variant<Record, RecordRejection> RecordReader::read(SampleId id) const {
  const auto location = index_->locate(id);
  const std::string& path = index_->files()[location.file].path;
  Record record{id, {}, path, location.line, location.element, location.offset};
  if (location.length > options_.max_record_bytes) {
    return RecordRejection{RecordRejectReason::record_too_long,
                           record.where() + ": record is " + std::to_string(location.length) +
                               " bytes, over the limit of " +
                               std::to_string(options_.max_record_bytes)};
  }
  record.text.resize(location.length);
  const auto got =
      files_[location.file].read_at(record.text.data(), record.text.size(), location.offset);
  if (got != record.text.size()) {
    throw DatasetError(record.where() +
                       ": file ends inside the record (it changed since it "
                       "was indexed)");
  }
  return record;
}

}  // namespace odbatch
