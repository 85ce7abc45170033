#include "odbatch/source/dataset_paths.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "odbatch/source/dataset_error.hpp"
#include "source_test_files.hpp"

namespace odbatch {
namespace {

std::vector<std::string> expand(const std::vector<std::string>& entries) {
  return expand_dataset_paths(entries);
}

}  // namespace

TEST_CASE("each pattern's matches are sorted bytewise, entries keep their order") {
  test::ScratchDirectory dir;
  for (const char* name : {"b.jsonl", "a10.jsonl", "B.jsonl", "a2.jsonl", "a.jsonl", "z.txt"}) {
    dir.write(name, "{}\n");
  }
  CHECK(expand({dir / "*.jsonl"}) == std::vector<std::string>{dir / "B.jsonl", dir / "a.jsonl",
                                                              dir / "a10.jsonl", dir / "a2.jsonl",
                                                              dir / "b.jsonl"});
  CHECK(
      expand({dir / "z.txt", dir / "a?.jsonl", dir / "[bB].jsonl"}) ==
      std::vector<std::string>{dir / "z.txt", dir / "a2.jsonl", dir / "B.jsonl", dir / "b.jsonl"});
}

TEST_CASE("an entry matching nothing is an error naming it") {
  test::ScratchDirectory dir;
  dir.write("a.jsonl", "{}\n");
  const auto pattern = dir / "*.json";
  CHECK_THROWS_WITH_AS(expand({dir / "a.jsonl", pattern}),
                       ("dataset pattern '" + pattern + "' matches no file").c_str(), DatasetError);
  const auto missing = dir / "missing.jsonl";
  CHECK_THROWS_WITH_AS(expand({missing}), ("dataset file '" + missing + "' does not exist").c_str(),
                       DatasetError);
  CHECK_THROWS_WITH_AS(expand({}), "no dataset files given", DatasetError);
}

TEST_CASE("a directory the pattern cannot read is an error, not skipped") {
  test::ScratchDirectory dir;
  std::filesystem::create_symlink("loop", dir / "loop");  // opening it fails with ELOOP
  const auto pattern = dir / "loop/*.jsonl";
  CHECK_THROWS_WITH_AS(expand({pattern}),
                       ("dataset pattern '" + pattern + "' could not be expanded: cannot read " +
                        dir / "loop" + ": Too many levels of symbolic links")
                           .c_str(),
                       DatasetError);
}

TEST_CASE("a file listed twice, under any spelling, is an error") {
  test::ScratchDirectory dir;
  const auto a = dir.write("a.jsonl", "{}\n");
  dir.write("b.jsonl", "{}\n");
  CHECK_THROWS_WITH_AS(
      expand({a, dir / "*.jsonl"}),
      ("dataset file '" + a + "' (from '" + dir / "*.jsonl" + "') is listed twice").c_str(),
      DatasetError);
  const auto other_spelling = dir / "./a.jsonl";
  CHECK_THROWS_WITH_AS(expand({a, other_spelling}),
                       ("dataset file '" + other_spelling + "' (from '" + other_spelling +
                        "') is listed twice, also as '" + a + "'")
                           .c_str(),
                       DatasetError);
}

TEST_CASE("an @list that is not a regular file is refused at once, naming the list") {
  test::ScratchDirectory dir;
  const auto fifo = dir.make_fifo("list.fifo");
  std::string error;
  CHECK(test::returns_before_deadline(fifo, [&] {
    try {
      expand({"@" + fifo});
    } catch (const DatasetError& e) {
      error = e.what();
    }
  }));
  CHECK(error == "dataset list '" + fifo + "': not a regular file (a FIFO)");
  CHECK_THROWS_WITH_AS(expand({"@/dev/zero"}),
                       "dataset list '/dev/zero': not a regular file (a character device)",
                       DatasetError);
  CHECK_THROWS_WITH_AS(
      expand({"@" + dir.path().string()}),
      ("dataset list '" + dir.path().string() + "': not a regular file (a directory)").c_str(),
      DatasetError);
}

}  // namespace odbatch
