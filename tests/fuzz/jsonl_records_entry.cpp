// A dataset file through the reader's stages: index, positioned reads, conversation parser. Input
// whose first byte besides whitespace is '[' is a JSON array file (DatasetIndex tells the kinds
// apart by content), any other JSONL. Input that starts like a tar shard or a gzip stream is
// another kind of file; the tar_shard target covers shards, so here it only has to index and read
// without breaking a contract.
#include <unistd.h>

#include <algorithm>
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
#include "odbatch/source/dataset_file_format.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "jsonl_records";

// The dataset file each input is written to: one per process, removed at exit.
class ScratchFile {
 public:
  ScratchFile()
      : path_(std::filesystem::temp_directory_path() /
              ("odbatch-fuzz-" + std::to_string(::getpid()) + ".jsonl")) {}
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(Input bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    expect(out.good(), kTarget, "the scratch dataset file can be written");
    return path_.native();
  }

 private:
  std::filesystem::path path_;
};

struct ExpectedRecord {
  std::string_view text;
  std::uint64_t line = 0;
};

// The records as DatasetIndex defines them, from a plain split: lines holding anything besides
// spaces, tabs, CR, VT and FF, without their "\n" or "\r\n".
std::vector<ExpectedRecord> split_records(std::string_view bytes) {
  std::vector<ExpectedRecord> records;
  std::uint64_t line = 1;
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    std::string_view text = bytes.substr(0, newline);
    bytes = newline == std::string_view::npos ? std::string_view{} : bytes.substr(newline + 1);
    if (text.find_first_not_of(" \t\r\v\f") != std::string_view::npos) {
      if (text.ends_with('\r')) text.remove_suffix(1);
      records.push_back({text, line});
    }
    ++line;
  }
  return records;
}

// Whether DatasetIndex reads `bytes` as one JSON array: '[' first, after whitespace and a byte
// order mark.
bool is_json_array(std::string_view bytes) {
  if (bytes.starts_with("\xef\xbb\xbf")) bytes.remove_prefix(3);
  const auto first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '[';
}

std::size_t placeholders(std::string_view text) {
  std::size_t count = 0;
  for (auto at = text.find(kImagePlaceholder); at != std::string_view::npos;
       at = text.find(kImagePlaceholder, at + kImagePlaceholder.size()))
    ++count;
  return count;
}

void expect_sound(const Conversation& conversation) {
  expect(std::ranges::any_of(conversation.messages,
                             [](const Message& m) { return m.role == Role::assistant; }),
         kTarget, "a conversation has an assistant message");
  std::size_t placed = 0;
  for (const Message& message : conversation.messages) {
    if (message.role != Role::system)
      expect(!message.content.empty(), kTarget, "user and assistant messages are not empty");
    const auto count = placeholders(message.content);
    expect(count == 0 || message.role == Role::user, kTarget,
           "image placeholders stand only in user messages");
    placed += count;
  }
  expect(placed == conversation.images.size(), kTarget, "one placeholder per image");
  for (const std::string& image : conversation.images)
    expect(!image.empty() && !image.starts_with('/'), kTarget,
           "image paths are relative and not empty");
}

// Parses a record read from the dataset: a sound conversation, or a rejection naming `where`.
Outcome parse_read_record(const Record& record, const std::string& where) {
  const auto parsed = parse_conversation(record.text, where);
  if (const auto* rejection = std::get_if<RecordRejection>(&parsed)) {
    expect(rejection->message.starts_with(where), kTarget,
           "a rejection's message begins with the record's location");
    return Outcome::rejected;
  }
  expect_sound(std::get<Conversation>(parsed));
  return Outcome::accepted;
}

// A JSON array file: indexing fails naming the file, or its elements are in order, apart, inside
// the file, located by element and offset, and each parses or is rejected with that location.
Outcome json_array_records(const std::string& path, std::string_view bytes) {
  std::shared_ptr<const DatasetIndex> index;
  try {
    index = std::make_shared<const DatasetIndex>(DatasetIndex::build(std::vector{path}));
  } catch (const DatasetError& e) {
    expect(std::string_view(e.what()).starts_with(path), kTarget, "a dataset error names the file");
    return Outcome::rejected;
  }
  const RecordReader reader(index, RecordReaderOptions{.max_record_bytes = kJsonlRecordLimit});
  Outcome outcome = Outcome::rejected;
  std::uint64_t previous_end = 0;
  for (SampleId id = 0; id < index->record_count(); ++id) {
    const auto location = index->locate(id);
    expect(location.offset >= previous_end && location.offset + location.length <= bytes.size(),
           kTarget, "array elements lie in order inside the file, none overlapping the next");
    previous_end = location.offset + location.length;
    const auto read = reader.read(id);
    if (const auto* too_long = std::get_if<RecordRejection>(&read)) {
      expect(too_long->reason == RecordRejectReason::record_too_long &&
                 location.length > kJsonlRecordLimit,
             kTarget, "the reader rejects exactly the records over its limit");
      continue;
    }
    const Record& record = std::get<Record>(read);
    expect(record.text == bytes.substr(location.offset, location.length), kTarget,
           "a record is its element's bytes");
    const std::string where = record.where();
    expect(where == path + "[" + std::to_string(id) + "]@" + std::to_string(location.offset),
           kTarget, "an element is located by its index and byte offset");
    if (parse_read_record(record, where) == Outcome::accepted) outcome = Outcome::accepted;
  }
  return outcome;
}

// A ".jsonl" file whose first bytes are a tar header or a compressed stream: the name and the
// content disagree, and the index refuses it naming the file.
Outcome other_format_records(const std::string& path) {
  try {
    DatasetIndex::build(std::vector{path});
  } catch (const DatasetError& e) {
    expect(std::string_view(e.what()).find(path) != std::string_view::npos, kTarget,
           "a dataset error names the file");
    return Outcome::rejected;
  }
  contract_broken(kTarget, "a .jsonl file holding a tar shard or a compressed stream is refused");
}

}  // namespace

Outcome jsonl_records(Input input) {
  static ScratchFile scratch;
  const std::string path = scratch.write(input);
  const std::string_view bytes(reinterpret_cast<const char*>(input.data()), input.size());
  if (is_tar_header(bytes) || !compression_of(bytes).empty()) return other_format_records(path);
  if (is_json_array(bytes)) return json_array_records(path, bytes);
  const auto expected = split_records(bytes);

  std::shared_ptr<const DatasetIndex> index;
  try {
    index = std::make_shared<const DatasetIndex>(DatasetIndex::build(std::vector{path}));
  } catch (const DatasetError& e) {
    expect(expected.empty(), kTarget, "the index finds a file with records");
    expect(std::string_view(e.what()).find(path) != std::string_view::npos, kTarget,
           "a dataset error names the file");
    return Outcome::rejected;
  }
  expect(index->record_count() == expected.size(), kTarget,
         "the index finds every line holding more than whitespace, and only those");
  const RecordReader reader(index, RecordReaderOptions{.max_record_bytes = kJsonlRecordLimit});

  Outcome outcome = Outcome::rejected;
  for (SampleId id = 0; id < expected.size(); ++id) {
    const auto read = reader.read(id);
    if (const auto* too_long = std::get_if<RecordRejection>(&read)) {
      expect(too_long->reason == RecordRejectReason::record_too_long &&
                 expected[id].text.size() > kJsonlRecordLimit,
             kTarget, "the reader rejects exactly the records over its limit");
      continue;
    }
    const Record& record = std::get<Record>(read);
    expect(record.text == expected[id].text && record.line == expected[id].line, kTarget,
           "a record is its line's bytes, at its line number");
    if (parse_read_record(record, record.where()) == Outcome::accepted) outcome = Outcome::accepted;
  }
  return outcome;
}

}  // namespace odbatch::fuzz
