#pragma once
// Builds tar files for the tests with libarchive's writer, in the formats real writers use
// (Python's tarfile and webdataset write ustar, pax or GNU tar).
#include <archive.h>
#include <archive_entry.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace odbatch::test {

enum class TarFormat { ustar, pax, gnu };

struct TarEntry {
  std::string path;
  std::string bytes;
  bool directory = false;
};

// The tar file's bytes, with its end-of-archive blocks.
inline std::string tar_bytes(const std::vector<TarEntry>& entries,
                             TarFormat format = TarFormat::ustar) {
  archive* a = archive_write_new();
  switch (format) {
    case TarFormat::ustar:
      archive_write_set_format_ustar(a);
      break;
    case TarFormat::pax:
      archive_write_set_format_pax(a);
      break;
    case TarFormat::gnu:
      archive_write_set_format_gnutar(a);
      break;
  }
  archive_write_set_bytes_per_block(a, 512);
  std::vector<char> buffer(std::size_t{64} << 20);
  std::size_t used = 0;
  if (archive_write_open_memory(a, buffer.data(), buffer.size(), &used) != ARCHIVE_OK)
    throw std::runtime_error(archive_error_string(a));
  for (const auto& entry : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, entry.path.c_str());
    archive_entry_set_filetype(e, entry.directory ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(e, entry.directory ? 0755 : 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(entry.bytes.size()));
    archive_entry_set_mtime(e, 1700000000, 0);
    if (archive_write_header(a, e) != ARCHIVE_OK) throw std::runtime_error(archive_error_string(a));
    if (!entry.bytes.empty() && archive_write_data(a, entry.bytes.data(), entry.bytes.size()) !=
                                    static_cast<la_ssize_t>(entry.bytes.size()))
      throw std::runtime_error(archive_error_string(a));
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return std::string(buffer.data(), used);
}

}  // namespace odbatch::test
