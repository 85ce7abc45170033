#include "odbatch/source/record_reader.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/source/dataset_error.hpp"
#include "source_test_files.hpp"

namespace odbatch {
namespace {

std::shared_ptr<const DatasetIndex> shared_index(const std::vector<std::string>& paths) {
  return std::make_shared<const DatasetIndex>(DatasetIndex::build(paths));
}

Record record_of(const RecordReader& reader, SampleId id) {
  auto result = reader.read(id);
  REQUIRE(std::holds_alternative<Record>(result));
  return std::get<Record>(std::move(result));
}

}  // namespace

TEST_CASE("records read back exactly, with their file and line") {
  test::ScratchDirectory dir;
  const auto a = dir.write("a.jsonl", "{\"n\":0}\r\n\n{\"n\":1}");
  const auto b = dir.write("b.jsonl", "\n\n{\"text\":\"caf\xc3\xa9\"}\n");
  const RecordReader reader(shared_index({a, b}));

  const auto first = record_of(reader, 0);
  CHECK(first.id == 0);
  CHECK(first.text == "{\"n\":0}");
  CHECK(first.file == a);
  CHECK(first.line == 1);
  CHECK(record_of(reader, 1).text == "{\"n\":1}");
  const auto last = record_of(reader, 2);
  CHECK(last.text == "{\"text\":\"caf\xc3\xa9\"}");
  CHECK(last.where() == b + ":3");
  CHECK_THROWS_AS(reader.read(3), DatasetError);
}

TEST_CASE("a record over the byte limit is rejected with its location, the others are read") {
  test::ScratchDirectory dir;
  const auto path = dir.write("long.jsonl", "{}\n" + std::string(1 << 20, 'x') + "\n{\"a\":1}\n");
  const RecordReader reader(shared_index({path}), {.max_record_bytes = 1000});

  auto rejected = reader.read(1);
  REQUIRE(std::holds_alternative<RecordRejection>(rejected));
  const auto& rejection = std::get<RecordRejection>(rejected);
  CHECK(rejection.reason == RecordRejectReason::record_too_long);
  CHECK(rejection.message == path + ":2: record is 1048576 bytes, over the limit of 1000");
  CHECK(record_of(reader, 2).text == "{\"a\":1}");
  CHECK(record_of(RecordReader(shared_index({path})), 1).text.size() == (1u << 20));
}

TEST_CASE("a file that shrinks after indexing is an error naming the file and record") {
  test::ScratchDirectory dir;
  const auto path = dir.write("data.jsonl", "{\"a\":1}\n{\"b\":2}\n");
  const auto index = shared_index({path});
  const RecordReader reader(index);

  // Bytes appended later are not records of this epoch: the indexed ones read as they were.
  dir.write("data.jsonl", "{\"a\":1}\n{\"b\":2}\n{}\n");
  CHECK(record_of(reader, 1).text == "{\"b\":2}");

  std::filesystem::resize_file(path, 10);
  CHECK(record_of(reader, 0).text == "{\"a\":1}");
  CHECK_THROWS_WITH_AS(
      reader.read(1),
      (path + ":2: file ends inside the record (it changed since it was indexed)").c_str(),
      DatasetError);
}

TEST_CASE("threads may share one reader") {
  test::ScratchDirectory dir;
  std::string content;
  for (int i = 0; i < 2000; ++i) content += "{\"i\":" + std::to_string(i) + "}\n";
  const RecordReader reader(shared_index({dir.write("many.jsonl", content)}));

  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int pass = 0; pass < 5; ++pass) {
        for (int i = t; i < 2000; i += 3) {
          const auto result = reader.read(static_cast<SampleId>(i));
          const auto* record = std::get_if<Record>(&result);
          if (record == nullptr || record->text != "{\"i\":" + std::to_string(i) + "}") {
            ++mismatches[t];
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

}  // namespace odbatch
