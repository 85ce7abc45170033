#pragma once
// Where the samples of one WebDataset tar shard lie: one streaming pass over the member headers
// (data is skipped, not read, where the source allows), grouping consecutive members by key
// (webdataset_name.hpp). A sample is indexed as one byte range, from its first member's header
// to its last member's padded data, so it is read with one positioned read like a JSON line.
//
// Problems are found here but judged per sample, so the rest of the shard stays usable: a key
// that an earlier sample of the shard had (key_collision), a repeated extension within a sample
// (duplicate_member) and damage (damaged_shard: a header that is not one, a member running past
// the shard's end, a read error) are recorded as flaws of the sample they hit, and that sample
// is rejected when read. After damage the walk resumes at the next block that is a valid ustar
// header (magic and checksum): the sample being assembled (it may have had more members), or
// the bytes after the last sample, up to there is one rejected sample naming the problem and
// the offsets; a shard cut short loses only the sample it cuts. Members that belong to no sample
// (directories, links, names without a key) are counted and otherwise ignored, as webdataset
// ignores them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "odbatch/source/record_rejection.hpp"

namespace odbatch {

class ByteSource;

struct TarShardFlaw {
  std::uint64_t sample = 0;  // position in the shard
  RecordRejectReason reason = RecordRejectReason::damaged_shard;
  std::string message;  // "shard.tar:key: ..."

  friend bool operator==(const TarShardFlaw&, const TarShardFlaw&) = default;
};

struct TarShardIndex {
  std::vector<std::uint64_t> offsets;  // of each sample's first header block
  std::vector<std::uint64_t> lengths;
  std::vector<TarShardFlaw> flaws;  // ascending by sample, at most one per sample
  std::uint64_t ignored_members = 0;

  friend bool operator==(const TarShardIndex&, const TarShardIndex&) = default;
};

// Throws DatasetError naming the shard only when it cannot be read at all.
TarShardIndex index_tar_shard(const ByteSource& shard);

}  // namespace odbatch
