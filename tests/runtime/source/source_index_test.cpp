#include "odbatch/source/dataset_index.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "odbatch/source/dataset_error.hpp"
#include "source_test_files.hpp"

namespace odbatch {
namespace {

DatasetIndex index_of(const std::vector<std::string>& paths) {
  return DatasetIndex::build(paths);
}

// The record's bytes as the index locates them in `content`.
std::string located_text(const DatasetIndex& index, SampleId id, const std::string& content) {
  const auto location = index.locate(id);
  return content.substr(location.offset, location.length);
}

}  // namespace

TEST_CASE("blank lines are skipped, terminators excluded, a last line without newline kept") {
  test::ScratchDirectory dir;
  const std::string content = "{\"a\":1}\n\n  \t\n{\"b\":2}\r\n\r\n \r\n{\"c\":3}";
  const auto path = dir.write("mixed.jsonl", content);
  const auto index = index_of({path});

  REQUIRE(index.record_count() == 3);
  CHECK(index.locate(0) == RecordLocation{0, 0, 7, 1, std::nullopt});
  CHECK(index.locate(1) == RecordLocation{0, 13, 7, 4, std::nullopt});
  CHECK(index.locate(2) == RecordLocation{0, 27, 7, 7, std::nullopt});
  CHECK(located_text(index, 1, content) == "{\"b\":2}");
  CHECK(located_text(index, 2, content) == "{\"c\":3}");
  CHECK(index.describe(2) == path + ":7");
  REQUIRE(index.files().size() == 1);
  CHECK(index.files()[0].size_bytes == content.size());
  CHECK(index.files()[0].record_count == 3);
}

TEST_CASE("CRLF line endings are not part of the records") {
  test::ScratchDirectory dir;
  const std::string content = "{\"x\":\"1\"}\r\n{\"x\":\"22\"}\r\n";
  const auto index = index_of({dir.write("crlf.jsonl", content)});
  REQUIRE(index.record_count() == 2);
  CHECK(located_text(index, 0, content) == "{\"x\":\"1\"}");
  CHECK(located_text(index, 1, content) == "{\"x\":\"22\"}");
  CHECK(index.locate(1).line == 2);
}

TEST_CASE("whitespace inside a record and a lone carriage return mid-line are kept") {
  test::ScratchDirectory dir;
  const std::string content = "  {\"a\": 1}  \n{\"b\":\r2}\n";
  const auto index = index_of({dir.write("ws.jsonl", content)});
  REQUIRE(index.record_count() == 2);
  CHECK(located_text(index, 0, content) == "  {\"a\": 1}  ");
  CHECK(located_text(index, 1, content) == "{\"b\":\r2}");
}

TEST_CASE("records longer than the scan buffer, and a CRLF split across buffer fills") {
  test::ScratchDirectory dir;
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  // The first line ends with '\r' as the last byte of the first 1 MiB fill, '\n' the next fill's
  // first byte; the second line is longer than a whole fill.
  std::string first(kMiB, 'a');
  first.back() = '\r';
  const std::string second(kMiB + 17, 'b');
  const std::string content = first + "\n" + second + "\n\n{}";
  const auto index = index_of({dir.write("long.jsonl", content)});

  REQUIRE(index.record_count() == 3);
  CHECK(index.locate(0) == RecordLocation{0, 0, kMiB - 1, 1, std::nullopt});
  CHECK(index.locate(1) == RecordLocation{0, kMiB + 1, kMiB + 17, 2, std::nullopt});
  CHECK(index.locate(2) == RecordLocation{0, 2 * kMiB + 20, 2, 4, std::nullopt});
}

TEST_CASE("empty and blank-only files hold no records, ids continue across files in order") {
  test::ScratchDirectory dir;
  const auto empty = dir.write("0_empty.jsonl", "");
  const auto first = dir.write("1.jsonl", "{}\n\n{\"k\":1}\n");
  const auto blank = dir.write("2_blank.jsonl", "\n \n\r\n");
  const auto second = dir.write("3.jsonl", "\n{\"k\":2}\n");
  const auto index = index_of({empty, first, blank, second});

  REQUIRE(index.record_count() == 3);
  REQUIRE(index.files().size() == 4);
  CHECK(index.files()[0].record_count == 0);
  CHECK(index.files()[2].record_count == 0);
  CHECK(index.files()[3].first_record == 2);
  CHECK(index.locate(0) == RecordLocation{1, 0, 2, 1, std::nullopt});
  CHECK(index.locate(1) == RecordLocation{1, 4, 7, 3, std::nullopt});
  CHECK(index.locate(2) == RecordLocation{3, 1, 7, 2, std::nullopt});
  CHECK(index.describe(2) == second + ":2");
}

TEST_CASE("a dataset without any record is an error naming its files") {
  test::ScratchDirectory dir;
  const auto empty = dir.write("0_empty.jsonl", "");
  CHECK_THROWS_WITH_AS(index_of({empty}),
                       ("dataset file '" + empty +
                        "' holds no records (no line besides whitespace, or an empty JSON array)")
                           .c_str(),
                       DatasetError);
  const auto blank = dir.write("1_blank.jsonl", "\n \n\r\n");
  CHECK_THROWS_WITH_AS(index_of({empty, blank}),
                       ("dataset files '" + empty + "', '" + blank +
                        "' hold no records (no line besides whitespace, or an empty JSON array)")
                           .c_str(),
                       DatasetError);
  for (const auto* name : {"2.jsonl", "3.jsonl", "4.jsonl"}) dir.write(name, "");
  CHECK_THROWS_WITH_AS(index_of({dir / "*.jsonl"}),
                       doctest::Contains("' and 2 more hold no records"), DatasetError);
}

TEST_CASE("line numbers count on correctly after runs of blank lines in several files") {
  test::ScratchDirectory dir;
  const auto a = dir.write("a.jsonl", "{}\n{}\n\n\n{}\n{}\n\n{}");
  const auto b = dir.write("b.jsonl", "{}\n{}\n\n{}");
  const auto index = index_of({a, b});
  std::vector<std::uint64_t> lines;
  for (SampleId id = 0; id < index.record_count(); ++id) lines.push_back(index.locate(id).line);
  CHECK(lines == std::vector<std::uint64_t>{1, 2, 5, 6, 8, 1, 2, 4});
}

TEST_CASE("an id outside the dataset is an error naming it") {
  test::ScratchDirectory dir;
  const auto index = index_of({dir.write("one.jsonl", "{}\n")});
  CHECK_THROWS_WITH_AS(index.locate(1), "sample id 1 is outside the dataset of 1 records",
                       DatasetError);
}

TEST_CASE("ids and the fingerprint are stable across re-indexing and moving the dataset") {
  test::ScratchDirectory dir;
  const std::string a = "{\"i\":0}\n\n{\"i\":1}\n";
  const std::string b = "{\"i\":2}\r\n{\"i\":3}";
  const auto first = index_of({dir.write("x/a.jsonl", a), dir.write("x/b.jsonl", b)});
  const auto again = index_of({dir / "x/*.jsonl"});
  const auto moved = index_of({dir.write("y/a.jsonl", a), dir.write("y/b.jsonl", b)});

  REQUIRE(again.record_count() == first.record_count());
  for (SampleId id = 0; id < first.record_count(); ++id) {
    CHECK(again.locate(id) == first.locate(id));
    CHECK(moved.locate(id) == first.locate(id));
  }
  CHECK(again.fingerprint() == first.fingerprint());
  CHECK(moved.fingerprint() == first.fingerprint());

  const auto grown = index_of({dir.write("z/a.jsonl", a + "{}\n"), dir.write("z/b.jsonl", b)});
  const auto renamed = index_of({dir.write("w/c.jsonl", a), dir.write("w/b.jsonl", b)});
  const auto swapped = index_of({dir / "y/b.jsonl", dir / "y/a.jsonl"});
  CHECK(grown.fingerprint() != first.fingerprint());
  CHECK(renamed.fingerprint() != first.fingerprint());
  CHECK(swapped.fingerprint() != first.fingerprint());
}

TEST_CASE("unreadable entries are errors naming the file") {
  test::ScratchDirectory dir;
  std::filesystem::create_directories(dir / "sub.jsonl");
  CHECK_THROWS_WITH_AS(index_of({dir / "sub.jsonl"}),
                       (dir / "sub.jsonl" + ": not a regular file (a directory)").c_str(),
                       DatasetError);
  const auto secret = dir.write("secret.jsonl", "{}\n");
  std::filesystem::permissions(secret, std::filesystem::perms::none);
  if (::access(secret.c_str(), R_OK) != 0) {  // root reads anything
    CHECK_THROWS_WITH_AS(index_of({secret}), (secret + ": cannot open: Permission denied").c_str(),
                         DatasetError);
  }
}

TEST_CASE("a FIFO among the dataset files is refused at once, not waited on") {
  test::ScratchDirectory dir;
  dir.write("a.jsonl", "{}\n");
  const auto fifo = dir.make_fifo("b.jsonl");
  std::string error;
  CHECK(test::returns_before_deadline(fifo, [&] {
    try {
      index_of({dir / "*.jsonl"});
    } catch (const DatasetError& e) {
      error = e.what();
    }
  }));
  CHECK(error == fifo + ": not a regular file (a FIFO)");
}

}  // namespace odbatch
