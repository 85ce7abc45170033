// WebDataset tar shards against JSONL holding the same samples, side by side in one run, on the
// real dataset: records/s of indexing (walking the shards' headers, and loading their cached
// indexes), of reading each record (pread) in an epoch's shuffled order, and of reading a whole
// sample ready to decode: the record parsed and its image bytes in hand (image files read beside
// JSONL; image members split out of the sample's one read in a shard).
//
//   odbatch_bench_tar_source [--samples-per-shard 1000] [--dir /tmp] [--repeat 5] [--out F]
#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "bench_report.hpp"
#include "bench_timing.hpp"
#include "odbatch/image/image_file.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/dataset_index.hpp"
#include "odbatch/source/record_reader.hpp"
#include "odbatch/source/tar_sample.hpp"

namespace odbatch::bench {
namespace {

const std::filesystem::path kData = std::filesystem::path(ODBATCH_SOURCE_DIR) / "data";

struct Options {
  std::uint64_t samples_per_shard = 1000;
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  std::uint64_t repeat = 5;
  std::string out_path;
};

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string() + " (tools/prepare-data.sh)");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ShardWriter {
 public:
  explicit ShardWriter(const std::filesystem::path& path) : archive_(archive_write_new()) {
    archive_write_set_format_ustar(archive_);
    if (archive_write_open_filename(archive_, path.c_str()) != ARCHIVE_OK)
      throw std::runtime_error("cannot write " + path.string());
  }
  ~ShardWriter() {
    archive_write_close(archive_);
    archive_write_free(archive_);
  }
  void add(const std::string& name, const std::string& bytes) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_size(entry, static_cast<la_int64_t>(bytes.size()));
    archive_write_header(archive_, entry);
    archive_write_data(archive_, bytes.data(), bytes.size());
    archive_entry_free(entry);
  }

 private:
  archive* archive_;
};

// The dataset's ShareGPT records as shards (KEY.json naming its images by member, KEY.jpg or
// KEY.0.jpg, KEY.1.jpg ...), and the same records as JSONL with paths into data/images.
std::vector<std::string> write_dataset(const std::filesystem::path& dir, std::uint64_t per_shard,
                                       std::filesystem::path& jsonl) {
  std::ifstream in(kData / "sft/sharegpt.jsonl", std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the dataset (tools/prepare-data.sh)");
  jsonl = dir / "records.jsonl";
  std::ofstream lines(jsonl, std::ios::binary);
  std::vector<std::string> shards;
  std::unique_ptr<ShardWriter> shard;
  std::uint64_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    lines << line << '\n';
    if (n % per_shard == 0) {
      shard.reset();
      shards.push_back((dir / ("shard-" + std::to_string(shards.size()) + ".tar")).string());
      shard = std::make_unique<ShardWriter>(shards.back());
    }
    auto record = nlohmann::json::parse(line);
    std::vector<std::string> images;
    if (record.contains("image")) images.push_back(record["image"]);
    if (record.contains("images")) images = record["images"].get<std::vector<std::string>>();
    record.erase("image");
    record.erase("images");
    char key[16];
    std::snprintf(key, sizeof key, "%08llu", static_cast<unsigned long long>(n));
    std::vector<std::string> members;
    for (std::size_t i = 0; i < images.size(); ++i)
      members.push_back(images.size() == 1 ? "jpg" : std::to_string(i) + ".jpg");
    if (members.size() == 1) record["image"] = members[0];
    if (members.size() > 1) record["images"] = members;
    shard->add(std::string(key) + ".json", record.dump());
    for (std::size_t i = 0; i < images.size(); ++i)
      shard->add(std::string(key) + "." + members[i], file_bytes(kData / "images" / images[i]));
  }
  return shards;
}

struct Round {
  double index_s = 0;
  double cached_index_s = 0;  // tar shards only
  double read_s = 0;
  double sample_s = 0;
  std::uint64_t records = 0;
  std::uint64_t image_bytes = 0;
};

Round measure(const std::vector<std::string>& files, const std::filesystem::path& cache,
              std::uint64_t seed, bool tar) {
  Round round;
  auto start = Clock::now();
  auto index = std::make_shared<const DatasetIndex>(DatasetIndex::build(files));
  round.index_s = seconds_since(start);
  if (tar) {
    DatasetIndex::build(files, {cache, {}});  // fills the cache
    start = Clock::now();
    index = std::make_shared<const DatasetIndex>(DatasetIndex::build(files, {cache, {}}));
    round.cached_index_s = seconds_since(start);
  }
  round.records = index->record_count();
  std::vector<SampleId> order(round.records);
  std::iota(order.begin(), order.end(), SampleId{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  const RecordReader reader(index);
  std::uint64_t bytes = 0;
  start = Clock::now();
  for (const auto id : order) bytes += std::get<Record>(reader.read(id)).text.size();
  round.read_s = seconds_since(start);
  std::uint64_t complete = 0;
  start = Clock::now();
  for (const auto id : order) {
    const auto record = std::get<Record>(reader.read(id));
    std::vector<std::string> member_images;
    for (const auto* member : implicit_images(record.members))
      member_images.push_back(member->extension);
    const auto parsed = parse_conversation(record.text, record.where(), member_images);
    const auto* conversation = std::get_if<Conversation>(&parsed);
    if (conversation == nullptr) continue;
    bool all_images = true;
    for (const auto& image : conversation->images) {
      if (tar) {
        const auto* member = find_member(record.members, image);
        all_images &= member != nullptr;
        if (member != nullptr) round.image_bytes += member->bytes.size();
      } else {
        const auto file = read_image_file(kData / "images", image, {});
        all_images &= static_cast<bool>(file);
        if (file) round.image_bytes += file.value().size();
      }
    }
    complete += all_images;
  }
  round.sample_s = seconds_since(start);
  if (bytes == 0 || complete + 10 < round.records)
    throw std::runtime_error("not every sample was read whole");
  return round;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--samples-per-shard") {
      options.samples_per_shard = parse_count(flag, value);
    } else if (flag == "--dir") {
      options.dir = value;
    } else if (flag == "--repeat") {
      options.repeat = parse_count(flag, value);
    } else if (flag == "--out") {
      options.out_path = value;
    } else {
      throw std::invalid_argument("unknown flag " + flag);
    }
  }
  return options;
}

int run(const Options& options) {
  const auto scratch = options.dir / ("odbatch-tar-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch);
  struct Cleanup {
    std::filesystem::path path;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{scratch};
  std::filesystem::path jsonl;
  const auto shards = write_dataset(scratch, options.samples_per_shard, jsonl);
  const std::vector<std::string> jsonl_files = {jsonl.string()};
  std::uint64_t shard_bytes = 0;
  for (const auto& shard : shards) shard_bytes += std::filesystem::file_size(shard);

  // Interleaved rounds, so drift on a shared machine hits both formats alike.
  std::vector<Round> jsonl_rounds;
  std::vector<Round> tar_rounds;
  for (std::uint64_t round = 0; round <= options.repeat; ++round) {
    const auto cache = scratch / ("cache-" + std::to_string(round));
    auto lines = measure(jsonl_files, cache, round, false);
    auto tars = measure(shards, cache, round, true);
    if (round == 0) continue;  // warms the page cache and the allocator
    jsonl_rounds.push_back(lines);
    tar_rounds.push_back(tars);
  }
  auto rate = [](const std::vector<Round>& rounds, double Round::*field) {
    std::vector<double> seconds;
    for (const auto& round : rounds) seconds.push_back(round.*field);
    return static_cast<double>(rounds.front().records) / median(seconds);
  };
  Report report;
  report["benchmark"] = "tar_source";
  report["records"] = tar_rounds.front().records;
  report["shards"] = shards.size();
  report["shard_mib"] = rounded(static_cast<double>(shard_bytes) / (1024.0 * 1024.0), 1);
  report["image_mib_per_epoch"] =
      rounded(static_cast<double>(tar_rounds.front().image_bytes) / (1024.0 * 1024.0), 1);
  for (const auto& [name, field] :
       {std::pair{"index", &Round::index_s}, std::pair{"read", &Round::read_s},
        std::pair{"read_sample_with_images", &Round::sample_s}}) {
    const double lines = rate(jsonl_rounds, field);
    const double tars = rate(tar_rounds, field);
    report[name] = {{"jsonl_records_per_s", rounded(lines, 0)},
                    {"tar_records_per_s", rounded(tars, 0)},
                    {"tar_vs_jsonl", rounded(tars / lines, 3)}};
  }
  report["index_from_cache"] = {
      {"tar_records_per_s", rounded(rate(tar_rounds, &Round::cached_index_s), 0)},
      {"vs_walking_the_shards",
       rounded(rate(tar_rounds, &Round::cached_index_s) / rate(tar_rounds, &Round::index_s), 2)}};
  emit_report(report, options.out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  try {
    return odbatch::bench::run(odbatch::bench::parse_options(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "odbatch_bench_tar_source: " << e.what() << '\n';
    return 2;
  }
}
