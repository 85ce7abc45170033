#include "odbatch/source/open_byte_source.hpp"

#include "odbatch/source/file_byte_source.hpp"
#include "odbatch/source/http_byte_source.hpp"

namespace odbatch {

bool is_url(std::string_view name) {
  return name.starts_with("http://") || name.starts_with("https://");
}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path_or_url,
                                             const RemoteSourceOptions& remote) {
  if (is_url(path_or_url)) return std::make_unique<HttpByteSource>(path_or_url, remote);
  return std::make_unique<FileByteSource>(path_or_url);
}

}  // namespace odbatch
