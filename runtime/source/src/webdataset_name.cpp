#include "odbatch/source/webdataset_name.hpp"

#include <array>

namespace odbatch {

std::optional<WebDatasetName> split_webdataset_name(std::string_view member_path) {
  const auto slash = member_path.rfind('/');
  const std::size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const auto dot = member_path.find('.', base);
  if (dot == std::string_view::npos || dot == base) return std::nullopt;
  WebDatasetName name{std::string(member_path.substr(0, dot)),
                      std::string(member_path.substr(dot + 1))};
  for (char& c : name.extension) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return name;
}

bool is_image_extension(std::string_view extension) {
  const auto dot = extension.rfind('.');
  const auto last = dot == std::string_view::npos ? extension : extension.substr(dot + 1);
  constexpr std::array<std::string_view, 4> kImages = {"jpg", "jpeg", "png", "webp"};
  for (const auto image : kImages) {
    if (last == image) return true;
  }
  return false;
}

}  // namespace odbatch
