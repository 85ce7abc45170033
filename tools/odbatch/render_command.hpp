#pragma once
// `odbatch render`: shows what a pipeline's tokenizer makes of records: the text its chat template
// renders, the token ids with their pieces, and which positions are supervised (coloured on a
// terminal; JSON with --json), so a user sees exactly what the model is trained on.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace odbatch::cli {

struct RenderOptions {
  std::filesystem::path config;  // a pipeline TOML file
  // One record: FILE:LINE (JSON Lines, 1-based), FILE[N] (a JSON array's element or a tar
  // shard's sample, 0-based) or SHARD:KEY; or a dataset file of any format whose records are all
  // rendered; neither: the first record of the config's first source file.
  std::optional<std::string> record;
  std::optional<std::filesystem::path> records_file;
  bool json = false;
  std::optional<bool> color;  // unset: colour when stdout is a terminal
};

// Returns the exit status: 0 every record rendered, 1 some record was refused (the reason is
// shown), 2 bad input or configuration.
int run_render_command(const RenderOptions& options);

}  // namespace odbatch::cli
