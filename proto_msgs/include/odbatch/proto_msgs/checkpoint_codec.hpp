#pragma once
// The checkpoint file: a magic, the format version, the body's length, the body (varints:
// header, settings, then each rank's part) and a checksum of the body. A rank's part and a
// joined checkpoint share the format (a part holds one rank). Decoding never trusts the bytes:
// a truncated, corrupt or foreign file is a CheckpointError naming the file and the byte offset.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/checkpoint.hpp"

namespace odbatch {

std::vector<std::byte> encode_checkpoint(const Checkpoint& checkpoint);

// The file around an encoded body: magic, version, length, the body, its checksum. With
// has_checkpoint_magic, it lets a fuzzer reach the body's decoding past the checksum.
std::vector<std::byte> frame_checkpoint_body(std::span<const std::byte> body);
bool has_checkpoint_magic(std::span<const std::byte> bytes);

// `source` names the bytes' origin in errors (a file's path).
Checkpoint decode_checkpoint(std::span<const std::byte> bytes, const std::string& source);

// Writes atomically (a temporary file renamed over `file`); reads a whole file. Both throw
// CheckpointError naming the file.
void write_checkpoint_file(const std::filesystem::path& file, const Checkpoint& checkpoint);
Checkpoint read_checkpoint_file(const std::filesystem::path& file);

}  // namespace odbatch
