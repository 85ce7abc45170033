// Writes every batch of one epoch that the C++ API yields for a config, one JSON object per line
// (arrays and step info), so the Python tests can compare the binding's batches with them.
//   odbatch_batch_dump PIPELINE.toml EPOCH OUT.jsonl
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "odbatch/actors/pipeline.hpp"

namespace {

template <typename T>
nlohmann::json array(std::span<const T> values) {
  return nlohmann::json(std::vector<T>(values.begin(), values.end()));
}

nlohmann::json batch_json(const odbatch::Batch& batch) {
  const auto& info = batch.step_info();
  return {
      {"layout", std::string(odbatch::to_string(batch.layout()))},
      {"rows", batch.rows()},
      {"seq_len", batch.seq_len()},
      {"input_ids", array(batch.input_ids())},
      {"labels", array(batch.labels())},
      {"attention_mask", array(batch.attention_mask())},
      {"cu_seqlens", array(batch.cu_seqlens())},
      {"position_ids", array(batch.position_ids())},
      {"pixel_values", array(batch.pixel_values())},
      {"image_grid_thw", array(batch.image_grid_thw())},
      {"step", info.step},
      {"idle", info.idle},
      {"loss_scale", info.loss_scale},
      {"samples_this_step", info.global.samples},
      {"sample_ids", info.sample_ids},
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " PIPELINE.toml EPOCH OUT.jsonl\n";
    return 2;
  }
  try {
    odbatch::Pipeline pipeline(odbatch::PipelineConfig::from_toml_file(argv[1]));
    pipeline.start_epoch(std::stoull(argv[2]));
    std::ofstream out(argv[3]);
    while (const auto batch = pipeline.next_batch()) out << batch_json(*batch).dump() << '\n';
    return out ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "batch dump: " << e.what() << '\n';
    return 1;
  }
}
