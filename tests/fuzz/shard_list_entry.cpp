// A shard list file as `@list` entries of source.files name it, over a scratch directory holding
// a few shards: brace ranges and alternatives, globs, comments, relative and absolute paths, URLs.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/source/dataset_paths.hpp"
#include "odbatch/source/open_byte_source.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "shard_list";

// One directory per process with shard-000.tar ... shard-003.tar, a.jsonl and sub/b.jsonl; the
// list is written into it for each input. Removed at exit.
class ScratchShards {
 public:
  ScratchShards()
      : dir_(std::filesystem::temp_directory_path() /
             ("odbatch-fuzz-list-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_ / "sub");
    for (const char* name : {"shard-000.tar", "shard-001.tar", "shard-002.tar", "shard-003.tar",
                             "a.jsonl", "sub/b.jsonl"})
      std::ofstream(dir_ / name) << "{}\n";
  }
  ~ScratchShards() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ScratchShards(const ScratchShards&) = delete;
  ScratchShards& operator=(const ScratchShards&) = delete;

  std::string write_list(Input bytes) const {
    const auto list = dir_ / "list.txt";
    std::ofstream out(list, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    expect(out.good(), kTarget, "the scratch list can be written");
    return list.string();
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace

Outcome shard_list(Input input) {
  static const ScratchShards scratch;
  const std::string list = scratch.write_list(input);
  std::vector<std::string> paths;
  try {
    paths = expand_dataset_paths(std::vector{"@" + list});
  } catch (const DatasetError& e) {
    expect(std::string_view(e.what()).starts_with("dataset "), kTarget,
           "a dataset error says which list, file or pattern");
    return Outcome::rejected;
  }
  expect(!paths.empty(), kTarget, "an expanded list names a file");
  std::set<std::string> seen;
  for (const auto& path : paths) {
    expect(seen.insert(path).second, kTarget, "no file is listed twice");
    if (is_url(path)) continue;
    std::error_code error;
    expect(std::filesystem::exists(path, error), kTarget, "every file listed exists");
  }
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
