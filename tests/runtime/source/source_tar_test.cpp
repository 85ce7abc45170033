// WebDataset tar shards: member names to keys, brace patterns and shard lists, the shard index
// (ustar, pax and GNU tar), its cache, reading samples and their members, and every flaw a shard
// can have, each rejected alone with its location.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "odbatch/source/brace_expansion.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/dataset_paths.hpp"
#include "odbatch/source/file_byte_source.hpp"
#include "odbatch/source/record_reader.hpp"
#include "odbatch/source/tar_index_cache.hpp"
#include "odbatch/source/tar_sample.hpp"
#include "odbatch/source/webdataset_name.hpp"
#include "source_test_files.hpp"
#include "tar_builder.hpp"

namespace odbatch {
namespace {

using test::tar_bytes;
using test::TarEntry;
using test::TarFormat;

const std::string kTurns =
    R"("conversations": [{"from": "human", "value": "<image>\nWhat is it?"}, )"
    R"({"from": "gpt", "value": "A cat."}])";

std::string record_json(const std::string& extra = "") {
  return "{" + extra + kTurns + "}";
}

// Three samples: one image named by its record, one image found by extension, a text-only one.
std::vector<TarEntry> three_samples(const std::string& prefix = "") {
  return {
      {prefix + "s0.json", record_json(R"("image": "jpg", )")},
      {prefix + "s0.jpg", "JPEG-BYTES-0"},
      {prefix + "s1.json", record_json()},
      {prefix + "s1.png", "PNG-BYTES-1"},
      {prefix + "s2.json", R"({"conversations": [{"from": "human", "value": "hi"}, )"
                           R"({"from": "gpt", "value": "hello"}]})"},
  };
}

std::shared_ptr<const DatasetIndex> index_of(const std::vector<std::string>& paths,
                                             const DatasetIndexOptions& options = {}) {
  return std::make_shared<const DatasetIndex>(DatasetIndex::build(paths, options));
}

Record record_of(const RecordReader& reader, SampleId id) {
  auto result = reader.read(id);
  if (auto* rejected = std::get_if<RecordRejection>(&result)) FAIL(rejected->message);
  return std::get<Record>(std::move(result));
}

RecordRejection rejection_of(const RecordReader& reader, SampleId id) {
  auto result = reader.read(id);
  REQUIRE(std::holds_alternative<RecordRejection>(result));
  return std::get<RecordRejection>(std::move(result));
}

}  // namespace

TEST_CASE("member names split into key and extension as webdataset splits them") {
  auto name = split_webdataset_name("train/000017.seg.PNG");
  REQUIRE(name);
  CHECK(name->key == "train/000017");
  CHECK(name->extension == "seg.png");
  name = split_webdataset_name("a.b/c.json");
  REQUIRE(name);
  CHECK(name->key == "a.b/c");
  CHECK(name->extension == "json");
  CHECK_FALSE(split_webdataset_name("README"));
  CHECK_FALSE(split_webdataset_name("dir/.hidden.json"));
  CHECK_FALSE(split_webdataset_name("dir.x/noext"));
  CHECK(is_image_extension("jpg"));
  CHECK(is_image_extension("0.webp"));
  CHECK(is_image_extension("left.jpeg"));
  CHECK_FALSE(is_image_extension("json"));
  CHECK_FALSE(is_image_extension("jpg.txt"));
}

TEST_CASE("brace patterns expand to ranges and alternatives, in order") {
  CHECK(
      expand_braces("shard-{000..003}.tar") ==
      std::vector<std::string>{"shard-000.tar", "shard-001.tar", "shard-002.tar", "shard-003.tar"});
  CHECK(expand_braces("{train,val}-{1..2}") ==
        std::vector<std::string>{"train-1", "train-2", "val-1", "val-2"});
  CHECK(expand_braces("p{3..1}") == std::vector<std::string>{"p3", "p2", "p1"});
  CHECK(expand_braces("plain{x}.tar") == std::vector<std::string>{"plain{x}.tar"});
  CHECK(expand_braces("open{1..2") == std::vector<std::string>{"open{1..2"});
  CHECK(expand_braces("s-{8..10}") == std::vector<std::string>{"s-8", "s-9", "s-10"});
  CHECK_THROWS_WITH_AS(expand_braces("s-{a..c}"),
                       "dataset pattern 's-{a..c}': the range {a..c} does not go from a number "
                       "to a number",
                       DatasetError);
  CHECK_THROWS_WITH_AS(expand_braces("{0..9}{0..9}{0..9}", 100),
                       "dataset pattern '{0..9}{0..9}{0..9}' expands to more than 100 names",
                       DatasetError);
}

TEST_CASE("a brace range over the whole 64-bit range is refused before any name is made") {
  // Its count, hi - lo + 1, is 2^64: computed in 64 bits it wrapped to 0 and passed the limit.
  CHECK_THROWS_WITH_AS(
      expand_braces("shard-{-9223372036854775808..9223372036854775807}.tar"),
      "dataset pattern 'shard-{-9223372036854775808..9223372036854775807}.tar' expands to more "
      "than 1000000 names",
      DatasetError);
  CHECK_THROWS_WITH_AS(
      expand_braces("{9223372036854775807..-9223372036854775808}"),
      "dataset pattern '{9223372036854775807..-9223372036854775808}' expands to more than "
      "1000000 names",
      DatasetError);
  CHECK_THROWS_WITH_AS(expand_braces("shard-{0..18446744073709551615}.tar"),
                       "dataset pattern 'shard-{0..18446744073709551615}.tar': the range "
                       "{0..18446744073709551615} has an end outside the 64-bit integers "
                       "(-9223372036854775808 to 9223372036854775807)",
                       DatasetError);
  CHECK_THROWS_WITH_AS(expand_braces("s-{1..1000001}"),
                       "dataset pattern 's-{1..1000001}' expands to more than 1000000 names",
                       DatasetError);
  CHECK(expand_braces("s-{1..1000000}").size() == 1'000'000);
  // The ends of the range are written whole, the lowest included.
  CHECK(expand_braces("{-9223372036854775808..-9223372036854775807}") ==
        std::vector<std::string>{"-9223372036854775808", "-9223372036854775807"});
  CHECK(expand_braces("{9223372036854775806..9223372036854775807}") ==
        std::vector<std::string>{"9223372036854775806", "9223372036854775807"});
}

TEST_CASE("shard lists: braces, @list files and URLs in the dataset's file list") {
  test::ScratchDirectory dir;
  for (int i = 0; i < 3; ++i) dir.write("shards/s-" + std::to_string(i) + ".tar", "x");
  const std::vector<std::string> braces = {dir / "shards/s-{0..2}.tar"};
  CHECK(expand_dataset_paths(braces) == std::vector<std::string>{dir / "shards/s-0.tar",
                                                                 dir / "shards/s-1.tar",
                                                                 dir / "shards/s-2.tar"});
  const auto list = dir.write("shards/list.txt",
                              "# training shards\ns-2.tar\n\n  s-0.tar  \nhttp://h/x-{0..1}.tar\n");
  const std::vector<std::string> listed = {"@" + list};
  CHECK(expand_dataset_paths(listed) ==
        std::vector<std::string>{dir / "shards/s-2.tar", dir / "shards/s-0.tar", "http://h/x-0.tar",
                                 "http://h/x-1.tar"});
  const std::vector<std::string> twice = {"http://h/a.tar", "http://h/a.tar"};
  CHECK_THROWS_WITH_AS(expand_dataset_paths(twice),
                       "dataset file 'http://h/a.tar' (from 'http://h/a.tar') is listed twice",
                       DatasetError);
  const std::vector<std::string> empty_list = {"@" + dir.write("empty.txt", "# none\n")};
  CHECK_THROWS_AS(expand_dataset_paths(empty_list), DatasetError);
}

TEST_CASE("a shard's samples are indexed and read with their members, in every tar format") {
  for (const auto format : {TarFormat::ustar, TarFormat::pax, TarFormat::gnu}) {
    CAPTURE(static_cast<int>(format));
    test::ScratchDirectory dir;
    // GNU and pax carry long member names in extra headers; ustar splits them into a prefix.
    const std::string prefix = format == TarFormat::ustar ? "dir/" : std::string(120, 'd') + "/";
    const auto shard = dir.write("shard.tar", tar_bytes(three_samples(prefix), format));
    const auto index = index_of({shard});
    REQUIRE(index->record_count() == 3);
    CHECK(index->files()[0].format == DatasetFileFormat::tar_shard);
    CHECK(index->files()[0].record_count == 3);
    CHECK(index->locate(1).element == 1);
    CHECK(index->describe(0) == shard + "[0]@0");

    const RecordReader reader(index);
    const auto s0 = record_of(reader, 0);
    CHECK(s0.key == prefix + "s0");
    CHECK(s0.where() == shard + ":" + prefix + "s0");
    CHECK(s0.text == record_json(R"("image": "jpg", )"));
    REQUIRE(s0.members.size() == 1);
    CHECK(s0.members[0].extension == "jpg");
    CHECK(std::string(s0.members[0].bytes.begin(), s0.members[0].bytes.end()) == "JPEG-BYTES-0");
    const auto s1 = record_of(reader, 1);
    REQUIRE(s1.members.size() == 1);
    CHECK(s1.members[0].path == prefix + "s1.png");
    CHECK(record_of(reader, 2).members.empty());
  }
}

TEST_CASE("a sample's images: named by extension or file name, or its image members in order") {
  TarSample sample{"k",
                   {{"k.10.jpg", "10.jpg", {}},
                    {"k.txt", "txt", {}},
                    {"k.2.png", "2.png", {}},
                    {"k.webp", "webp", {}}}};
  const auto images = implicit_images(sample.members);
  REQUIRE(images.size() == 3);
  CHECK(images[0]->extension == "webp");
  CHECK(images[1]->extension == "2.png");
  CHECK(images[2]->extension == "10.jpg");
  CHECK(find_member(sample.members, "2.png") == &sample.members[2]);
  CHECK(find_member(sample.members, "k.10.jpg") == &sample.members[0]);
  CHECK(find_member(sample.members, "jpg") == nullptr);
}

TEST_CASE("directories, links and names without a key are not samples, and are counted") {
  test::ScratchDirectory dir;
  auto entries = three_samples();
  entries.insert(entries.begin(), {"dir", "", true});
  entries.insert(entries.begin() + 3, {"README", "not a sample member"});
  const auto index = index_of({dir.write("shard.tar", tar_bytes(entries))});
  CHECK(index->record_count() == 3);
  CHECK(index->files()[0].ignored_members == 2);
}

TEST_CASE("key collisions and repeated extensions reject their sample alone") {
  test::ScratchDirectory dir;
  const auto shard = dir.write(
      "shard.tar", tar_bytes({{"a.json", record_json()},
                              {"a.jpg", "1"},
                              {"b.json", record_json()},
                              {"b.json", record_json()},
                              {"c.json", R"({"conversations": [{"from": "human", "value": "q"}, )"
                                         R"({"from": "gpt", "value": "r"}]})"},
                              {"a.png", "again"}}));
  const auto index = index_of({shard});
  REQUIRE(index->record_count() == 4);
  const RecordReader reader(index);
  CHECK(record_of(reader, 0).key == "a");
  const auto duplicate = rejection_of(reader, 1);
  CHECK(duplicate.reason == RecordRejectReason::duplicate_member);
  CHECK(duplicate.message ==
        shard + ":b: two members with the extension 'json' (the second: b.json)");
  CHECK(record_of(reader, 2).key == "c");
  const auto collision = rejection_of(reader, 3);
  CHECK(collision.reason == RecordRejectReason::key_collision);
  CHECK(collision.message ==
        shard +
            ":a: an earlier sample of the shard has this key (members of one sample must be "
            "adjacent)");
}

TEST_CASE("a sample without its conversation member is rejected naming the members it has") {
  test::ScratchDirectory dir;
  const auto shard =
      dir.write("shard.tar", tar_bytes({{"x.jpg", "1"}, {"x.txt", "a caption"}, {"y.json", "{}"}}));
  const RecordReader reader(index_of({shard}));
  const auto missing = rejection_of(reader, 0);
  CHECK(missing.reason == RecordRejectReason::missing_member);
  CHECK(missing.message ==
        shard + ":x: no 'json' member holding the conversation (members: x.jpg, x.txt)");
  RecordReaderOptions options;
  options.conversation_member = "txt";
  const RecordReader by_text(index_of({shard}), options);
  CHECK(record_of(by_text, 0).text == "a caption");
}

TEST_CASE("a truncated shard keeps its whole samples and rejects the one it cuts") {
  test::ScratchDirectory dir;
  const auto whole = tar_bytes(three_samples());
  // Cut inside the last sample's data, and at a clean sample boundary with no end blocks.
  const auto cut = dir.write("cut.tar", whole.substr(0, whole.find("hello") - 20));
  const auto index = index_of({cut});
  REQUIRE(index->record_count() == 3);
  const RecordReader reader(index);
  CHECK(record_of(reader, 0).key == "s0");
  CHECK(record_of(reader, 1).key == "s1");
  const auto damaged = rejection_of(reader, 2);
  CHECK(damaged.reason == RecordRejectReason::damaged_shard);
  CHECK(damaged.message.starts_with(cut + ":s2: damaged tar shard after byte "));
  CHECK(damaged.message.find("s2.json ends past the end of the shard") != std::string::npos);
  CHECK(damaged.message.ends_with("; this sample and any after it in the shard are lost"));

  // The header block holding s2.json's name starts where s1 ends.
  const auto clean = dir.write("clean.tar", whole.substr(0, whole.find("s2.json")));
  const auto clean_index = index_of({clean});
  CHECK(clean_index->record_count() == 2);
  CHECK(clean_index->known_flaw(1) == std::nullopt);
}

TEST_CASE("a damaged header rejects the sample it falls in, reading resumes at the next header") {
  test::ScratchDirectory dir;
  auto entries = three_samples();
  entries.push_back({"s3.json", record_json()});
  entries.push_back({"s3.jpg", std::string(3000, 'j')});
  auto bytes = tar_bytes(entries);
  // Break the checksum of s1.png's header: s1 is lost, s2 and s3 are found again.
  bytes[bytes.find("s1.png") + 100] ^= 0x55;
  const auto shard = dir.write("damaged.tar", bytes);
  const auto index = index_of({shard});
  REQUIRE(index->record_count() == 4);
  const RecordReader reader(index);
  CHECK(record_of(reader, 0).key == "s0");
  const auto damaged = rejection_of(reader, 1);
  CHECK(damaged.reason == RecordRejectReason::damaged_shard);
  CHECK(damaged.message.starts_with(shard + ":s1: damaged tar shard after byte "));
  CHECK(damaged.message.find("Damaged tar archive") != std::string::npos);
  const auto s2_header = bytes.find("s2.json") / 512 * 512;
  CHECK(damaged.message.ends_with("; this sample is lost, the shard is read again from byte " +
                                  std::to_string(s2_header)));
  CHECK(index->locate(2).offset == s2_header);
  CHECK(record_of(reader, 2).key == "s2");
  CHECK(record_of(reader, 3).members.at(0).bytes.size() == 3000);

  // A damaged first header of a sample: the sample before it may have had more members, so it is
  // rejected too; the damaged sample's other members, without its record, are missing_member.
  auto first = tar_bytes(entries);
  first[first.find("s3.json") + 100] ^= 0x55;
  const RecordReader first_reader(index_of({dir.write("first.tar", first)}));
  CHECK(rejection_of(first_reader, 2).reason == RecordRejectReason::damaged_shard);
  CHECK(rejection_of(first_reader, 3).reason == RecordRejectReason::missing_member);

  // A damaged header in the middle of a sample: its members found again after it carry the
  // sample's key, and are rejected as a collision rather than read as a sample without them.
  auto three_members = entries;
  three_members.insert(three_members.begin() + 4, {"s1.txt", "a caption"});
  auto mid = tar_bytes(three_members);
  mid[mid.find("s1.png") + 100] ^= 0x55;
  const auto mid_index = index_of({dir.write("mid.tar", mid)});
  REQUIRE(mid_index->record_count() == 5);
  const RecordReader mid_reader(mid_index);
  CHECK(rejection_of(mid_reader, 1).reason == RecordRejectReason::damaged_shard);
  CHECK(rejection_of(mid_reader, 2).reason == RecordRejectReason::key_collision);
  CHECK(record_of(mid_reader, 3).key == "s2");
}

TEST_CASE("compressed shards are refused, naming the file") {
  test::ScratchDirectory dir;
  const auto gz =
      dir.write("shard.tar.gz", std::string("\x1f\x8b\x08\x00", 4) + std::string(600, 'x'));
  const std::vector<std::string> files = {gz};
  CHECK_THROWS_WITH_AS(DatasetIndex::build(files),
                       (gz + ": is gzip-compressed; records cannot be read from it by offset "
                             "(decompress it, e.g. shards as plain .tar)")
                           .c_str(),
                       DatasetError);
}

TEST_CASE("shards and JSON Lines in one dataset: ids follow the files' order") {
  test::ScratchDirectory dir;
  const auto jsonl = dir.write("a.jsonl", record_json() + "\n" + record_json() + "\n");
  const auto shard = dir.write("b.tar", tar_bytes(three_samples()));
  const auto index = index_of({jsonl, shard});
  CHECK(index->record_count() == 5);
  const RecordReader reader(index);
  CHECK(record_of(reader, 1).line == 2);
  CHECK(record_of(reader, 2).key == "s0");
  CHECK(record_of(reader, 4).key == "s2");
}

TEST_CASE("a shard's index is cached by name and version, and rebuilt when the shard changes") {
  test::ScratchDirectory dir;
  const auto cache = dir.path() / "cache";
  const auto bytes = tar_bytes(three_samples());
  const auto shard = dir.write("shard.tar", bytes);
  const FileByteSource source(shard);
  const auto first = cached_tar_shard_index(source, cache);
  REQUIRE(std::distance(std::filesystem::directory_iterator(cache), {}) == 1);
  CHECK(first == index_tar_shard(source));

  // Same size and modification time: the cache is trusted, even for bytes that differ (what a
  // version promises), so the cached index is what comes back.
  struct stat before {};
  REQUIRE(::stat(shard.c_str(), &before) == 0);
  auto other = tar_bytes({{"z.json", record_json()}, {"z.jpg", std::string(bytes.size(), 'z')}});
  other.resize(bytes.size(), '\0');
  dir.write("shard.tar", other);
  const timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, shard.c_str(), times, 0) == 0);
  CHECK(cached_tar_shard_index(FileByteSource(shard), cache) == first);

  // A new modification time: indexed again, and the cache updated.
  const timespec later[2] = {before.st_atim, {before.st_mtim.tv_sec + 10, 0}};
  REQUIRE(::utimensat(AT_FDCWD, shard.c_str(), later, 0) == 0);
  const auto rebuilt = cached_tar_shard_index(FileByteSource(shard), cache);
  CHECK(rebuilt.offsets.size() == 1);
  CHECK(cached_tar_shard_index(FileByteSource(shard), cache) == rebuilt);

  // A cache file that is not one (truncated by a crash) is a miss, not an error.
  for (const auto& file : std::filesystem::directory_iterator(cache))
    std::filesystem::resize_file(file.path(), 30);
  CHECK(cached_tar_shard_index(FileByteSource(shard), cache) == rebuilt);
}

}  // namespace odbatch
