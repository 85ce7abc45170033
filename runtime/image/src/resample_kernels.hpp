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

// The weights as the byte dot-product kernels (VNNI) multiply them: each weight split into three
// signed bytes, w = d0 + 256 * d1 + 65536 * d2 (Pillow's weights stay within 23 bits, so d2 fits
// a signed byte too), and four taps a group. Output i has groups[i] groups at
// digits[i * groups_per_output * 3]: three 32-bit words, the four taps' d0, then d1, then d2.
// Taps past an output's count have digits 0.
struct ByteDigitView {
  std::uint32_t groups_per_output = 0;
  const std::uint32_t* groups = nullptr;
  const std::int32_t* digits = nullptr;
};

// One axis's fixed-point weights: output i reads count[i] source pixels from first[i], weighted
// by weights[i * taps ...]; `digits` holds the same weights split into bytes where the kernels
// read them (Kernels::byte_digits), and is empty otherwise.
struct AxisView {
  std::uint32_t taps = 0;
  const std::uint32_t* first = nullptr;
  const std::uint32_t* count = nullptr;
  const std::int32_t* weights = nullptr;
  ByteDigitView digits;
};

// A row's horizontal pass as byte gathers, for kernels with a 64-byte permute (VBMI): the output
// row's bytes in blocks of kGatherBlock, the last block ending at the row's end (overlapping the
// one before; rows under a block repeat their last byte). For group g of block b, the kernel loads
// the 64 source bytes from window_first[b] + g * 4 * channels and permutes them by
// indices[b * 64 ...]: lane j's four bytes are four consecutive taps of output byte j. Its
// weights are the byte digits of those taps, one 64-byte vector per digit:
// digits[(first_vector[b] + 3 * g + d) * 64 ...].
// Where the outputs of a block have up to two taps more than its groups hold, each with a weight
// within 16 bits (the outermost taps of a window, near zero, when a side changes by a little),
// those taps are the block's tail: tail_first[b] is not kNoTail, and the kernel loads the 64
// bytes from there and permutes them by tail_indices[b * 64 ...] with the odd bytes zeroed, so
// lane j holds output byte j's tail taps as two 16-bit values, weighted by the 16-bit
// tail_weights[b * 32 + 2 * j ...]: one 16-bit dot product (vpdpwssd) instead of a group of three.
// `blocks` is 0 where some block's taps span more than 64 bytes (a strong reduction); the kernels
// then transpose instead.
inline constexpr std::uint32_t kGatherBlock = 16;
inline constexpr std::uint32_t kNoTail = ~std::uint32_t{0};
struct GatherView {
  std::uint32_t blocks = 0;
  const std::uint32_t* window_first = nullptr;
  const std::uint32_t* groups = nullptr;
  const std::uint32_t* first_vector = nullptr;
  const std::uint8_t* indices = nullptr;
  const std::int8_t* digits = nullptr;
  const std::uint32_t* tail_first = nullptr;
  const std::uint8_t* tail_indices = nullptr;
  const std::int16_t* tail_weights = nullptr;
};

// The horizontal weights laid out for a kernel of `lanes` 32-bit lanes: output i has groups[i]
// groups of `lanes` weights at expanded[i * groups_per_output * lanes]. RGB packs lanes / 4 taps
// per group (each weight repeated for R, G, B, and 0 for the fourth lane); grey packs `lanes` taps.
struct ExpandedView {
  std::uint32_t groups_per_output = 0;
  const std::uint32_t* groups = nullptr;
  const std::int32_t* expanded = nullptr;
  GatherView gather;  // where the kernels read it (Kernels::byte_digits)
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
  bool byte_digits;     // reads AxisView::digits and ExpandedView::gather
  void (*horizontal_rgb)(const HorizontalPass&, const AxisView&, const ExpandedView&);
  void (*horizontal_grey)(const HorizontalPass&, const AxisView&, const ExpandedView&);
  void (*vertical)(const VerticalPass&, const AxisView&);
  // The vertical pass of grey rows written straight as RGB: target_height rows of 3 * row_bytes
  // bytes at pass.target. Null where the kernels have none; the resampler then runs `vertical`
  // a row at a time and grey_to_rgb.
  void (*vertical_grey_to_rgb)(const VerticalPass&, const AxisView&);
  // Each grey byte written three times, as R, G and B.
  void (*grey_to_rgb)(const std::uint8_t* grey, std::size_t pixels, std::uint8_t* rgb);
};

extern const Kernels kScalarKernels;
#if defined(ODBATCH_IMAGE_X86_KERNELS)
extern const Kernels kSse4Kernels;
extern const Kernels kAvx2Kernels;
extern const Kernels kAvx512Kernels;
extern const Kernels kAvx512VnniKernels;
#endif

}  // namespace odbatch::resample
