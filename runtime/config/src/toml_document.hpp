#pragma once
// Shared by the TOML config readers: parsing with located syntax errors, and "file:line:column"
// locations for messages. Private to runtime/ (toml++ is slow to compile and stays out of public
// headers).
#include <filesystem>
#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace odbatch::toml_document {

// "source:line:column" of a region, as far as it is known.
std::string location(std::string_view source, const toml::source_region& region);

// The text of a config file: a regular file of at most 16 MiB (real configs are kilobytes), else a
// ConfigFileError naming the file.
std::string read(const std::filesystem::path& file);

// Parses a document; a syntax error becomes a ConfigFileError with its location.
toml::table parse(std::string_view document, std::string_view source);

}  // namespace odbatch::toml_document
