#pragma once
// Builds tar files for the tests with libarchive's writer, in the formats real writers use
// (Python's tarfile and webdataset write ustar, pax or GNU tar).
#include <archive.h>
#include <archive_entry.h>

#include <cstdio>

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

// Writes the checksum of the header block at `header` again, after a test changed a field: the
// octal sum of its bytes with the checksum field read as spaces, as tar writes it.
inline void seal_tar_header(std::string& tar, std::size_t header) {
  constexpr std::size_t kBlock = 512;
  constexpr std::size_t kChecksumField = 148;
  unsigned sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const bool in_checksum = i >= kChecksumField && i < kChecksumField + 8;
    sum += in_checksum ? ' ' : static_cast<unsigned char>(tar[header + i]);
  }
  char field[8];
  std::snprintf(field, sizeof field, "%06o", sum);
  tar.replace(header + kChecksumField, 8, std::string(field, 6) + '\0' + ' ');
}

}  // namespace odbatch::test
