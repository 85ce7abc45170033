#pragma once
// JSON for people and scripts alike: indented by two spaces, with arrays of plain values (and short
// objects of them) kept on one line, so a step's sample ids read as one row, not a column.
#include <string>

#include <nlohmann/json.hpp>

namespace odbatch::cli {

// Insertion-ordered, so reports list their fields in the order they are explained.
using Report = nlohmann::ordered_json;

std::string to_readable_json(const Report& value);

}  // namespace odbatch::cli
