#pragma once
// WebDataset's naming rule: a tar member "dir/sample0001.seg.png" belongs to the sample keyed
// "dir/sample0001" as its "seg.png" member. The key is the path up to the first dot of the last
// path component, the extension what follows that dot, lowercased (as webdataset's
// group_by_keys does). Members of one sample lie next to each other in the shard.
#include <optional>
#include <string>
#include <string_view>

namespace odbatch {

struct WebDatasetName {
  std::string key;
  std::string extension;  // lowercased, without the leading dot
};

// Nothing for names that belong to no sample: no dot in the last component, or a component that
// starts with one (".hidden", "dir/.x.json"); webdataset skips those too.
std::optional<WebDatasetName> split_webdataset_name(std::string_view member_path);

// Whether an extension names an image a sample may carry: its last dot-separated part is jpg,
// jpeg, png or webp ("jpg", "0.png", "left.webp").
bool is_image_extension(std::string_view extension);

}  // namespace odbatch
