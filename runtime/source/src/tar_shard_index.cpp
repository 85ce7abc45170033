#include "odbatch/source/tar_shard_index.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/dataset_file_format.hpp"
#include "odbatch/source/webdataset_name.hpp"
#include "tar_header_fields.hpp"
#include "tar_header_walker.hpp"

namespace odbatch {
namespace {

constexpr std::uint64_t kBlockBytes = 512;

std::uint64_t padded(std::uint64_t size) {
  return (size + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
}

// Whether a 512-byte block is a ustar header: the magic, and the checksum (is_tar_header), so
// that a walk resumed after damage starts only at a header a writer of this shard made.
bool valid_header(std::string_view block) {
  return block.size() >= kBlockBytes && block.substr(257, 5) == "ustar" && is_tar_header(block);
}

// The first block at or after `from` (a multiple of 512) that is a valid header; the shard's
// size when there is none. Reads the shard in large chunks.
std::uint64_t next_valid_header(const ByteSource& shard, std::uint64_t from) {
  constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  std::string chunk(kChunkBytes, '\0');
  for (std::uint64_t offset = from; offset + kBlockBytes <= shard.size();) {
    const std::size_t got = shard.read_at(chunk.data(), chunk.size(), offset);
    if (got < kBlockBytes) break;
    for (std::size_t at = 0; at + kBlockBytes <= got; at += kBlockBytes) {
      if (valid_header(std::string_view(chunk).substr(at, kBlockBytes))) return offset + at;
    }
    offset += got / kBlockBytes * kBlockBytes;
  }
  return shard.size();
}

// The 512-byte block at `offset`, short or empty past the shard's end.
std::string block_at(const ByteSource& shard, std::uint64_t offset) {
  std::string block(kBlockBytes, '\0');
  if (offset >= shard.size()) return {};
  block.resize(shard.read_at(block.data(), block.size(), offset));
  return block;
}

// The first block at or after `from` (a multiple of 512) that is not all zeros; the shard's
// size when there is none. Reads the shard in large chunks.
std::uint64_t next_nonzero_block(const ByteSource& shard, std::uint64_t from) {
  constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  std::string chunk(kChunkBytes, '\0');
  for (std::uint64_t offset = from; offset < shard.size();) {
    const std::size_t got = shard.read_at(chunk.data(), chunk.size(), offset);
    if (got == 0) break;
    const auto nonzero = chunk.find_first_not_of('\0');
    if (nonzero < got) return offset + nonzero / kBlockBytes * kBlockBytes;
    offset += got;
  }
  return shard.size();
}

// The sample being assembled from consecutive members with one key.
struct OpenSample {
  std::string key;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::vector<std::string> extensions;
  std::optional<TarShardFlaw> flaw;
};

class ShardIndexer {
 public:
  explicit ShardIndexer(const ByteSource& shard) : shard_(shard) {}

  TarShardIndex run() {
    std::uint64_t start = 0;
    while (start < shard_.size()) {
      TarHeaderWalker walker(shard_, start);
      walk_start_ = start;
      walk_end_ = start;
      start = shard_.size();
      TarHeaderWalker::Member member;
      for (;;) {
        const auto step = walker.next(member);
        if (step == TarHeaderWalker::Step::end) {
          start = after_end_of_archive(walker.position());
          break;
        }
        if (step == TarHeaderWalker::Step::damaged) {
          start = unreadable_header(walker.problem());
          break;
        }
        add(member);
        if (resume_at_) {
          start = *std::exchange(resume_at_, std::nullopt);
          break;
        }
      }
    }
    close_sample();
    return std::move(index_);
  }

 private:
  std::string where(std::string_view key) const { return shard_.name() + ":" + std::string(key); }

  void add(const TarHeaderWalker::Member& member) {
    walk_end_ = std::max(walk_end_, member.data_offset + padded(member.size));
    const auto name = split_webdataset_name(member.path);
    if (!member.regular_file || !name) {
      ++index_.ignored_members;
      return;
    }
    if (member.data_offset + member.size > shard_.size()) {
      // libarchive finds this only when it next reads; the member is cut either way.
      if (!sample_ || sample_->key != name->key) open_sample(member, name->key);
      // Its header is whole: the next one may start right where its data would have.
      resume_at_ = damaged("member " + member.path + " ends past the end of the shard (" +
                               std::to_string(member.data_offset + member.size) + " > " +
                               std::to_string(shard_.size()) + " bytes)",
                           member.data_offset);
      return;
    }
    if (sample_ && sample_->key == name->key) {
      if (std::find(sample_->extensions.begin(), sample_->extensions.end(), name->extension) !=
              sample_->extensions.end() &&
          !sample_->flaw) {
        sample_->flaw = TarShardFlaw{0, RecordRejectReason::duplicate_member,
                                     where(name->key) + ": two members with the extension '" +
                                         name->extension + "' (the second: " + member.path + ")"};
      }
    } else {
      open_sample(member, name->key);
    }
    if (member.sparse && !sample_->flaw) {
      sample_->flaw = TarShardFlaw{0, RecordRejectReason::damaged_shard,
                                   where(name->key) + ": member " + member.path +
                                       " is a sparse file, which a sample cannot hold"};
    }
    sample_->extensions.push_back(name->extension);
    sample_->end = member.data_offset + padded(member.size);
  }

  void open_sample(const TarHeaderWalker::Member& member, const std::string& key) {
    open_sample(key, member.header_offset, member.data_offset);
  }

  void open_sample(const std::string& key, std::uint64_t begin, std::uint64_t end) {
    close_sample();
    sample_ = OpenSample{key, begin, end, {}, std::nullopt};
    if (!keys_.insert(key).second) {
      sample_->flaw = TarShardFlaw{0, RecordRejectReason::key_collision,
                                   where(key) +
                                       ": an earlier sample of the shard has this key "
                                       "(members of one sample must be adjacent)"};
    }
  }

  void close_sample() {
    if (!sample_) return;
    const std::uint64_t position = index_.offsets.size();
    index_.offsets.push_back(sample_->begin);
    index_.lengths.push_back(std::min(sample_->end, shard_.size()) - sample_->begin);
    if (sample_->flaw) {
      sample_->flaw->sample = position;
      index_.flaws.push_back(std::move(*sample_->flaw));
    }
    sample_.reset();
  }

  // libarchive could not read the header after the last member. When it is a pax extended
  // header whose checksum holds (one over libarchive's 1 MiB), the damage is its member's: the
  // sample being assembled is whole unless that member, named by its own ustar header, has its
  // key. That member's sample is rejected, and the walk resumes at the member's ustar header, so
  // that the sample's members join it rather than come back as a key collision. Otherwise the
  // damaged header may have been the open sample's. Returns where the walk resumes.
  std::uint64_t unreadable_header(const std::string& problem) {
    const std::uint64_t bad_header = walk_end_;
    const std::string bad_block = block_at(shard_, bad_header);
    const auto pax_fields = valid_header(bad_block) ? tar_header_fields(bad_block) : std::nullopt;
    if (pax_fields && pax_fields->type == 'x') {
      const std::uint64_t member_header = bad_header + kBlockBytes + padded(pax_fields->size);
      const std::string block = block_at(shard_, member_header);
      const auto member = valid_header(block) ? tar_header_fields(block) : std::nullopt;
      const auto name = member ? split_webdataset_name(member->path) : std::nullopt;
      if (name && (!sample_ || sample_->key != name->key)) {
        open_sample(name->key, bad_header, bad_header);
        if (!sample_->flaw)
          sample_->flaw = TarShardFlaw{
              0, RecordRejectReason::damaged_shard,
              where(name->key) + ": damaged tar shard after byte " + std::to_string(bad_header) +
                  ": the pax header of member " + member->path + " (" +
                  std::to_string(pax_fields->size) + " bytes) cannot be read: " + problem};
        return member_header;
      }
    }
    return damaged(problem, bad_header + kBlockBytes);
  }

  // The walk met the end-of-archive blocks at `end`. What follows must be zeros (a writer's
  // padding), or another tar's members (tars concatenated, which `tar -i` reads on): those are
  // walked too. Anything else is damage, a sample of its own. Returns where the walk resumes.
  std::uint64_t after_end_of_archive(std::uint64_t end) {
    // A sample never spans the end blocks: read in one piece, it would end at them.
    close_sample();
    const std::uint64_t next = next_nonzero_block(shard_, padded(end));
    if (next >= shard_.size() || valid_header(block_at(shard_, next))) return next;
    sample_ = OpenSample{"", next, next, {}, std::nullopt};
    return damaged("bytes after the end-of-archive blocks that are not a tar member",
                   next + kBlockBytes);
  }

  // Damage: the sample being assembled, or the bytes after the last sample, up to the next
  // valid header at or after `scan_from` (or the shard's end), become one rejected sample.
  // Returns where the walk resumes.
  std::uint64_t damaged(const std::string& problem, std::uint64_t scan_from) {
    const std::uint64_t last_end =
        index_.offsets.empty() ? 0 : index_.offsets.back() + index_.lengths.back();
    const std::uint64_t resume = next_valid_header(shard_, padded(scan_from));
    if (!sample_) {
      if (last_end >= shard_.size()) return shard_.size();  // a clean end after the last sample
      sample_ = OpenSample{"", std::max(last_end, walk_start_), 0, {}, std::nullopt};
    }
    const std::string who = sample_->key.empty()
                                ? shard_.name() + "@" + std::to_string(sample_->begin)
                                : where(sample_->key);
    const std::string lost =
        resume < shard_.size()
            ? "; this sample is lost, the shard is read again from byte " + std::to_string(resume)
            : "; this sample and any after it in the shard are lost";
    sample_->flaw = TarShardFlaw{0, RecordRejectReason::damaged_shard,
                                 who + ": damaged tar shard after byte " +
                                     std::to_string(sample_->begin) + ": " + problem + lost};
    sample_->end = resume;
    close_sample();
    return resume;
  }

  const ByteSource& shard_;
  TarShardIndex index_;
  std::optional<OpenSample> sample_;
  std::unordered_set<std::string> keys_;
  std::uint64_t walk_start_ = 0;
  std::uint64_t walk_end_ = 0;  // past the last member's data, padded: where the next header is
  std::optional<std::uint64_t> resume_at_;  // set by damage found in add()
};

}  // namespace

TarShardIndex index_tar_shard(const ByteSource& shard) {
  return ShardIndexer(shard).run();
}

}  // namespace odbatch
