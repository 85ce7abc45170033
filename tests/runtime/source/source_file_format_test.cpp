// A dataset file's kind from its name and its content together: a JSON Lines file that happens to
// carry "ustar" at byte 257 stays JSON Lines, tars are recognised by their header checksum (V7
// tars without the magic too), compressed files are refused naming the compression, a name and a
// content that disagree are an error naming the file, and a shard without samples is an error,
// never nothing.
#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_file_format.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader.hpp"
#include "source_test_files.hpp"
#include "tar_builder.hpp"

namespace odbatch {
namespace {

using test::tar_bytes;
using test::TarEntry;

const std::string kRecord =
    R"({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]})";

std::vector<TarEntry> two_samples() {
  return {{"a.json", kRecord}, {"b.json", kRecord}};
}

std::string error_of(const std::vector<std::string>& files) {
  try {
    DatasetIndex::build(files);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "no error";
}

// `bytes` through one of libarchive's compression filters, as the tools that make such shards
// write them.
std::string compressed(const std::string& bytes, int (*add_filter)(archive*)) {
  std::unique_ptr<archive, decltype(&archive_write_free)> writer(archive_write_new(),
                                                                 &archive_write_free);
  archive_write_set_format_raw(writer.get());
  if (add_filter(writer.get()) != ARCHIVE_OK) throw std::runtime_error("no such filter");
  std::string out(bytes.size() + 65536, '\0');
  std::size_t used = 0;
  archive_write_set_bytes_in_last_block(writer.get(), 1);
  if (archive_write_open_memory(writer.get(), out.data(), out.size(), &used) != ARCHIVE_OK)
    throw std::runtime_error(archive_error_string(writer.get()));
  archive_entry* entry = archive_entry_new();
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_write_header(writer.get(), entry);
  archive_entry_free(entry);
  archive_write_data(writer.get(), bytes.data(), bytes.size());
  archive_write_close(writer.get());
  out.resize(used);
  return out;
}

// A ustar tar turned into a V7 one: no magic, no version, the checksum made again.
std::string as_v7(std::string tar) {
  for (std::size_t header = 0; header + 512 <= tar.size();) {
    std::string_view block(tar.data() + header, 512);
    if (block.substr(257, 5) != "ustar") break;
    std::fill(tar.begin() + static_cast<long>(header) + 257,
              tar.begin() + static_cast<long>(header) + 265, '\0');
    test::seal_tar_header(tar, header);
    const std::uint64_t size = std::stoull(std::string(block.substr(124, 11)), nullptr, 8);
    header += 512 + (size + 511) / 512 * 512;
  }
  return tar;
}

}  // namespace

TEST_CASE("a JSON Lines file with \"ustar\" at byte 257 is read as its lines") {
  test::ScratchDirectory dir;
  // Record one puts "mustard" across bytes 256-262, where a tar header has its magic.
  std::string lines = R"({"text": ")" + std::string(246, 'a') + "mustard\"}\n";
  REQUIRE(lines.substr(257, 5) == "ustar");
  for (int i = 1; i < 1000; ++i) lines += kRecord + "\n";
  for (const char* name : {"data.jsonl", "data.txt"}) {
    CAPTURE(name);
    const auto file = dir.write(name, lines);
    const auto index = DatasetIndex::build(std::vector{file});
    CHECK(index.files()[0].format == DatasetFileFormat::json_lines);
    CHECK(index.record_count() == 1000);
  }
}

TEST_CASE("tars are known by their header checksum: V7 tars without the magic are shards") {
  test::ScratchDirectory dir;
  const std::string v7 = as_v7(tar_bytes(two_samples()));
  REQUIRE(v7.substr(257, 5) != "ustar");
  CHECK(is_tar_header(v7));
  for (const char* name : {"v7.tar", "v7-shard"}) {
    CAPTURE(name);
    const auto shard = dir.write(name, v7);
    const auto index =
        std::make_shared<const DatasetIndex>(DatasetIndex::build(std::vector{shard}));
    CHECK(index->files()[0].format == DatasetFileFormat::tar_shard);
    REQUIRE(index->record_count() == 2);
    const RecordReader reader(index);
    const auto read = reader.read(1);
    REQUIRE(std::holds_alternative<Record>(read));
    CHECK(std::get<Record>(read).key == "b");
  }
  // One byte off and the checksum no longer holds.
  std::string damaged = v7;
  damaged[0] ^= 1;
  CHECK_FALSE(is_tar_header(damaged));
}

TEST_CASE("compressed files are refused naming the compression, whatever their name") {
  test::ScratchDirectory dir;
  const std::string tar = tar_bytes(two_samples());
  const struct {
    const char* name;
    const char* compression;
    int (*add_filter)(archive*);
  } cases[] = {{"shard.tar.gz", "gzip", archive_write_add_filter_gzip},
               {"shard.tar.bz2", "bzip2", archive_write_add_filter_bzip2},
               {"shard.tar.xz", "xz", archive_write_add_filter_xz},
               {"shard.tar.zst", "zstd", archive_write_add_filter_zstd},
               {"disguised.tar", "bzip2", archive_write_add_filter_bzip2},
               {"disguised.jsonl", "xz", archive_write_add_filter_xz}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto file = dir.write(c.name, compressed(tar, c.add_filter));
    CHECK(error_of({file}) == file + ": is " + c.compression +
                                  "-compressed; records cannot be read from it by offset "
                                  "(decompress it, e.g. shards as plain .tar)");
  }
  const auto named_only = dir.write("plain.tar.gz", tar);
  CHECK(error_of({named_only}) ==
        named_only +
            ": is named as a compressed file but holds no gzip, bzip2, xz or zstd stream; records "
            "cannot be read from a compressed file by offset");
}

TEST_CASE("a name and a content that disagree are an error naming the file") {
  test::ScratchDirectory dir;
  const auto tar_as_jsonl = dir.write("records.jsonl", tar_bytes(two_samples()));
  CHECK(error_of({tar_as_jsonl}) ==
        tar_as_jsonl + ": is named as JSON but starts with a tar header; name a shard .tar");
  const auto lines_as_tar = dir.write("lines.tar", std::string(600, ' ') + kRecord + "\n");
  CHECK(error_of({lines_as_tar}) ==
        lines_as_tar +
            ": is named as a tar shard but its first block is not a tar header (its checksum does "
            "not match)");
  const auto short_tar = dir.write("short.tar", tar_bytes(two_samples()).substr(0, 300));
  CHECK(error_of({short_tar}) ==
        short_tar + ": is named as a tar shard but is 300 bytes, shorter than one tar header");
  // Without a telling name, a file shorter than a tar header is JSON.
  const auto short_lines = dir.write("short", kRecord + "\n");
  CHECK(DatasetIndex::build(std::vector{short_lines}).record_count() == 1);
}

TEST_CASE("a shard without samples is an error naming it, never nothing") {
  test::ScratchDirectory dir;
  const auto good = dir.write("good.tar", tar_bytes(two_samples()));
  const auto empty = dir.write("empty.tar", "");
  CHECK(error_of({good, empty}) == empty + ": is an empty file, not a tar shard");
  const auto end_only = dir.write("end-only.tar", std::string(10240, '\0'));
  CHECK(error_of({good, end_only}) ==
        end_only +
            ": a tar shard without samples (0 members that belong to no sample); remove "
            "it from the dataset");
  const auto directories = dir.write("dirs.tar", tar_bytes({{"d/", "", true}}));
  CHECK(error_of({good, directories}) ==
        directories +
            ": a tar shard without samples (1 members that belong to no sample); remove it from "
            "the dataset");
}

}  // namespace odbatch
