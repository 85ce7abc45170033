#pragma once
// Why an image could not be turned into pixels, as a value: image code never throws on bad data,
// so the image-decoder actor can reject the sample with its reason and carry on.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace odbatch {

enum class ImageErrorKind : std::uint8_t {
  missing_file,  // no file at the path
  unreadable,    // the file exists but cannot be read (permissions, a directory, I/O error)
  bad_path,      // the path is absolute or escapes the image root
  corrupt,       // not decodable: broken markers, truncated or damaged entropy data
  unsupported,   // a valid image this decoder does not handle (not a JPEG, 12-bit, ...)
  pixel_bomb,    // over a resource limit: declared pixels, side length or file size
  bad_geometry,  // no resize target: a zero side or an aspect ratio over 200
};

std::string_view to_string(ImageErrorKind kind);

struct ImageError {
  ImageErrorKind kind = ImageErrorKind::corrupt;
  // What went wrong, with libjpeg-turbo's own words where it had any. The decoder does not know
  // the sample, so the caller prefixes the image's id or path.
  std::string message;
};

// A value or the error that prevented it.
template <class T>
class ImageResult {
 public:
  // Implicit, so a function returns either a value or an error directly.
  ImageResult(T value) : state_(std::move(value)) {}
  ImageResult(ImageError error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition: ok() for value(), !ok() for error(); otherwise std::bad_variant_access.
  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const ImageError& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, ImageError> state_;
};

}  // namespace odbatch
