#pragma once
// Tar shard indexes kept in a cache directory, so a shard is walked once, not once per run or
// rank: one file per shard, named by a hash of the shard's path or URL, holding the source's
// version (size and modification time, or size and ETag) and the index. A cached index is used
// only for the same name and version; anything else is a miss and the shard is indexed again.
#include <filesystem>

#include "odbatch/source/tar_shard_index.hpp"

namespace odbatch {

// The shard's index from `cache_dir`, or indexed and then stored there (written to a temporary
// file and renamed, so concurrent ranks never read a partial one). An empty `cache_dir` indexes
// without caching. Throws DatasetError naming the directory when it cannot be created or written.
TarShardIndex cached_tar_shard_index(const ByteSource& shard,
                                     const std::filesystem::path& cache_dir);

}  // namespace odbatch
