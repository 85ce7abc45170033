#pragma once
// Length trace files: the post-pipeline costs of every sample of an epoch, written by
// `odbatch stats --trace` and read by `odbatch simulate --trace`. CSV with a header line:
//
//   id,tokens,labels,patches
//   17,812,301,0
//   4,1530,622,1296
//
// one sample per line, unsigned decimal integers, ids unique, tokens at least 1.
#include <filesystem>
#include <span>
#include <vector>

#include "odbatch/core/sample.hpp"

namespace odbatch::cli {

// Throws InputError naming the file (and line) when it cannot be written.
void write_length_trace(const std::filesystem::path& file, std::span<const SampleCost> samples);

// Throws InputError naming file:line for a malformed line, a duplicate id or a zero length.
std::vector<SampleCost> read_length_trace(const std::filesystem::path& file);

}  // namespace odbatch::cli
