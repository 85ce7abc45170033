#include "odbatch/metrics/ledger_writer.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "odbatch/core/hex_digest.hpp"

namespace odbatch {

LedgerWriter::LedgerWriter(const std::filesystem::path& path) : out_(path), path_(path) {
  if (!out_) throw std::runtime_error(path.string() + ": cannot open the ledger for writing");
}

void LedgerWriter::write_line(const std::string& line) {
  std::lock_guard lock(mutex_);
  // Each line reaches the file at once: a rank that is killed (SIGKILL, the launcher's grace
  // period) leaves every line it wrote, so the audit of an aborted run shows how far it got.
  out_ << line << '\n' << std::flush;
  if (!out_) throw std::runtime_error(path_.string() + ": cannot write the ledger");
}

void LedgerWriter::begin_epoch(const LedgerEpoch& e) {
  nlohmann::json line{
      {"kind", "epoch"},
      {"epoch", e.epoch},
      {"rank", e.shard.rank},
      {"world_size", e.shard.world_size},
      {"record_count", e.record_count},
      {"dataset_fingerprint", hex_digest(e.dataset_fingerprint)},
      {"seed", e.shard.seed},
      {"shuffle", e.shard.shuffle},
      {"split", e.shard.split == ShardSplit::contiguous ? "contiguous" : "strided"}};
  // [first id, records, epochs per pass] per source, only when sources are mixed.
  for (const auto& source : e.mix)
    line["mix"].push_back({source.first_id, source.record_count, source.epochs_per_pass});
  for (const auto& setting : e.settings) line["settings"][setting.name] = setting.value;
  write_line(line.dump());
}

void LedgerWriter::step(std::uint64_t epoch, std::uint64_t step, std::uint64_t round, bool idle,
                        std::span<const SampleId> ids) {
  write_line(nlohmann::json{{"kind", "step"},
                            {"epoch", epoch},
                            {"step", step},
                            {"round", round},
                            {"idle", idle},
                            {"ids", std::vector<SampleId>(ids.begin(), ids.end())}}
                 .dump());
}

void LedgerWriter::rejection(std::uint64_t epoch, const Rejection& r) {
  write_line(nlohmann::json{
      {"kind", "rejected"},
      {"epoch", epoch},
      {"id", r.id},
      {"reason", r.reason},
      {"detail",
       r.detail}}.dump());
}

void LedgerWriter::resumed(std::uint64_t epoch, std::uint64_t steps) {
  write_line(nlohmann::json{{"kind", "resumed"}, {"epoch", epoch}, {"steps", steps}}.dump());
}

void LedgerWriter::departed(std::uint64_t epoch, std::uint64_t steps) {
  write_line(nlohmann::json{{"kind", "departed"}, {"epoch", epoch}, {"steps", steps}}.dump());
}

void LedgerWriter::end_epoch(std::uint64_t epoch, std::uint64_t steps) {
  write_line(nlohmann::json{{"kind", "end"}, {"epoch", epoch}, {"steps", steps}}.dump());
}

}  // namespace odbatch
