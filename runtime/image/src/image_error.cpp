#include "odbatch/image/image_error.hpp"

namespace odbatch {

std::string_view to_string(ImageErrorKind kind) {
  switch (kind) {
    case ImageErrorKind::missing_file:
      return "missing_file";
    case ImageErrorKind::unreadable:
      return "unreadable";
    case ImageErrorKind::bad_path:
      return "bad_path";
    case ImageErrorKind::corrupt:
      return "corrupt";
    case ImageErrorKind::unsupported:
      return "unsupported";
    case ImageErrorKind::pixel_bomb:
      return "pixel_bomb";
    case ImageErrorKind::bad_geometry:
      return "bad_geometry";
  }
  return "?";
}

}  // namespace odbatch
