#pragma once
// Text as a TOML basic string: quoted, with '"' and '\' escaped and control characters as \uXXXX,
// so that what is written reads back as the same text (config variants, a stage's parameters).
#include <string>

namespace odbatch {

std::string toml_string(const std::string& text);

}  // namespace odbatch
