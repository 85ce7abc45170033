#pragma once
// One WebDataset sample's members, from the bytes its index entry spans (tar_shard_index.hpp):
// the conversation member (the record's text) and the rest (its images), by extension.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "odbatch/source/record_rejection.hpp"

namespace odbatch {

struct TarMember {
  std::string path;       // as in the shard, e.g. "train/000017.0.jpg"
  std::string extension;  // "0.jpg"
  std::vector<std::uint8_t> bytes;
};

struct TarSample {
  std::string key;                 // "train/000017"
  std::vector<TarMember> members;  // in shard order
};

// Splits `bytes`, which start at `offset` of `shard`, into the sample's members. A damaged header
// or a member running past the bytes is a damaged_shard rejection naming "shard:key" or
// "shard@offset" (the index finds these first; this guards against a shard that changed).
std::variant<TarSample, RecordRejection> split_tar_sample(std::string_view bytes,
                                                          std::uint64_t offset,
                                                          std::string_view shard);

// The sample's images when its record names none: its members with image extensions
// (webdataset_name.hpp), ordered by the number their extension starts with ("0.jpg" before
// "1.png" before "10.jpg"; none counts as 0), then shard order.
std::vector<const TarMember*> implicit_images(const std::vector<TarMember>& members);

// The member a record names as an image: by extension ("jpg", "0.png"), by file name
// ("000017.jpg") or by path; nothing when none matches.
const TarMember* find_member(const std::vector<TarMember>& members, std::string_view name);

}  // namespace odbatch
