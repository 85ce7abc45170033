#pragma once
// An image decoded and resized to its visual-token geometry: uint8 pixels, or the model-ready
// pixel_values cut into patches. The decoder produces it; it travels inside SamplePayload to the
// collator without being copied.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace odbatch {

// The patch grid an image is resized to (smart_resize in odbatch/image/vision_geometry.hpp).
struct ImageGrid {
  std::uint32_t grid_h = 0;  // patch rows: resized height / patch_size
  std::uint32_t grid_w = 0;  // patch columns: resized width / patch_size
  std::uint32_t tokens = 0;  // grid_h * grid_w / merge_size^2

  std::uint32_t patches() const { return grid_h * grid_w; }

  friend bool operator==(const ImageGrid&, const ImageGrid&) = default;
};

// A rectangle of an image's source pixels (its header's size) that a record stage keeps: the
// decoder cuts it out of the full-size image before resizing it to its grid, as Pillow's
// img.crop((x, y, x + width, y + height)) before resize() does.
struct ImageCrop {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;

  friend bool operator==(const ImageCrop&, const ImageCrop&) = default;
};

// The libjpeg-turbo DCT scaling factor an image was decoded at: num/den of its source size.
struct DctScale {
  std::uint32_t num = 1;
  std::uint32_t den = 1;

  friend bool operator==(const DctScale&, const DctScale&) = default;
};

// How an image's pixels reach the trainer: uint8 RGB as decoded and resized (HWC), or
// Qwen2-VL's pixel_values (rescaled, normalised, cut into patches) as float32 or bfloat16.
enum class PixelDtype : std::uint8_t { uint8, float32, bfloat16 };

constexpr std::string_view to_string(PixelDtype dtype) {
  return dtype == PixelDtype::uint8     ? "uint8"
         : dtype == PixelDtype::float32 ? "float32"
                                        : "bfloat16";
}

constexpr std::size_t element_bytes(PixelDtype dtype) {
  return dtype == PixelDtype::uint8 ? 1 : dtype == PixelDtype::float32 ? 4 : 2;
}

// An allocator whose vectors leave new elements uninitialised: a pixel_values buffer is written
// whole right after it is sized, and zeroing it first would be one more pass over megabytes.
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* at) noexcept {
    ::new (static_cast<void*>(at)) U;
  }
  template <class U, class... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

using PatchValueBytes = std::vector<std::uint8_t, UninitialisedAllocator<std::uint8_t>>;

struct DecodedImage {
  ImageGrid grid;
  std::uint32_t width = 0;   // resized width, grid.grid_w * patch_size
  std::uint32_t height = 0;  // resized height, grid.grid_h * patch_size
  PixelDtype dtype = PixelDtype::uint8;
  // uint8: height * width * 3 bytes, row-major HWC, RGB, 0..255 (not normalised); empty
  // otherwise.
  std::vector<std::uint8_t> rgb;
  // float32 and bfloat16: grid.patches() rows of values_per_patch values (channels * temporal
  // patch * patch side^2) in the image processor's order, as native-endian bytes; empty for uint8.
  PatchValueBytes patch_values;
  std::uint32_t values_per_patch = 0;
  std::uint32_t source_width = 0;  // as the JPEG header declares
  std::uint32_t source_height = 0;
  std::uint32_t decoded_width = 0;  // after DCT scaling (and the crop), before resizing
  std::uint32_t decoded_height = 0;
  DctScale dct_scale;
  std::optional<ImageCrop> crop;  // of the source, when one was asked for (decoded at full size)
};

}  // namespace odbatch
