// One long record costs memory in proportion to its size, with a small factor: the tokenizer
// encodes a long text only as far as max_seq_len needs, instead of encoding all of it (which cost
// about 60 times the record's size in sentencepiece's per-piece structures: 975 MiB for a 16 MiB
// record, 1.9 GiB for 32 MiB, 1.7 GiB for 16 MiB without whitespace). `odbatch run` runs as a
// child process (started through odbatch_peak_rss) over a dataset of one record whose reply is 1,
// 16 or 32 MiB of real text, or 32 MiB of it without whitespace, cut to max_seq_len 16384, and its
// peak resident set size must stay within a short record's run (measured first, 64 KiB of reply)
// plus kSlackKiB plus kKiBPerRecordMiB per MiB of record. The short run's peak is mostly the
// process's own (under AddressSanitizer, its allocator's), and moves by a MiB or two from run to
// run: the slack absorbs that, not the record's cost.
//
// What the record still costs: the reader's copy of the line, the JSON document's string, the
// conversation's copy and the tokenizer's copy of the segment, each the record's size. Measured:
// 22, 77 and 142 MiB, about 4 times the record's size over the short record's run; the bound leaves
// room for AddressSanitizer's allocator.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "license_texts.hpp"
#include "peak_rss_run.hpp"
#include "pipeline_test_support.hpp"

namespace odbatch {
namespace {

constexpr std::size_t kShortRecordBytes = 64 << 10;
constexpr long kSlackKiB = 16 * 1024;
constexpr long kKiBPerRecordMiB = 6 * 1024;

std::string without_whitespace(const std::string& text) {
  std::string joined;
  for (const char c : text)
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\f') joined += c;
  return joined;
}

// A dataset of one record: a question, and a reply of the license texts (with their whitespace or
// without) repeated to `bytes`.
std::filesystem::path write_run(const std::filesystem::path& dir, std::size_t bytes,
                                bool whitespace) {
  const std::string licenses =
      whitespace ? test::license_texts() : without_whitespace(test::license_texts());
  std::string reply;
  reply.reserve(bytes);
  while (reply.size() < bytes)
    reply.append(licenses, 0, std::min(licenses.size(), bytes - reply.size()));
  const nlohmann::json record = {{"messages",
                                  {{{"role", "user"}, {"content", "Quote the licenses."}},
                                   {{"role", "assistant"}, {"content", reply}}}}};
  const auto name =
      std::to_string(bytes) + "-byte-record" + (whitespace ? "" : "-without-whitespace");
  const auto data = dir / (name + ".jsonl");
  {
    std::ofstream out(data, std::ios::binary);
    out << record.dump() << '\n';
    REQUIRE(out.good());
  }
  const auto data_dir = test::require_dataset();
  const auto config = dir / (name + ".toml");
  std::ofstream out(config);
  out << "[source]\nfiles = [\"" << data.string() << "\"]\n"
      << "image_root = \"" << (data_dir / "images").string() << "\"\n"
      << "on_bad_record = \"fail\"\n"
      << "[tokenizer]\nmodel = \"" << (data_dir / "tokenizer/odbatch-unigram-8k.model").string()
      << "\"\nworkers = 2\n"
      << "[batching]\ntoken_budget = 16384\nmax_seq_len = 16384\nover_length = \"truncate\"\n"
      << "window = 8\nseed = 1\n"
      << "[pipeline]\nscheduler_threads = 2\n";
  REQUIRE(out.good());
  return config;
}

TEST_CASE("one long record's peak memory is a small multiple of its size") {
  test::require_dataset();
  const test::TempDir dir;
  const long short_kib = test::peak_rss_kib_of_run(write_run(dir.path(), kShortRecordBytes, true),
                                                   dir.path(), std::chrono::seconds(300));
  MESSAGE("peak RSS with a 64 KiB record: " << short_kib / 1024 << " MiB");
  // Smallest first: a run far over the bound stops the test before the larger ones.
  const std::pair<std::size_t, bool> records[] = {{1, true}, {16, true}, {32, true}, {32, false}};
  for (const auto& [mib, whitespace] : records) {
    CAPTURE(mib);
    CAPTURE(whitespace);
    const long peak_kib = test::peak_rss_kib_of_run(write_run(dir.path(), mib << 20, whitespace),
                                                    dir.path(), std::chrono::seconds(300));
    const long bound_kib = short_kib + kSlackKiB + kKiBPerRecordMiB * static_cast<long>(mib);
    const std::string record =
        std::to_string(mib) + " MiB record" + (whitespace ? "" : " without whitespace");
    MESSAGE("peak RSS with a " << record << ": " << peak_kib / 1024 << " MiB (bound "
                               << bound_kib / 1024 << " MiB)");
    REQUIRE(peak_kib <= bound_kib);
  }
}

}  // namespace
}  // namespace odbatch
