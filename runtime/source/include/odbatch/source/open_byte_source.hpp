#pragma once
// Opens a dataset file named by a local path or an http(s):// URL as a ByteSource.
#include <memory>
#include <string>
#include <string_view>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/remote_source_options.hpp"

namespace odbatch {

// True for names starting with "http://" or "https://".
bool is_url(std::string_view name);

// Throws DatasetError naming the path or URL when it cannot be opened.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path_or_url,
                                             const RemoteSourceOptions& remote);

}  // namespace odbatch
