// Damage in a tar shard is charged to the sample it falls in: a member whose header claims more
// data than the shard holds, a pax header libarchive cannot read, and the bytes after an
// end-of-archive marker (a second tar appended, or garbage) are each the flaw of one sample,
// and the whole samples around them keep all their members.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader.hpp"
#include "source_test_files.hpp"
#include "tar_builder.hpp"

namespace odbatch {
namespace {

using test::tar_bytes;
using test::TarEntry;

constexpr std::size_t kBlock = 512;
constexpr std::size_t kSizeField = 124;
constexpr std::size_t kTypeField = 156;

std::string record_json() {
  return R"({"conversations": [{"from": "human", "value": "<image>\nWhat is it?"}, )"
         R"({"from": "gpt", "value": "A cat."}]})";
}

std::vector<TarEntry> sample(const std::string& key) {
  return {{key + ".json", record_json()}, {key + ".jpg", "JPEG-BYTES-" + key}};
}

std::vector<TarEntry> samples(const std::vector<std::string>& keys) {
  std::vector<TarEntry> entries;
  for (const auto& key : keys) {
    const auto members = sample(key);
    entries.insert(entries.end(), members.begin(), members.end());
  }
  return entries;
}

// The offset of the header block of the member named `name`.
std::size_t header_of(const std::string& tar, const std::string& name) {
  const auto at = tar.find(std::string(name) + '\0');
  REQUIRE(at != std::string::npos);
  return at / kBlock * kBlock;
}

// GNU tar's base-256 size field: 0x80, then the size big-endian.
void claim_size(std::string& tar, std::size_t header, std::uint64_t size) {
  tar[header + kSizeField] = static_cast<char>(0x80);
  for (std::size_t i = 0; i < 11; ++i)
    tar[header + kSizeField + 11 - i] = static_cast<char>(i < 8 ? (size >> (8 * i)) & 0xff : 0);
  test::seal_tar_header(tar, header);
}

// A pax extended header ('x') for the member whose header is at `header`, inserted before it,
// holding one comment record that makes its data `data_bytes` long.
void insert_pax_header(std::string& tar, std::size_t header, std::size_t data_bytes) {
  std::string block = tar.substr(header, kBlock);
  const std::string name = "PaxHeaders/x";
  block.replace(0, 100, name + std::string(100 - name.size(), '\0'));
  block[kTypeField] = 'x';
  char size[12];
  std::snprintf(size, sizeof size, "%011zo", data_bytes);
  block.replace(kSizeField, 12, std::string(size, 11) + '\0');
  std::string extended(data_bytes, 'c');
  // "LENGTH comment=VALUE\n", the length counting itself.
  const std::string head = std::to_string(data_bytes) + " comment=";
  extended.replace(0, head.size(), head);
  extended.back() = '\n';
  extended.resize((data_bytes + kBlock - 1) / kBlock * kBlock, '\0');
  std::string pax = block + extended;
  test::seal_tar_header(pax, 0);
  tar.insert(header, pax);
}

std::shared_ptr<const DatasetIndex> index_of(const std::string& path) {
  const std::vector<std::string> paths = {path};
  return std::make_shared<const DatasetIndex>(DatasetIndex::build(paths));
}

// The sample's key and member extensions, or the rejection's reason and message.
std::string outcome(const RecordReader& reader, SampleId id) {
  auto result = reader.read(id);
  if (auto* rejected = std::get_if<RecordRejection>(&result))
    return "rejected " + std::string(to_string(rejected->reason)) + ": " + rejected->message;
  const auto& record = std::get<Record>(result);
  std::string text = record.key + " json";
  for (const auto& member : record.members) text += " " + member.extension;
  return text;
}

}  // namespace

TEST_CASE("a member claiming 8 GiB in a short shard rejects its own sample, after whole ones") {
  test::ScratchDirectory dir;
  // a whole, then b whose b.json claims 8 GiB where the shard ends after b.json's data.
  auto tail = tar_bytes(samples({"a", "b"}));
  tail.resize(header_of(tail, "b.jpg"));
  claim_size(tail, header_of(tail, "b.json"), std::uint64_t{8} << 30);
  const auto tail_path = dir.write("tail.tar", tail);
  const auto tail_index = index_of(tail_path);
  REQUIRE(tail_index->record_count() == 2);
  const RecordReader tail_reader(tail_index);
  CHECK(outcome(tail_reader, 0) == "a json jpg");
  const auto b = outcome(tail_reader, 1);
  CHECK(b.starts_with("rejected damaged_shard: " + tail_path + ":b: "));
  CHECK(b.find("member b.json ends past the end of the shard (" +
               std::to_string(header_of(tail, "b.json") + kBlock + (std::uint64_t{8} << 30)) +
               " > " + std::to_string(tail.size()) + " bytes)") != std::string::npos);

  // The opposite order: b's b.json claims 8 GiB and holds nothing, a follows it whole.
  auto first = tar_bytes({{"b.json", ""}, sample("a")[0], sample("a")[1]});
  claim_size(first, header_of(first, "b.json"), std::uint64_t{8} << 30);
  const auto first_path = dir.write("first.tar", first);
  const auto first_index = index_of(first_path);
  REQUIRE(first_index->record_count() == 2);
  const RecordReader first_reader(first_index);
  CHECK(outcome(first_reader, 0).starts_with("rejected damaged_shard: " + first_path + ":b: "));
  CHECK(outcome(first_reader, 1) == "a json jpg");
}

TEST_CASE("a pax header over libarchive's 1 MiB rejects its member's sample, not the one before") {
  test::ScratchDirectory dir;
  auto bytes = tar_bytes(samples({"a", "b", "c"}));
  insert_pax_header(bytes, header_of(bytes, "b.json"), (std::size_t{1} << 20) + 100);
  const auto path = dir.write("pax.tar", bytes);
  const auto index = index_of(path);
  REQUIRE(index->record_count() == 3);
  const RecordReader reader(index);
  CHECK(outcome(reader, 0) == "a json jpg");
  const auto b = outcome(reader, 1);
  CHECK(b == "rejected damaged_shard: " + path + ":b: damaged tar shard after byte " +
                 std::to_string(header_of(bytes, "PaxHeaders/x")) +
                 ": the pax header of member b.json (1048676 bytes) cannot be read: Special "
                 "header too large");
  // The sample's bytes run from its pax header to the end of its last member.
  CHECK(index->locate(1).offset == header_of(bytes, "PaxHeaders/x"));
  CHECK(index->locate(2).offset == header_of(bytes, "c.json"));
  CHECK(outcome(reader, 2) == "c json jpg");
}

TEST_CASE("a second tar appended after the first's end-of-archive blocks is read on") {
  test::ScratchDirectory dir;
  const auto first = tar_bytes(samples({"a", "b"}));
  const auto second = tar_bytes(samples({"c"}));
  const auto path = dir.write("concatenated.tar", first + second);
  const auto index = index_of(path);
  REQUIRE(index->record_count() == 3);
  const RecordReader reader(index);
  CHECK(outcome(reader, 0) == "a json jpg");
  CHECK(outcome(reader, 1) == "b json jpg");
  CHECK(outcome(reader, 2) == "c json jpg");
  CHECK(index->locate(2).offset == first.size());

  // Zeros after the end-of-archive blocks (a writer's record padding) are no flaw.
  const auto padded = dir.write("padded.tar", first + std::string(10240, '\0'));
  CHECK(index_of(padded)->record_count() == 2);
  CHECK(index_of(padded)->known_flaw(1) == std::nullopt);
}

TEST_CASE("bytes after the end-of-archive blocks that are not a tar member are a flaw") {
  test::ScratchDirectory dir;
  const auto first = tar_bytes(samples({"a"}));
  const std::string garbage = "not a tar header" + std::string(1000, 'g');
  const auto path = dir.write("trailing.tar", first + std::string(kBlock, '\0') + garbage);
  const auto index = index_of(path);
  REQUIRE(index->record_count() == 2);
  const RecordReader reader(index);
  CHECK(outcome(reader, 0) == "a json jpg");
  const auto trailing = outcome(reader, 1);
  const std::string garbage_at = std::to_string(first.size() + kBlock);
  CHECK(trailing == "rejected damaged_shard: " + path + "@" + garbage_at +
                        ": damaged tar shard after byte " + garbage_at +
                        ": bytes after the end-of-archive blocks that are not a tar member; this "
                        "sample and any after it in the shard are lost");

  // A tar appended after garbage is found again.
  const auto second = tar_bytes(samples({"c"}));
  const auto both = dir.write("both.tar", first + garbage + std::string(8, 'g') + second);
  const auto both_index = index_of(both);
  REQUIRE(both_index->record_count() == 3);
  const RecordReader both_reader(both_index);
  CHECK(outcome(both_reader, 1).starts_with("rejected damaged_shard: "));
  CHECK(outcome(both_reader, 2) == "c json jpg");
}

}  // namespace odbatch
