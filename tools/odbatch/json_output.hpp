#pragma once
// JSON for people and scripts alike: indented by two spaces, with arrays of plain values (and short
// objects of them) kept on one line, so a step's sample ids read as one row, not a column.
// Every subcommand's report follows one convention (docs/cli.md): a top-level object that begins
// with "command" and "version", snake_case keys, and 64-bit fingerprints and digests as "0x" hex
// strings (JSON numbers above 2^53 lose digits in jq and JavaScript).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace odbatch::cli {

// Insertion-ordered, so reports list their fields in the order they are explained.
using Report = nlohmann::ordered_json;

std::string to_readable_json(const Report& value);

// A report's first fields: {"command": command, "version": odbatch's version}.
Report command_report(std::string_view command);

}  // namespace odbatch::cli
