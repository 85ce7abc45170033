#include "odbatch/source/record_reader.hpp"

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/dataset_error.hpp"

namespace odbatch {

std::string Record::where() const {
  if (!key.empty()) return std::string(file) + ":" + key;
  return describe_location(file, {0, offset, text.size(), line, element});
}

RecordReader::RecordReader(std::shared_ptr<const DatasetIndex> index, RecordReaderOptions options)
    : index_(std::move(index)), options_(std::move(options)) {}

RecordReader::RecordReader(RecordReader&&) noexcept = default;
RecordReader& RecordReader::operator=(RecordReader&&) noexcept = default;
RecordReader::~RecordReader() = default;

std::variant<Record, RecordRejection> RecordReader::read(SampleId id) const {
  const auto location = index_->locate(id);
  const auto& file = index_->files()[location.file];
  Record record{id, {}, file.path, location.line, location.element, location.offset, {}, {}};
  if (auto flaw = index_->known_flaw(id)) return std::move(*flaw);
  if (location.length > options_.max_record_bytes) {
    return RecordRejection{RecordRejectReason::record_too_long,
                           record.where() + ": record is " + std::to_string(location.length) +
                               " bytes, over the limit of " +
                               std::to_string(options_.max_record_bytes)};
  }
  record.text.resize(location.length);
  const auto got = index_->source(location.file)
                       .read_at(record.text.data(), record.text.size(), location.offset);
  if (got != record.text.size()) {
    throw DatasetError(record.where() +
                       ": file ends inside the record (it changed since it "
                       "was indexed)");
  }
  if (file.format == DatasetFileFormat::tar_shard) {
    if (auto rejection = split_sample(record)) return std::move(*rejection);
  }
  return record;
}

std::optional<RecordRejection> RecordReader::split_sample(Record& record) const {
  auto split = split_tar_sample(record.text, record.offset, record.file);
  if (auto* rejection = std::get_if<RecordRejection>(&split)) return std::move(*rejection);
  auto& sample = std::get<TarSample>(split);
  record.key = std::move(sample.key);
  std::string names;
  for (auto it = sample.members.begin(); it != sample.members.end(); ++it) {
    if (it->extension == options_.conversation_member) {
      record.text.assign(it->bytes.begin(), it->bytes.end());
      sample.members.erase(it);
      record.members = std::move(sample.members);
      return std::nullopt;
    }
    names += (names.empty() ? "" : ", ") + it->path;
  }
  return RecordRejection{RecordRejectReason::missing_member,
                         record.where() + ": no '" + options_.conversation_member +
                             "' member holding the conversation (members: " + names + ")"};
}

}  // namespace odbatch
