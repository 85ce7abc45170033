#pragma once
// A pipeline TOML with some keys of one table set to other values: how `odbatch stress` makes a
// rank configured apart, or a run over another dataset, from the config it was given. The keys
// are edited in the text, so that everything else (comments, relative paths) stays as written.
#include <string>
#include <utility>
#include <vector>

namespace odbatch::cli {

// `toml` with each key of `table` set to its TOML value text (`"false"`, `"[\"a.jsonl\"]"`):
// replaced where the table has the key (a multi-line array included), added after the table's
// header where it lacks it, and the table appended where the document has none. Does not follow
// dotted keys or inline tables; the caller parses the result to check it.
std::string with_table_values(const std::string& toml, const std::string& table,
                              const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace odbatch::cli
