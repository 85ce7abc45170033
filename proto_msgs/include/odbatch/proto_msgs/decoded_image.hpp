#pragma once
// An image decoded and resized to its visual-token geometry, ready to be cut into patches. The
// decoder produces it; it travels inside SamplePayload to the collator without being copied.
#include <cstdint>
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

// The libjpeg-turbo DCT scaling factor an image was decoded at: num/den of its source size.
struct DctScale {
  std::uint32_t num = 1;
  std::uint32_t den = 1;

  friend bool operator==(const DctScale&, const DctScale&) = default;
};

struct DecodedImage {
  ImageGrid grid;
  std::uint32_t width = 0;   // resized width, grid.grid_w * patch_size
  std::uint32_t height = 0;  // resized height, grid.grid_h * patch_size
  // height * width * 3 bytes: row-major HWC, RGB, uint8 0..255 (not normalised).
  std::vector<std::uint8_t> rgb;
  std::uint32_t source_width = 0;  // as the JPEG header declares
  std::uint32_t source_height = 0;
  std::uint32_t decoded_width = 0;  // after DCT scaling, before resizing
  std::uint32_t decoded_height = 0;
  DctScale dct_scale;
};

}  // namespace odbatch
