#include <array>

#include "fuzz_entries.hpp"

namespace odbatch::fuzz {

std::span<const Target> targets() {
  static constexpr std::array<Target, 15> kTargets{{
      {"proposal_frame", proposal_frame},
      {"checkpoint_file", checkpoint_file},
      {"store_frames", store_frames},
      {"store_session", store_session},
      {"jsonl_records", jsonl_records},
      {"tar_shard", tar_shard},
      {"jpeg_image", jpeg_image},
      {"png_image", png_image},
      {"webp_image", webp_image},
      {"image_resize", image_resize},
      {"pipeline_toml", pipeline_toml},
      {"jinja_template", jinja_template},
      {"tokenizer_json", tokenizer_json},
      {"tiktoken_ranks", tiktoken_ranks},
      {"shard_list", shard_list},
  }};
  return kTargets;
}

}  // namespace odbatch::fuzz
