#pragma once
// The one way the run reads a whole file it is given (a chat template, a tokenizer file, a shard
// list, a config): through FileDescriptor, so a FIFO, a device or a directory is refused rather
// than read for ever, and against a size cap checked before and while reading, so /dev/zero or a
// file that grows costs one named error rather than the machine's memory.
#include <cstdint>
#include <string>

#include "odbatch/source/dataset_error.hpp"

namespace odbatch {

// Why a file could not be read whole; what() is "path: problem", problem() leaves the path out
// so that callers can name the setting that gave it.
class FileReadError : public DatasetError {
 public:
  FileReadError(const std::string& path, std::string problem);
  const std::string& problem() const { return problem_; }

 private:
  std::string problem_;
};

// The bytes of the regular file `path`, at most `max_bytes` of them; throws FileReadError.
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes);

}  // namespace odbatch
