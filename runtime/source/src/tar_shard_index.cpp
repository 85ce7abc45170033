#include "odbatch/source/tar_shard_index.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/webdataset_name.hpp"
#include "tar_header_walker.hpp"

namespace odbatch {
namespace {

constexpr std::uint64_t kBlockBytes = 512;

std::uint64_t padded(std::uint64_t size) {
  return (size + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
}

// Whether a 512-byte block is a ustar header: the magic, and the checksum (the octal sum of its
// bytes with the checksum field read as spaces).
bool valid_header(std::string_view block) {
  if (block.size() < kBlockBytes || block.substr(257, 5) != "ustar") return false;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kBlockBytes; ++i)
    sum += i >= 148 && i < 156 ? ' ' : static_cast<unsigned char>(block[i]);
  std::uint64_t stored = 0;
  bool digits = false;
  for (std::size_t i = 148; i < 156; ++i) {
    const char c = block[i];
    if (c >= '0' && c <= '7') {
      stored = stored * 8 + static_cast<std::uint64_t>(c - '0');
      digits = true;
    } else if (c != ' ' && c != '\0') {
      return false;
    } else if (digits) {
      break;
    }
  }
  return digits && stored == sum;
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
      start = shard_.size();
      TarHeaderWalker::Member member;
      for (;;) {
        const auto step = walker.next(member);
        if (step == TarHeaderWalker::Step::end) break;
        if (step == TarHeaderWalker::Step::damaged) {
          start = damaged(walker.problem(), 0);
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
    const auto name = split_webdataset_name(member.path);
    if (!member.regular_file || !name) {
      ++index_.ignored_members;
      return;
    }
    if (member.data_offset + member.size > shard_.size()) {
      // libarchive finds this only when it next reads; the member is cut either way.
      if (!sample_ || sample_->key != name->key) open_sample(member, name->key);
      resume_at_ = damaged("member " + member.path + " ends past the end of the shard (" +
                               std::to_string(member.data_offset + member.size) + " > " +
                               std::to_string(shard_.size()) + " bytes)",
                           member.header_offset);
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
    close_sample();
    sample_ = OpenSample{key, member.header_offset, member.data_offset, {}, std::nullopt};
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

  // Damage: the sample being assembled, or the bytes after the last sample, up to the next
  // valid header after the damage (or the shard's end), become one rejected sample. Returns
  // where the walk resumes. `bad_header` is where the damage was seen, when known.
  std::uint64_t damaged(const std::string& problem, std::uint64_t bad_header) {
    const std::uint64_t last_end =
        index_.offsets.empty() ? 0 : index_.offsets.back() + index_.lengths.back();
    const std::uint64_t good_end =
        std::max({sample_ ? sample_->end : last_end, walk_start_, bad_header, last_end});
    const std::uint64_t resume = next_valid_header(shard_, padded(good_end) + kBlockBytes);
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
  std::optional<std::uint64_t> resume_at_;  // set by damage found in add()
};

}  // namespace

TarShardIndex index_tar_shard(const ByteSource& shard) {
  return ShardIndexer(shard).run();
}

}  // namespace odbatch
