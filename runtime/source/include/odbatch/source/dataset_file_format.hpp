#pragma once
// What kind of dataset file a file is, decided by its name and its first bytes together, so that
// neither alone can misread it: a JSON Lines record with "ustar" at byte 257 is not a tar shard,
// and a file named ".tar" that is not one is an error rather than lines of garbage.
//
// The content: a first 512-byte block whose checksum is a tar header's (ustar, GNU or V7; the
// magic is not required, as Python's tarfile requires none) is a tar shard; gzip, bzip2, xz and
// zstd streams are refused, as records cannot be read from them by offset; a first byte besides
// whitespace (after a UTF-8 byte order mark) of '[' is a JSON array; anything else is JSON Lines.
// The name: ".tar" says tar shard; ".json", ".jsonl", ".ndjson" say JSON (array or lines, as the
// content says: ".json" files of lines are common); compressed suffixes (".gz", ".tgz", ".bz2",
// ".xz", ".zst"...) say compressed; any other name leaves it to the content.
#include <cstdint>
#include <string>
#include <string_view>

namespace odbatch {

class ByteSource;

enum class DatasetFileFormat : std::uint8_t {
  json_lines,  // one record per line
  json_array,  // one record per element of a top-level array
  tar_shard,   // one record per WebDataset sample
};

// Whether a 512-byte block is a tar header: its checksum field (octal) equals the sum of its
// bytes with that field read as spaces (or, as some old tars wrote it, as signed bytes).
bool is_tar_header(std::string_view block);

// The compression whose magic the first bytes carry ("gzip", "bzip2", "xz", "zstd"), or empty.
std::string_view compression_of(std::string_view first_bytes);

// The format of `source` (reading only its first bytes, up to its first byte besides whitespace
// for JSON). Throws DatasetError naming the file when it is compressed, or when its name and its
// content disagree.
DatasetFileFormat detect_dataset_file_format(const ByteSource& source);

}  // namespace odbatch
