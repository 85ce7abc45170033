#pragma once
// What the pipeline tests share: the real dataset under data/ (tools/prepare-data.sh), subsets
// of it written to a temporary directory, a small pipeline configuration, draining an epoch,
// digests of batches, the ledger file, and the checks every batch must pass.
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "odbatch/actors/pipeline.hpp"
#include "odbatch/core/ledger.hpp"
#include "odbatch/dist/inproc_collective.hpp"
#include "odbatch/image/pixel_values_writer.hpp"

namespace odbatch::test {

// The dataset directory; fails the calling test, naming the missing file and how to build it,
// unless the SFT file, the dirty set and the tokenizer model are there.
std::filesystem::path require_dataset();

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// One line of data/sft/mixed.jsonl and the number of images it references.
struct SftRecord {
  std::string line;
  std::size_t images = 0;
  bool wallpaper = false;  // references one of the multi-megapixel wallpapers (slow to decode)
};

// Every record of data/sft/mixed.jsonl, in file order (read once per process).
const std::vector<SftRecord>& sft_records();

// The first `count` records of mixed.jsonl with no image (and lines of at least `min_bytes`), or
// with at least one image (wallpapers left out unless `wallpapers`), in file order.
std::vector<SftRecord> text_records(std::size_t count, std::size_t min_bytes = 0);
std::vector<SftRecord> image_records(std::size_t count, bool wallpapers);

// Writes the records' lines as a JSONL file.
void write_jsonl(const std::filesystem::path& file, const std::vector<SftRecord>& records);

// A pipeline over `files` with data/images as image root, the dataset's tokenizer, small images
// (at most 256 visual tokens), a 4096-token budget and a window of 64: small enough for tests.
PipelineConfig small_config(const std::vector<std::filesystem::path>& files);

// What an exception a rank's thread caught says, for a failing check's message.
std::string exception_message(const std::exception_ptr& error);

// Runs the current epoch to its end.
std::vector<std::shared_ptr<const Batch>> drain(Pipeline& pipeline);

// A digest of everything the trainer sees in a batch: ids, labels, layout, pixels and metadata.
std::uint64_t batch_digest(const Batch& batch);
std::vector<std::uint64_t> batch_digests(const std::vector<std::shared_ptr<const Batch>>& batches);

// The pixel_values `writer` makes of a uint8 batch's images (patch_size-pixel patches), image
// after image: what a batch of the writer's dtype over the same samples holds.
std::vector<std::uint8_t> pixel_values_of(const Batch& rgb, const PixelValuesWriter& writer,
                                          std::uint32_t patch_size);

// The lines of a ledger file (see LedgerWriter) for one epoch.
struct LedgerContents {
  std::vector<std::vector<SampleId>> steps;  // sample ids per step, in step order
  std::vector<Rejection> rejected;
  std::optional<std::uint64_t> end_steps;  // from the epoch's end line
};
LedgerContents read_ledger(const std::filesystem::path& file, std::uint64_t epoch);

// Epoch 0 of `config` on one rank: its batches, and its ledger written to `ledger_file`.
struct EpochRun {
  std::vector<std::shared_ptr<const Batch>> batches;
  LedgerContents ledger;
};
EpochRun run_single_rank_epoch(const PipelineConfig& config,
                               const std::filesystem::path& ledger_file,
                               PipelineOptions options = {});

// The tar shards in `dir` that the source.webdataset fixture writes, sorted by name; fails the
// test when there are fewer than two.
std::vector<std::filesystem::path> webdataset_shards(const std::filesystem::path& dir);

// The ids of the tokenizer's vision tokens, looked up in the model.
struct VisionTokens {
  std::int32_t start = 0;
  std::int32_t end = 0;
  std::int32_t pad = 0;  // one per visual token
};
VisionTokens vision_tokens(const PipelineConfig& config);

// What check_batch compares a batch with.
struct BatchExpectations {
  const PipelineConfig* config = nullptr;
  VisionTokens vision;
  std::uint32_t world_size = 1;
  std::map<SampleId, std::size_t> images_per_sample;  // every sample that may be emitted
  // Which source file each id comes from: ids below file_starts[i + 1] are in file i.
  std::vector<SampleId> file_starts;
};

// CHECKs one batch: its layout (padded rows and mask, or cu_seqlens and position_ids), budget,
// labels, images (pixels, grids and image tokens), step info and loss scale. Returns the step
// as the audit sees it: every row's cost.
EmittedStep check_batch(const Batch& batch, const BatchExpectations& expect);

// The steps of a whole epoch, checked batch by batch; their numbers must count up from 0.
RankLedger check_epoch(const std::vector<std::shared_ptr<const Batch>>& batches,
                       const BatchExpectations& expect);

// Checks every batch of a one-rank epoch and CHECKs its audit: each id of `images_per_sample`
// (every sample that may be emitted, with its image count) emitted once or rejected once, as
// the ledger says. `file_starts` as in BatchExpectations.
AuditReport check_and_audit(const EpochRun& epoch, const PipelineConfig& config,
                            const std::map<SampleId, std::size_t>& images_per_sample,
                            std::vector<SampleId> file_starts = {0});

// One rank's share of an in-process multi-rank run: what its body recorded, and what it threw.
struct RankRun {
  std::vector<std::shared_ptr<const Batch>> batches;
  Checkpoint part;
  std::exception_ptr error;
};

// Runs `body(env, run)` on every rank of a fresh in-process group, each on its own thread;
// REQUIREs that none threw.
template <typename Body>
std::vector<RankRun> run_ranks(std::uint32_t world, Body body) {
  const auto group = InprocGroup::create(world);
  std::vector<RankRun> runs(world);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        body(DistEnv::inproc(group, rank, world), runs[rank]);
      } catch (...) {
        runs[rank].error = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  for (std::uint32_t rank = 0; rank < world; ++rank) {
    CAPTURE(rank);
    REQUIRE_MESSAGE(!runs[rank].error, exception_message(runs[rank].error));
  }
  return runs;
}

// `steps` batches of epoch 0 on `world` in-process ranks, each rank's state() after them, and
// every rank departing there together (a rank that merely stopped would abort the others).
// `options` makes each rank's PipelineOptions (none: the defaults).
std::vector<RankRun> cut_epoch(const PipelineConfig& config, std::uint32_t world,
                               std::uint64_t steps,
                               const std::function<PipelineOptions()>& options = {});

}  // namespace odbatch::test
