#include "toml_document.hpp"

#include "odbatch/config/config_file_error.hpp"

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

toml::table parse(std::string_view document, std::string_view source) {
  try {
    return toml::parse(document, source);
  } catch (const toml::parse_error& e) {
    throw ConfigFileError(location(source, e.source()), "",
                          "TOML syntax error: " + std::string(e.description()));
  }
}

}  // namespace odbatch::toml_document
