#pragma once
// The run ledger: every emitted step's sample ids and every rejection, one JSON object per line,
// so `odbatch audit` can check that each id of the epoch was emitted exactly once or rejected.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "odbatch/core/epoch_selection.hpp"
#include "odbatch/core/rejection.hpp"
#include "odbatch/core/run_settings.hpp"
#include "odbatch/core/sample.hpp"
#include "odbatch/source/epoch_shard.hpp"

namespace odbatch {

// What identifies an epoch's shard, so an audit can recompute the ids the rank was given.
struct LedgerEpoch {
  std::uint64_t epoch = 0;
  std::uint64_t record_count = 0;  // of the whole dataset
  std::uint64_t dataset_fingerprint = 0;
  ShardSpec shard;
  // The sources the epoch mixes (odbatch/core/epoch_selection.hpp); empty: every record.
  std::vector<MixedSource> mix;
  // The run's settings that decide its samples and batches (checkpoint_settings), those a
  // preprocessor_config file gave included, so a ledger says what its samples were made with.
  std::vector<RunSetting> settings;
};

// Thread-safe appends, each line flushed to the file as it is written.
class LedgerWriter {
 public:
  // Throws std::runtime_error naming the path when it cannot be opened.
  explicit LedgerWriter(const std::filesystem::path& path);

  void begin_epoch(const LedgerEpoch& epoch);
  // Right after begin_epoch for an epoch resumed from a checkpoint: the steps from `steps` on
  // follow; earlier ones are in the ledgers of the run that saved it.
  void resumed(std::uint64_t epoch, std::uint64_t steps);
  void step(std::uint64_t epoch, std::uint64_t step, std::uint64_t round, bool idle,
            std::span<const SampleId> ids);
  void rejection(std::uint64_t epoch, const Rejection& rejection);
  void end_epoch(std::uint64_t epoch, std::uint64_t steps);
  // The epoch's last line when its ranks departed after `steps` steps: steps listed beyond them
  // were prepared but never taken.
  void departed(std::uint64_t epoch, std::uint64_t steps);

 private:
  void write_line(const std::string& line);
  std::mutex mutex_;
  std::ofstream out_;
  std::filesystem::path path_;
};

}  // namespace odbatch
