#pragma once
// Where a decoder can send its resized RGB instead of a whole image: bands of rows, top to
// bottom, each valid only during the call. PixelValuesWriter's block rows take them, so the
// model-ready pixel_values are written from rows still in cache, with no full uint8 image between
// the resize and the values.
#include <cstdint>

namespace odbatch {

class RgbBandSink {
 public:
  // Rows per band; every band has this many but the last, which may have fewer.
  virtual std::uint32_t band_rows() const = 0;
  // Called once, before the first band, with the resized image's size.
  virtual void begin(std::uint32_t width, std::uint32_t height) = 0;
  // Rows [first_row, first_row + rows) of the resized image: rows * width * 3 bytes at `rgb`.
  virtual void band(const std::uint8_t* rgb, std::uint32_t first_row, std::uint32_t rows) = 0;

 protected:
  ~RgbBandSink() = default;
};

}  // namespace odbatch
