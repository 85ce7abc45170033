#include "toml_document.hpp"

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/source/regular_file.hpp"

namespace odbatch::toml_document {

std::string location(std::string_view source, const toml::source_region& region) {
  std::string where(source);
  if (region.begin.line > 0) {
    // Appended piecewise: GCC 12 at -O3 warns (-Wrestrict) on ":" + std::string temporaries.
    where.append(":").append(std::to_string(region.begin.line));
    if (region.begin.column > 0) where.append(":").append(std::to_string(region.begin.column));
  }
  return where;
}

std::string read(const std::filesystem::path& file) {
  constexpr std::uint64_t kMaxConfigFileBytes = std::uint64_t{16} << 20;
  try {
    return read_regular_file(file.string(), kMaxConfigFileBytes);
  } catch (const FileReadError& e) {
    throw ConfigFileError(file.string(), "", "cannot read: " + e.problem());
  }
}

toml::table parse(std::string_view document, std::string_view source) {
  try {
    return toml::parse(document, source);
  } catch (const toml::parse_error& e) {
    throw ConfigFileError(location(source, e.source()), "",
                          "TOML syntax error: " + std::string(e.description()));
  }
}

}  // namespace odbatch::toml_document
