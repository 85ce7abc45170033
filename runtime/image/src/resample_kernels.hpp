#pragma once
// The two passes of Pillow's separable bicubic resize, once per instruction set. The vector
// translation units are compiled with their own -m flags, so this header, which they include,
// holds only plain data and function pointers: no inline library code whose single out-of-line
// copy the linker could take from a vector unit and run on a CPU without it.
#include <cstddef>
#include <cstdint>

namespace odbatch::resample {

// Pillow's precision for 8-bit images: sums of 255 * weights stay within int32.
inline constexpr int kPrecisionBits = 32 - 8 - 2;
inline constexpr std::int32_t kHalf = std::int32_t{1} << (kPrecisionBits - 1);

// Horizontal loads read up to this many bytes past a source row's last pixel; the kernels copy a
// row that close to the end of the buffer into `padded_row` (row bytes + this) first.
inline constexpr std::size_t kRowOverread = 16;

// One axis's fixed-point weights: output i reads count[i] source pixels from first[i], weighted
// by weights[i * taps ...].
struct AxisView {
  std::uint32_t taps = 0;
  const std::uint32_t* first = nullptr;
  const std::uint32_t* count = nullptr;
  const std::int32_t* weights = nullptr;
};

// The horizontal weights laid out for a kernel of `lanes` 32-bit lanes: output i has groups[i]
// groups of `lanes` weights at expanded[i * groups_per_output * lanes]. RGB packs lanes / 4 taps
// per group (each weight repeated for R, G, B, and 0 for the fourth lane); grey packs `lanes` taps.
struct ExpandedView {
  std::uint32_t groups_per_output = 0;
  const std::uint32_t* groups = nullptr;
  const std::int32_t* expanded = nullptr;
};

// The most rows a vector kernel's horizontal pass transposes at once.
inline constexpr std::uint32_t kBandRows = 64;

// The rows of scratch a horizontal pass of `rows` needs: a band, and at least two blocks of
// `lanes` rows.
constexpr std::uint32_t band_rows(std::uint32_t rows, std::uint32_t lanes) {
  const std::uint32_t band = rows < kBandRows ? rows : kBandRows;
  return band > 2 * lanes ? band : 2 * lanes;
}

struct HorizontalPass {
  const std::uint8_t* source;  // the whole source image
  std::size_t source_bytes;
  std::uint32_t source_width;
  std::uint32_t first_row;  // the first source row resized
  std::uint32_t rows;
  std::uint32_t target_width;
  std::uint8_t* target;      // rows * target_width * channels bytes
  std::uint8_t* padded_row;  // source_width * channels + kRowOverread bytes of scratch
  // Scratch for kernels that transpose bands of rows, each band_rows(rows, Kernels::lanes) rows
  // of source_width * channels and of target_width * channels bytes.
  std::uint8_t* band_columns;
  std::uint8_t* band_outputs;
};

struct VerticalPass {
  const std::uint8_t* source;  // rows of row_bytes; first[] counts from `first_row`
  std::size_t row_bytes;
  std::uint32_t first_row;
  std::uint32_t target_height;
  std::uint8_t* target;  // target_height * row_bytes bytes
};

struct Kernels {
  std::uint32_t lanes;  // 0 for the scalar kernels, which read the unexpanded weights
  void (*horizontal_rgb)(const HorizontalPass&, const AxisView&, const ExpandedView&);
  void (*horizontal_grey)(const HorizontalPass&, const AxisView&, const ExpandedView&);
  void (*vertical)(const VerticalPass&, const AxisView&);
  // Each grey byte written three times, as R, G and B.
  void (*grey_to_rgb)(const std::uint8_t* grey, std::size_t pixels, std::uint8_t* rgb);
};

extern const Kernels kScalarKernels;
#if defined(ODBATCH_IMAGE_X86_KERNELS)
extern const Kernels kSse4Kernels;
extern const Kernels kAvx2Kernels;
extern const Kernels kAvx512Kernels;
#endif

}  // namespace odbatch::resample
