#include "odbatch/source/tar_shard_index.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/webdataset_name.hpp"
#include "tar_header_walker.hpp"

namespace odbatch {
namespace {

constexpr std::uint64_t kBlockBytes = 512;

std::uint64_t padded(std::uint64_t size) {
  return (size + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
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
    TarHeaderWalker walker(shard_, 0);
    TarHeaderWalker::Member member;
    for (;;) {
      const auto step = walker.next(member);
      if (step == TarHeaderWalker::Step::end) break;
      if (step == TarHeaderWalker::Step::damaged) {
        damaged(walker.problem());
        break;
      }
      add(member);
      if (damaged_) break;
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
      damaged("member " + member.path + " ends past the end of the shard (" +
              std::to_string(member.data_offset + member.size) + " > " +
              std::to_string(shard_.size()) + " bytes)");
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

  // The sample being assembled, or the rest of the shard from the last sample's end, becomes
  // one rejected sample reaching to the shard's end.
  void damaged(const std::string& problem) {
    const std::uint64_t resume =
        index_.offsets.empty() ? 0 : index_.offsets.back() + index_.lengths.back();
    if (!sample_) {
      if (resume >= shard_.size()) return;  // nothing after the last sample: a clean end
      sample_ = OpenSample{"", resume, resume, {}, std::nullopt};
    }
    const std::string who = sample_->key.empty()
                                ? shard_.name() + "@" + std::to_string(sample_->begin)
                                : where(sample_->key);
    sample_->flaw =
        TarShardFlaw{0, RecordRejectReason::damaged_shard,
                     who + ": damaged tar shard after byte " + std::to_string(sample_->begin) +
                         ": " + problem + "; this sample and any after it in the shard are lost"};
    sample_->end = shard_.size();
    close_sample();
    damaged_ = true;
  }

  const ByteSource& shard_;
  TarShardIndex index_;
  std::optional<OpenSample> sample_;
  std::unordered_set<std::string> keys_;
  bool damaged_ = false;
};

}  // namespace

bool starts_like_tar(std::string_view first_bytes) {
  return first_bytes.size() >= kBlockBytes && first_bytes.substr(257, 5) == "ustar";
}

bool starts_like_gzip(std::string_view first_bytes) {
  return first_bytes.size() >= 2 && first_bytes[0] == '\x1f' && first_bytes[1] == '\x8b';
}

TarShardIndex index_tar_shard(const ByteSource& shard) {
  return ShardIndexer(shard).run();
}

}  // namespace odbatch
