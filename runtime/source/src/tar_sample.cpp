#include "odbatch/source/tar_sample.hpp"

#include <algorithm>
#include <charconv>

#include "odbatch/source/webdataset_name.hpp"
#include "tar_header_walker.hpp"

namespace odbatch {
namespace {

RecordRejection damaged(std::string where, const std::string& problem) {
  return RecordRejection{RecordRejectReason::damaged_shard,
                         where + ": damaged tar sample: " + problem};
}

std::uint64_t leading_number(std::string_view extension) {
  std::uint64_t value = 0;
  std::from_chars(extension.data(), extension.data() + extension.size(), value);
  return value;
}

}  // namespace

std::variant<TarSample, RecordRejection> split_tar_sample(std::string_view bytes,
                                                          std::uint64_t offset,
                                                          std::string_view shard) {
  TarSample sample;
  const auto where = [&] {
    return sample.key.empty() ? std::string(shard) + "@" + std::to_string(offset)
                              : std::string(shard) + ":" + sample.key;
  };
  TarHeaderWalker walker(bytes, offset);
  TarHeaderWalker::Member member;
  for (;;) {
    const auto step = walker.next(member);
    if (step == TarHeaderWalker::Step::end) break;
    if (step == TarHeaderWalker::Step::damaged) return damaged(where(), walker.problem());
    auto name = split_webdataset_name(member.path);
    if (!member.regular_file || !name) continue;
    if (sample.key.empty()) sample.key = name->key;
    if (name->key != sample.key) {
      return damaged(where(), "member " + member.path + " belongs to another sample");
    }
    const std::uint64_t begin = member.data_offset - offset;
    if (begin + member.size > bytes.size()) {
      return damaged(where(), "member " + member.path + " runs past the sample's end");
    }
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data() + begin);
    sample.members.push_back(
        {std::move(member.path), std::move(name->extension), {data, data + member.size}});
  }
  if (sample.members.empty()) return damaged(where(), "no member");
  return sample;
}

std::vector<const TarMember*> implicit_images(const std::vector<TarMember>& members) {
  std::vector<const TarMember*> images;
  for (const auto& member : members) {
    if (is_image_extension(member.extension)) images.push_back(&member);
  }
  std::stable_sort(images.begin(), images.end(), [](const TarMember* a, const TarMember* b) {
    return leading_number(a->extension) < leading_number(b->extension);
  });
  return images;
}

}  // namespace odbatch

namespace odbatch {

const TarMember* find_member(const std::vector<TarMember>& members, std::string_view name) {
  for (const auto& member : members) {
    const std::string_view path = member.path;
    const auto slash = path.rfind('/');
    const auto file_name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (member.extension == name || file_name == name || path == name) return &member;
  }
  return nullptr;
}

}  // namespace odbatch
