// The kernels with AVX-512 VNNI and VBMI (Ice Lake and later, Zen 4): byte dot products. vpdpbusd
// multiplies four unsigned pixel bytes by four signed bytes and adds the four products to a 32-bit
// lane, one instruction for four taps; with each weight split into three signed bytes
// (ByteDigitView), a sum is three accumulators added at shifts of 0, 8 and 16 bits. Additions
// wrap in 32 bits and Pillow's sums fit in int32, so the bytes equal the scalar kernels'.
// Vertical: four source rows interleaved byte by byte are the four taps of each lane.
// Horizontal: a 64-byte permute (vpermb) gathers each output byte's four taps from a window of the
// source row (GatherView); where a block's taps span more than a window, the AVX-512 kernels.
// Grey to RGB: three permutes per 64 pixels, also straight from the vertical pass's sums.
#include <immintrin.h>

#include <algorithm>

#include "resample_kernels.hpp"

namespace odbatch::resample {
namespace {

constexpr std::size_t kVectorBytes = 64;
// The low byte of each 16-bit value.
constexpr __mmask64 kEvenBytes = 0x5555'5555'5555'5555ULL;

// The first n bytes of a vector (all of them from 64 on).
__mmask64 first_bytes(std::size_t n) {
  return n >= kVectorBytes ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
}

// One lane-vector's sums, a digit each; `low` starts at kHalf, the rounding.
struct DigitSums {
  __m512i low = _mm512_set1_epi32(kHalf);
  __m512i middle = _mm512_setzero_si512();
  __m512i high = _mm512_setzero_si512();

  void add(__m512i taps, __m512i d0, __m512i d1, __m512i d2) {
    low = _mm512_dpbusd_epi32(low, taps, d0);
    middle = _mm512_dpbusd_epi32(middle, taps, d1);
    high = _mm512_dpbusd_epi32(high, taps, d2);
  }
  // A tail's two 16-bit taps a lane, weighted by 16-bit weights: at the digit of weight 1.
  void add_tail(__m512i taps, __m512i weights) { low = _mm512_dpwssd_epi32(low, taps, weights); }
  // (sum >> 22) per lane, not yet clamped.
  __m512i shifted() const {
    const __m512i upper = _mm512_add_epi32(middle, _mm512_slli_epi32(high, 8));
    return _mm512_srai_epi32(_mm512_add_epi32(low, _mm512_slli_epi32(upper, 8)), kPrecisionBits);
  }
};

// Byte k of 192 RGB bytes is grey byte k / 3: three permutes of 64 grey bytes.
struct GreyToRgbOrder {
  alignas(64) std::uint8_t bytes[3 * kVectorBytes];
};
constexpr GreyToRgbOrder kGreyToRgbOrder = [] {
  GreyToRgbOrder order{};
  for (std::size_t k = 0; k < 3 * kVectorBytes; ++k)
    order.bytes[k] = static_cast<std::uint8_t>(k / 3);
  return order;
}();

// 64 grey bytes (n of them valid) as 192 RGB bytes: three permutes.
void store_as_rgb(std::uint8_t* rgb, __m512i grey, std::size_t n) {
  const std::size_t bytes = 3 * n;
  for (std::size_t k = 0; k < 3; ++k) {
    const std::size_t at = k * kVectorBytes;
    if (bytes <= at) return;
    const __m512i order = _mm512_load_si512(kGreyToRgbOrder.bytes + at);
    _mm512_mask_storeu_epi8(rgb + at, first_bytes(bytes - at),
                            _mm512_permutexvar_epi8(order, grey));
  }
}

// Output row y is a weighted sum of source rows, 64 bytes at a time. Bytes i of rows t..t+3
// interleave into lanes of four taps; the unpacks work within 128-bit quarters, so the four lane
// vectors hold outputs 0-3, 4-7, 8-11 and 12-15 of each quarter, and the packs (also per quarter)
// put them back in order. A group's taps past the output's count have weight 0 and read its last
// row again, which is always there. kGreyToRgb writes each output byte three times, as R, G, B.
template <bool kGreyToRgb>
void weighted_rows(const VerticalPass& pass, const AxisView& axis) {
  const ByteDigitView& digits = axis.digits;
  const std::size_t width = pass.row_bytes;
  for (std::uint32_t y = 0; y < pass.target_height; ++y) {
    const std::uint8_t* rows = pass.source + (axis.first[y] - pass.first_row) * width;
    const std::uint32_t last = std::max(axis.count[y], 1U) - 1;
    const std::int32_t* words = digits.digits + std::size_t{y} * digits.groups_per_output * 3;
    const std::uint32_t groups = digits.groups[y];
    std::uint8_t* out = pass.target + y * width * (kGreyToRgb ? 3 : 1);
    for (std::size_t i = 0; i < width; i += kVectorBytes) {
      const __mmask64 mask = first_bytes(width - i);
      DigitSums s0, s1, s2, s3;
      for (std::uint32_t g = 0; g < groups; ++g) {
        const auto row = [&](std::uint32_t k) {
          return _mm512_maskz_loadu_epi8(mask, rows + std::min(4 * g + k, last) * width + i);
        };
        const __m512i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
        const __m512i low01 = _mm512_unpacklo_epi8(r0, r1), high01 = _mm512_unpackhi_epi8(r0, r1);
        const __m512i low23 = _mm512_unpacklo_epi8(r2, r3), high23 = _mm512_unpackhi_epi8(r2, r3);
        const __m512i d0 = _mm512_set1_epi32(words[3 * g]);
        const __m512i d1 = _mm512_set1_epi32(words[3 * g + 1]);
        const __m512i d2 = _mm512_set1_epi32(words[3 * g + 2]);
        s0.add(_mm512_unpacklo_epi16(low01, low23), d0, d1, d2);
        s1.add(_mm512_unpackhi_epi16(low01, low23), d0, d1, d2);
        s2.add(_mm512_unpacklo_epi16(high01, high23), d0, d1, d2);
        s3.add(_mm512_unpackhi_epi16(high01, high23), d0, d1, d2);
      }
      // Signed saturation to 16 bits, then unsigned to 8: the clamp to 0..255.
      const __m512i bytes = _mm512_packus_epi16(_mm512_packs_epi32(s0.shifted(), s1.shifted()),
                                                _mm512_packs_epi32(s2.shifted(), s3.shifted()));
      if constexpr (kGreyToRgb)
        store_as_rgb(out + 3 * i, bytes, std::min(width - i, kVectorBytes));
      else
        _mm512_mask_storeu_epi8(out + i, mask, bytes);
    }
  }
}

void vertical(const VerticalPass& pass, const AxisView& axis) {
  weighted_rows<false>(pass, axis);
}

void vertical_grey_to_rgb(const VerticalPass& pass, const AxisView& axis) {
  weighted_rows<true>(pass, axis);
}

// Rows resized together by the horizontal pass: they share each block's permute order, masks and
// weights, which stay in registers while the rows' sums accumulate.
constexpr std::uint32_t kRowsPerTile = 4;

// The packs below leave, in each 128-bit quarter q, lanes 4q..4q+3 of the first, second, third
// and fourth sums; this order puts each sums' 16 bytes together, row r in quarter r.
struct TileOrder {
  alignas(64) std::uint8_t bytes[kVectorBytes];
};
constexpr TileOrder kTileOrder = [] {
  TileOrder order{};
  for (std::uint32_t p = 0; p < kVectorBytes; ++p) {
    const std::uint32_t row = p / 16, lane = p % 16;
    order.bytes[p] = static_cast<std::uint8_t>((lane / 4) * 16 + row * 4 + lane % 4);
  }
  return order;
}();

// A tile's 16 outputs of each row, clamped to 0..255, stored at block b's place.
inline void store_block(const DigitSums& s0, const DigitSums& s1, const DigitSums& s2,
                        const DigitSums& s3, std::uint32_t b, std::size_t out_bytes,
                        std::uint8_t* const (&outs)[kRowsPerTile]) {
  // Signed saturation to 16 bits, then unsigned to 8: the clamp.
  const __m512i packed = _mm512_packus_epi16(_mm512_packs_epi32(s0.shifted(), s1.shifted()),
                                             _mm512_packs_epi32(s2.shifted(), s3.shifted()));
  const __m512i rows = _mm512_permutexvar_epi8(_mm512_load_si512(kTileOrder.bytes), packed);
  const __m128i row_bytes[kRowsPerTile] = {
      _mm512_castsi512_si128(rows), _mm512_extracti32x4_epi32(rows, 1),
      _mm512_extracti32x4_epi32(rows, 2), _mm512_extracti32x4_epi32(rows, 3)};
  if (out_bytes >= kGatherBlock) {
    const std::size_t block_at =
        std::min<std::size_t>(std::size_t{b} * kGatherBlock, out_bytes - kGatherBlock);
    for (std::uint32_t r = 0; r < kRowsPerTile; ++r)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(outs[r] + block_at), row_bytes[r]);
  } else {
    for (std::uint32_t r = 0; r < kRowsPerTile; ++r)
      _mm512_mask_storeu_epi8(outs[r], first_bytes(out_bytes),
                              _mm512_castsi128_si512(row_bytes[r]));
  }
}

// Block b of a tile's rows (rows past the pass's last are that row again). Four named sums, not an
// array: they stay in registers.
template <std::uint32_t kChannels>
[[gnu::always_inline]] inline void gather_block(const GatherView& gather, std::uint32_t b,
                                                const std::uint8_t* const (&rows)[kRowsPerTile],
                                                std::size_t in_stride, std::size_t out_bytes,
                                                std::uint8_t* const (&outs)[kRowsPerTile]) {
  const __m512i order = _mm512_loadu_si512(gather.indices + std::size_t{b} * kVectorBytes);
  const std::int8_t* digits = gather.digits + std::size_t{gather.first_vector[b]} * kVectorBytes;
  const std::size_t first = gather.window_first[b];
  DigitSums s0, s1, s2, s3;
  for (std::uint32_t g = 0; g < gather.groups[b]; ++g, digits += 3 * kVectorBytes) {
    const std::size_t at = first + std::size_t{g} * 4 * kChannels;
    const __mmask64 readable = first_bytes(in_stride - at);
    const __m512i d0 = _mm512_loadu_si512(digits);
    const __m512i d1 = _mm512_loadu_si512(digits + kVectorBytes);
    const __m512i d2 = _mm512_loadu_si512(digits + 2 * kVectorBytes);
    const auto taps = [&](std::uint32_t r) {
      return _mm512_permutexvar_epi8(order, _mm512_maskz_loadu_epi8(readable, rows[r] + at));
    };
    s0.add(taps(0), d0, d1, d2);
    s1.add(taps(1), d0, d1, d2);
    s2.add(taps(2), d0, d1, d2);
    s3.add(taps(3), d0, d1, d2);
  }
  if (const std::size_t at = gather.tail_first[b]; at != kNoTail) {
    const __mmask64 readable = first_bytes(in_stride - at);
    const __m512i tail_order =
        _mm512_loadu_si512(gather.tail_indices + std::size_t{b} * kVectorBytes);
    const __m512i weights =
        _mm512_loadu_si512(gather.tail_weights + std::size_t{b} * kVectorBytes / 2);
    const auto taps = [&](std::uint32_t r) {
      return _mm512_maskz_permutexvar_epi8(kEvenBytes, tail_order,
                                           _mm512_maskz_loadu_epi8(readable, rows[r] + at));
    };
    s0.add_tail(taps(0), weights);
    s1.add_tail(taps(1), weights);
    s2.add_tail(taps(2), weights);
    s3.add_tail(taps(3), weights);
  }
  store_block(s0, s1, s2, s3, b, out_bytes, outs);
}

template <std::uint32_t kChannels>
void horizontal(const HorizontalPass& pass, const AxisView& axis, const ExpandedView& layout) {
  const GatherView& gather = layout.gather;
  if (gather.blocks == 0) {
    (kChannels == 3 ? kAvx512Kernels.horizontal_rgb : kAvx512Kernels.horizontal_grey)(pass, axis,
                                                                                      layout);
    return;
  }
  const std::size_t in_stride = std::size_t{pass.source_width} * kChannels;
  const std::size_t out_bytes = std::size_t{pass.target_width} * kChannels;
  for (std::uint32_t y = 0; y < pass.rows; y += kRowsPerTile) {
    const std::uint8_t* rows[kRowsPerTile];
    std::uint8_t* outs[kRowsPerTile];
    for (std::uint32_t r = 0; r < kRowsPerTile; ++r) {
      const std::uint32_t row = std::min(y + r, pass.rows - 1);
      rows[r] = pass.source + (pass.first_row + row) * in_stride;
      outs[r] = pass.target + row * out_bytes;
    }
    for (std::uint32_t b = 0; b < gather.blocks; ++b)
      gather_block<kChannels>(gather, b, rows, in_stride, out_bytes, outs);
  }
}

void horizontal_rgb(const HorizontalPass& pass, const AxisView& axis, const ExpandedView& layout) {
  horizontal<3>(pass, axis, layout);
}

void horizontal_grey(const HorizontalPass& pass, const AxisView& axis, const ExpandedView& layout) {
  horizontal<1>(pass, axis, layout);
}

void grey_to_rgb(const std::uint8_t* grey, std::size_t pixels, std::uint8_t* rgb) {
  for (std::size_t i = 0; i < pixels; i += kVectorBytes) {
    const std::size_t n = std::min(pixels - i, kVectorBytes);
    store_as_rgb(rgb + 3 * i, _mm512_maskz_loadu_epi8(first_bytes(n), grey + i), n);
  }
}

}  // namespace

// 16 lanes: the AVX-512 kernels this level falls back to read weights laid out for 16.
extern const Kernels kAvx512VnniKernels{
    16, true, horizontal_rgb, horizontal_grey, vertical, vertical_grey_to_rgb, grey_to_rgb};

}  // namespace odbatch::resample
