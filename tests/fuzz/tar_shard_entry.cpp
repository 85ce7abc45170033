// A WebDataset tar shard through the reader's stages: index (libarchive's header walk, grouping
// by key), positioned reads of each sample, member splitting and the conversation parser.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "tar_shard";

class ScratchShard {
 public:
  ScratchShard()
      : path_(std::filesystem::temp_directory_path() /
              ("odbatch-fuzz-" + std::to_string(::getpid()) + ".tar")) {}
  ~ScratchShard() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  ScratchShard(const ScratchShard&) = delete;
  ScratchShard& operator=(const ScratchShard&) = delete;

  const std::string& write(Input bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    expect(out.good(), kTarget, "the scratch shard can be written");
    return path_.native();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace

Outcome tar_shard(Input input) {
  static ScratchShard scratch;
  const std::string& path = scratch.write(input);
  std::shared_ptr<const DatasetIndex> index;
  try {
    const std::vector<std::string> files = {path};
    index = std::make_shared<const DatasetIndex>(DatasetIndex::build(files));
  } catch (const DatasetError&) {
    return Outcome::rejected;  // no records, or not a shard at all (gzip)
  }
  if (index->files()[0].format != DatasetFileFormat::tar_shard) return Outcome::rejected;
  RecordReaderOptions options;
  options.max_record_bytes = kJsonlRecordLimit * 16;
  const RecordReader reader(index, options);
  std::uint64_t previous_end = 0;
  for (SampleId id = 0; id < index->record_count(); ++id) {
    const auto location = index->locate(id);
    expect(location.offset >= previous_end && location.length > 0 &&
               location.offset + location.length <= input.size(),
           kTarget, "samples are disjoint, in order and inside the shard");
    previous_end = location.offset + location.length;
    auto read = reader.read(id);
    if (const auto* rejection = std::get_if<RecordRejection>(&read)) {
      expect(rejection->message.starts_with(path), kTarget,
             "a rejected sample is located in its shard");
      continue;
    }
    const auto& record = std::get<Record>(read);
    expect(!record.key.empty() && record.where() == path + ":" + record.key, kTarget,
           "a sample read has its key and is located by it");
    const auto parsed = parse_conversation(record.text, record.where());
    if (const auto* rejection = std::get_if<RecordRejection>(&parsed)) {
      expect(rejection->message.starts_with(record.where()), kTarget,
             "a record's rejection names the sample");
    }
  }
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
