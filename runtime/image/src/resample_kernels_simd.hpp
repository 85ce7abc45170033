#pragma once
// The vector kernels, written once over an `Ops` type that wraps one instruction set's
// intrinsics: Ops::kLanes 32-bit lanes in an Ops::Vector. Included only by the per-level
// translation units; everything here has internal linkage, so every instantiation stays in the
// unit compiled for its instruction set. Integer arithmetic wraps in vector registers and Pillow's
// sums fit in int32, so the bytes equal the scalar kernels' whatever the order of the additions.
//
// Ops provides:
//   Vector splat(int32)                       every lane the value
//   Vector load_bytes(const uint8_t*)         kLanes bytes, zero-extended to 32 bits
//   Vector load_rgb_taps(const uint8_t*)      kLanes / 4 consecutive RGB pixels as R, G, B, 0
//   Vector load_weights(const int32_t*)       kLanes weights
//   Vector multiply_add(acc, a, b)            acc + a * b, per lane
//   Vector add(a, b)                          a + b, per lane
//   void store_bytes(uint8_t*, Vector)        (lane >> 22) clamped to 0..255, kLanes bytes
//   void store_bytes_4(uint8_t*, a, b, c, d)  store_bytes of a, b, c, d, one after another
//   void store_bytes_3(uint8_t*, a, b, c)     the same for three vectors (8 lanes or more)
//   __m128i fold_to_4(Vector)                 lanes added in groups of 4 (lane i % 4)

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "resample_kernels.hpp"

namespace odbatch::resample {
namespace {

std::uint8_t scalar_pixel(std::int32_t sum) {
  const std::int32_t shifted = sum >> kPrecisionBits;
  return static_cast<std::uint8_t>(shifted < 0 ? 0 : shifted > 255 ? 255 : shifted);
}

std::int32_t horizontal_sum(__m128i v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1));
  return _mm_cvtsi128_si32(v);
}

// The source row to read for horizontal pass row y: the row itself, or a zero-padded copy when
// the loads' overread would pass the end of the source buffer.
const std::uint8_t* readable_row(const HorizontalPass& pass, std::size_t row_bytes,
                                 std::uint32_t y) {
  const std::size_t offset = (pass.first_row + y) * row_bytes;
  const std::uint8_t* row = pass.source + offset;
  if (offset + row_bytes + kRowOverread <= pass.source_bytes) return row;
  std::memcpy(pass.padded_row, row, row_bytes);
  std::memset(pass.padded_row + row_bytes, 0, kRowOverread);
  return pass.padded_row;
}

template <class Ops>
void horizontal_rgb(const HorizontalPass& pass, const AxisView& axis, const ExpandedView& layout) {
  constexpr std::uint32_t kLanes = Ops::kLanes;
  constexpr std::uint32_t kTapsPerGroup = kLanes / 4;
  const std::size_t in_stride = std::size_t{pass.source_width} * 3;
  const std::size_t out_stride = std::size_t{pass.target_width} * 3;
  const __m128i half = _mm_set1_epi32(kHalf);
  for (std::uint32_t y = 0; y < pass.rows; ++y) {
    const std::uint8_t* in_row = readable_row(pass, in_stride, y);
    std::uint8_t* out = pass.target + y * out_stride;
    for (std::uint32_t x = 0; x < pass.target_width; ++x, out += 3) {
      const std::uint8_t* in = in_row + std::size_t{axis.first[x]} * 3;
      const std::int32_t* weights =
          layout.expanded + std::size_t{x} * layout.groups_per_output * kLanes;
      auto sum = Ops::splat(0);
      for (std::uint32_t g = 0; g < layout.groups[x]; ++g)
        sum = Ops::multiply_add(sum, Ops::load_rgb_taps(in + g * kTapsPerGroup * 3),
                                Ops::load_weights(weights + g * kLanes));
      __m128i rgb = _mm_srai_epi32(_mm_add_epi32(Ops::fold_to_4(sum), half), kPrecisionBits);
      rgb = _mm_packus_epi16(_mm_packus_epi32(rgb, rgb), rgb);  // saturating: the clamp
      const std::uint32_t bytes = static_cast<std::uint32_t>(_mm_cvtsi128_si32(rgb));
      // Four bytes at once; the fourth is the next pixel's red, written after. The last pixel
      // of a row writes three, so nothing lands past the row.
      if (x + 1 < pass.target_width) {
        std::memcpy(out, &bytes, 4);
      } else {
        out[0] = static_cast<std::uint8_t>(bytes);
        out[1] = static_cast<std::uint8_t>(bytes >> 8);
        out[2] = static_cast<std::uint8_t>(bytes >> 16);
      }
    }
  }
}

template <class Ops>
void horizontal_grey(const HorizontalPass& pass, const AxisView& axis, const ExpandedView& layout) {
  constexpr std::uint32_t kLanes = Ops::kLanes;
  const std::size_t in_stride = pass.source_width;
  for (std::uint32_t y = 0; y < pass.rows; ++y) {
    const std::uint8_t* in_row = readable_row(pass, in_stride, y);
    std::uint8_t* out = pass.target + y * std::size_t{pass.target_width};
    for (std::uint32_t x = 0; x < pass.target_width; ++x) {
      const std::uint8_t* in = in_row + axis.first[x];
      const std::int32_t* weights =
          layout.expanded + std::size_t{x} * layout.groups_per_output * kLanes;
      auto sum = Ops::splat(0);
      for (std::uint32_t g = 0; g < layout.groups[x]; ++g)
        sum = Ops::multiply_add(sum, Ops::load_bytes(in + g * kLanes),
                                Ops::load_weights(weights + g * kLanes));
      out[x] = scalar_pixel(kHalf + horizontal_sum(Ops::fold_to_4(sum)));
    }
  }
}

// Output row y is a weighted sum of whole source rows (`width` bytes each, `stride` apart, the
// first one source row first_row): four vectors of bytes at a time keep four independent sums in
// flight.
template <class Ops>
void weighted_rows(const std::uint8_t* source, std::size_t stride, std::size_t width,
                   std::uint32_t first_row, std::uint32_t target_height, const AxisView& axis,
                   std::uint8_t* target) {
  constexpr std::size_t kLanes = Ops::kLanes;
  for (std::uint32_t y = 0; y < target_height; ++y) {
    const std::int32_t* weights = axis.weights + std::size_t{y} * axis.taps;
    const std::uint8_t* rows = source + (axis.first[y] - first_row) * stride;
    const std::uint32_t count = axis.count[y];
    std::uint8_t* out = target + y * stride;
    std::size_t i = 0;
    for (; i + 4 * kLanes <= width; i += 4 * kLanes) {
      auto s0 = Ops::splat(kHalf);
      auto s1 = s0;
      auto s2 = s0;
      auto s3 = s0;
      for (std::uint32_t t = 0; t < count; ++t) {
        const auto w = Ops::splat(weights[t]);
        const std::uint8_t* in = rows + t * stride + i;
        s0 = Ops::multiply_add(s0, Ops::load_bytes(in), w);
        s1 = Ops::multiply_add(s1, Ops::load_bytes(in + kLanes), w);
        s2 = Ops::multiply_add(s2, Ops::load_bytes(in + 2 * kLanes), w);
        s3 = Ops::multiply_add(s3, Ops::load_bytes(in + 3 * kLanes), w);
      }
      Ops::store_bytes_4(out + i, s0, s1, s2, s3);
    }
    const auto one_vector = [&](std::size_t at) {
      auto sum = Ops::splat(kHalf);
      for (std::uint32_t t = 0; t < count; ++t)
        sum =
            Ops::multiply_add(sum, Ops::load_bytes(rows + t * stride + at), Ops::splat(weights[t]));
      Ops::store_bytes(out + at, sum);
    };
    for (; i + kLanes <= width; i += kLanes) one_vector(i);
    if (i == width) continue;
    // The tail: one more vector ending at the row's end, which rewrites some bytes with the
    // values they already have; rows narrower than a vector go byte by byte.
    if (width >= kLanes) {
      one_vector(width - kLanes);
      continue;
    }
    for (; i < width; ++i) {
      std::int32_t sum = kHalf;
      for (std::uint32_t t = 0; t < count; ++t) sum += rows[t * stride + i] * weights[t];
      out[i] = scalar_pixel(sum);
    }
  }
}

template <class Ops>
void vertical(const VerticalPass& pass, const AxisView& axis) {
  weighted_rows<Ops>(pass.source, pass.row_bytes, pass.row_bytes, pass.first_row,
                     pass.target_height, axis, pass.target);
}

// Byte (i, j) of an 8x8 tile, at src + i * src_stride + j, goes to dst + j * dst_stride + i.
// Written out in full: GCC at -O2 keeps arrays and loops of vectors on the stack.
void transpose_8x8(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                   std::size_t dst_stride) {
  const auto row = [&](int i) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i * src_stride));
  };
  const __m128i a0 = _mm_unpacklo_epi8(row(0), row(1));
  const __m128i a1 = _mm_unpacklo_epi8(row(2), row(3));
  const __m128i a2 = _mm_unpacklo_epi8(row(4), row(5));
  const __m128i a3 = _mm_unpacklo_epi8(row(6), row(7));
  const __m128i b0 = _mm_unpacklo_epi16(a0, a1);
  const __m128i b1 = _mm_unpackhi_epi16(a0, a1);
  const __m128i b2 = _mm_unpacklo_epi16(a2, a3);
  const __m128i b3 = _mm_unpackhi_epi16(a2, a3);
  // Each holds two columns, which become two rows.
  const auto store = [&](int j, __m128i columns) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + j * dst_stride), columns);
    _mm_storeh_pi(reinterpret_cast<__m64*>(dst + (j + 1) * dst_stride), _mm_castsi128_ps(columns));
  };
  store(0, _mm_unpacklo_epi32(b0, b2));
  store(2, _mm_unpackhi_epi32(b0, b2));
  store(4, _mm_unpacklo_epi32(b1, b3));
  store(6, _mm_unpackhi_epi32(b1, b3));
}

// The same for a tile of 8 rows of 16 bytes: one load a row, and three rounds of interleaving
// as in transpose_8x8 for each half.
void transpose_8x16(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                    std::size_t dst_stride) {
  const auto row = [&](int i) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride));
  };
  const __m128i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
  const __m128i r4 = row(4), r5 = row(5), r6 = row(6), r7 = row(7);
  const auto store = [&](int j, __m128i columns) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + j * dst_stride), columns);
    _mm_storeh_pi(reinterpret_cast<__m64*>(dst + (j + 1) * dst_stride), _mm_castsi128_ps(columns));
  };
  // Rows 0-3 and 4-7 of columns first..first + 3 and first + 4..first + 7 as 32-bit lanes.
  const auto finish = [&](int first, __m128i a0, __m128i a1, __m128i a2, __m128i a3) {
    const __m128i b0 = _mm_unpacklo_epi16(a0, a1);
    const __m128i b1 = _mm_unpackhi_epi16(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi16(a2, a3);
    const __m128i b3 = _mm_unpackhi_epi16(a2, a3);
    store(first, _mm_unpacklo_epi32(b0, b2));
    store(first + 2, _mm_unpackhi_epi32(b0, b2));
    store(first + 4, _mm_unpacklo_epi32(b1, b3));
    store(first + 6, _mm_unpackhi_epi32(b1, b3));
  };
  finish(0, _mm_unpacklo_epi8(r0, r1), _mm_unpacklo_epi8(r2, r3), _mm_unpacklo_epi8(r4, r5),
         _mm_unpacklo_epi8(r6, r7));
  finish(8, _mm_unpackhi_epi8(r0, r1), _mm_unpackhi_epi8(r2, r3), _mm_unpackhi_epi8(r4, r5),
         _mm_unpackhi_epi8(r6, r7));
}

// A rows x bytes matrix (row i at src + i * src_stride) into its transpose (row j at
// dst + j * dst_stride): 8x16 and 8x8 tiles, then byte by byte at the edges.
void transpose(const std::uint8_t* src, std::size_t src_stride, std::size_t rows, std::size_t bytes,
               std::uint8_t* dst, std::size_t dst_stride) {
  std::size_t i = 0;
  for (; i + 8 <= rows; i += 8) {
    std::size_t j = 0;
    for (; j + 16 <= bytes; j += 16)
      transpose_8x16(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
    for (; j + 8 <= bytes; j += 8)
      transpose_8x8(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
    for (; j < bytes; ++j)
      for (std::size_t k = i; k < i + 8; ++k) dst[j * dst_stride + k] = src[k * src_stride + j];
  }
  for (; i < rows; ++i)
    for (std::size_t j = 0; j < bytes; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
}

// Eight rows of 16 bytes (row i at src + i * src_stride) into 16 columns of 8 bytes, one after
// another at dst: three rounds of interleaving, and every result is two whole columns.
[[maybe_unused]] void rows_to_columns_8x16(const std::uint8_t* src, std::size_t src_stride,
                                           std::uint8_t* dst) {
  const auto row = [&](int i) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride));
  };
  const __m128i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
  const __m128i r4 = row(4), r5 = row(5), r6 = row(6), r7 = row(7);
  const auto store = [&](int k, __m128i columns) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * k), columns);
  };
  // Rows 0-3 and 4-7 of columns 0-3 and 4-7 as 32-bit lanes, and two columns a vector.
  const auto finish = [&](int first, __m128i a0, __m128i a1, __m128i a2, __m128i a3) {
    const __m128i b0 = _mm_unpacklo_epi16(a0, a1);
    const __m128i b1 = _mm_unpackhi_epi16(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi16(a2, a3);
    const __m128i b3 = _mm_unpackhi_epi16(a2, a3);
    store(first, _mm_unpacklo_epi32(b0, b2));
    store(first + 1, _mm_unpackhi_epi32(b0, b2));
    store(first + 2, _mm_unpacklo_epi32(b1, b3));
    store(first + 3, _mm_unpackhi_epi32(b1, b3));
  };
  finish(0, _mm_unpacklo_epi8(r0, r1), _mm_unpacklo_epi8(r2, r3), _mm_unpacklo_epi8(r4, r5),
         _mm_unpacklo_epi8(r6, r7));
  finish(4, _mm_unpackhi_epi8(r0, r1), _mm_unpackhi_epi8(r2, r3), _mm_unpackhi_epi8(r4, r5),
         _mm_unpackhi_epi8(r6, r7));
}

// The inverse: 16 columns of 8 bytes, one after another at src, into eight rows of 16 bytes (row
// i at dst + i * dst_stride). A byte shuffle pairs the two columns of each load, which leaves an
// 8x8 transpose of 16-bit words.
[[maybe_unused]] void columns_to_rows_16x8(const std::uint8_t* src, std::uint8_t* dst,
                                           std::size_t dst_stride) {
  const __m128i pair = _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  const auto pairs = [&](int k) {
    return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * k)), pair);
  };
  const __m128i p0 = pairs(0), p1 = pairs(1), p2 = pairs(2), p3 = pairs(3);
  const __m128i p4 = pairs(4), p5 = pairs(5), p6 = pairs(6), p7 = pairs(7);
  // Rows 0-3 (lo) and 4-7 (hi) of column pairs 0-1, 2-3, 4-5, 6-7 as 32-bit lanes.
  const __m128i a0 = _mm_unpacklo_epi16(p0, p1), a1 = _mm_unpackhi_epi16(p0, p1);
  const __m128i a2 = _mm_unpacklo_epi16(p2, p3), a3 = _mm_unpackhi_epi16(p2, p3);
  const __m128i a4 = _mm_unpacklo_epi16(p4, p5), a5 = _mm_unpackhi_epi16(p4, p5);
  const __m128i a6 = _mm_unpacklo_epi16(p6, p7), a7 = _mm_unpackhi_epi16(p6, p7);
  const auto store = [&](int i, __m128i left, __m128i right) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * dst_stride),
                     _mm_unpacklo_epi64(left, right));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (i + 1) * dst_stride),
                     _mm_unpackhi_epi64(left, right));
  };
  // Two rows a vector, left half of the columns and right half.
  store(0, _mm_unpacklo_epi32(a0, a2), _mm_unpacklo_epi32(a4, a6));
  store(2, _mm_unpackhi_epi32(a0, a2), _mm_unpackhi_epi32(a4, a6));
  store(4, _mm_unpacklo_epi32(a1, a3), _mm_unpacklo_epi32(a5, a7));
  store(6, _mm_unpackhi_epi32(a1, a3), _mm_unpackhi_epi32(a5, a7));
}

// The AVX2 tiles serve the 8-lane kernels only; the AVX-512 unit (16 lanes) would leave them
// unused, which clang reports.
#if defined(__AVX2__) && !defined(__AVX512F__)
#define ODBATCH_RESAMPLE_AVX2_TILES 1
#endif

#if defined(ODBATCH_RESAMPLE_AVX2_TILES)
// rows_to_columns_8x16 on two tiles side by side, one a 128-bit half: 8 rows of 32 bytes into
// 32 columns of 8 bytes. Each result holds two columns of each tile; a half swap pairs them into
// four columns of one tile.
void rows_to_columns_8x32(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst) {
  const auto row = [&](int i) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * src_stride));
  };
  const __m256i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
  const __m256i r4 = row(4), r5 = row(5), r6 = row(6), r7 = row(7);
  const auto store = [&](int k, __m256i low_pair, __m256i high_pair) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 * k),
                        _mm256_permute2x128_si256(low_pair, high_pair, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 128 + 32 * k),
                        _mm256_permute2x128_si256(low_pair, high_pair, 0x31));
  };
  const auto finish = [&](int first, __m256i a0, __m256i a1, __m256i a2, __m256i a3) {
    const __m256i b0 = _mm256_unpacklo_epi16(a0, a1);
    const __m256i b1 = _mm256_unpackhi_epi16(a0, a1);
    const __m256i b2 = _mm256_unpacklo_epi16(a2, a3);
    const __m256i b3 = _mm256_unpackhi_epi16(a2, a3);
    store(first, _mm256_unpacklo_epi32(b0, b2), _mm256_unpackhi_epi32(b0, b2));
    store(first + 1, _mm256_unpacklo_epi32(b1, b3), _mm256_unpackhi_epi32(b1, b3));
  };
  finish(0, _mm256_unpacklo_epi8(r0, r1), _mm256_unpacklo_epi8(r2, r3),
         _mm256_unpacklo_epi8(r4, r5), _mm256_unpacklo_epi8(r6, r7));
  finish(2, _mm256_unpackhi_epi8(r0, r1), _mm256_unpackhi_epi8(r2, r3),
         _mm256_unpackhi_epi8(r4, r5), _mm256_unpackhi_epi8(r6, r7));
}

// columns_to_rows_16x8 on two tiles side by side: 32 columns of 8 bytes, one after another at
// src, into 8 rows of 32 bytes; each load puts a column pair of either tile in one half.
void columns_to_rows_32x8(const std::uint8_t* src, std::uint8_t* dst, std::size_t dst_stride) {
  const __m256i pair = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8,
                                        1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  const auto pairs = [&](int k) {
    const __m256i both = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * k))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 128 + 16 * k)), 1);
    return _mm256_shuffle_epi8(both, pair);
  };
  const __m256i p0 = pairs(0), p1 = pairs(1), p2 = pairs(2), p3 = pairs(3);
  const __m256i p4 = pairs(4), p5 = pairs(5), p6 = pairs(6), p7 = pairs(7);
  const __m256i a0 = _mm256_unpacklo_epi16(p0, p1), a1 = _mm256_unpackhi_epi16(p0, p1);
  const __m256i a2 = _mm256_unpacklo_epi16(p2, p3), a3 = _mm256_unpackhi_epi16(p2, p3);
  const __m256i a4 = _mm256_unpacklo_epi16(p4, p5), a5 = _mm256_unpackhi_epi16(p4, p5);
  const __m256i a6 = _mm256_unpacklo_epi16(p6, p7), a7 = _mm256_unpackhi_epi16(p6, p7);
  const auto store = [&](int i, __m256i left, __m256i right) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i * dst_stride),
                        _mm256_unpacklo_epi64(left, right));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (i + 1) * dst_stride),
                        _mm256_unpackhi_epi64(left, right));
  };
  store(0, _mm256_unpacklo_epi32(a0, a2), _mm256_unpacklo_epi32(a4, a6));
  store(2, _mm256_unpackhi_epi32(a0, a2), _mm256_unpackhi_epi32(a4, a6));
  store(4, _mm256_unpacklo_epi32(a1, a3), _mm256_unpacklo_epi32(a5, a7));
  store(6, _mm256_unpackhi_epi32(a1, a3), _mm256_unpackhi_epi32(a5, a7));
}
#endif

// kLanes rows of `bytes` bytes (row i at src + i * src_stride) into `bytes` columns of kLanes
// bytes, one after another at dst.
template <std::uint32_t kLanes>
void rows_to_columns(const std::uint8_t* src, std::size_t src_stride, std::size_t bytes,
                     std::uint8_t* dst) {
  std::size_t j = 0;
  if constexpr (kLanes == 8) {
#if defined(ODBATCH_RESAMPLE_AVX2_TILES)
    for (; j + 32 <= bytes; j += 32) rows_to_columns_8x32(src + j, src_stride, dst + j * kLanes);
#endif
    for (; j + 16 <= bytes; j += 16) rows_to_columns_8x16(src + j, src_stride, dst + j * kLanes);
  }
  transpose(src + j, src_stride, kLanes, bytes - j, dst + j * kLanes, kLanes);
}

// `bytes` columns of kLanes bytes, one after another at src, into kLanes rows (row i at
// dst + i * dst_stride).
template <std::uint32_t kLanes>
void columns_to_rows(const std::uint8_t* src, std::size_t bytes, std::uint8_t* dst,
                     std::size_t dst_stride) {
  std::size_t j = 0;
  if constexpr (kLanes == 8) {
#if defined(ODBATCH_RESAMPLE_AVX2_TILES)
    for (; j + 32 <= bytes; j += 32) columns_to_rows_32x8(src + j * kLanes, dst + j, dst_stride);
#endif
    for (; j + 16 <= bytes; j += 16) columns_to_rows_16x8(src + j * kLanes, dst + j, dst_stride);
  }
  transpose(src + j * kLanes, kLanes, bytes - j, kLanes, dst + j, dst_stride);
}

// The RGB horizontal pass over two blocks of Ops::kLanes rows at once, one row a lane: each
// block is transposed so that each source byte column is kLanes contiguous bytes, every output
// byte column is then a weighted sum of whole source columns, the six vectors of R, G and B of
// both blocks sharing each weight, and the result is transposed back. The last pair ends at the
// last row, so it overlaps the pair before (and, under two blocks' rows, its own blocks overlap)
// and rewrites some rows with the bytes they have.
template <class Ops>
void horizontal_rgb_by_blocks(const HorizontalPass& pass, const AxisView& axis) {
  constexpr std::uint32_t kLanes = Ops::kLanes;
  const std::size_t in_stride = std::size_t{pass.source_width} * 3;
  const std::size_t out_stride = std::size_t{pass.target_width} * 3;
  std::uint8_t* const columns[2] = {pass.band_columns, pass.band_columns + kLanes * in_stride};
  std::uint8_t* const outputs[2] = {pass.band_outputs, pass.band_outputs + kLanes * out_stride};
  const auto two_blocks = [&](std::uint32_t first_y, std::uint32_t second_y) {
    rows_to_columns<kLanes>(pass.source + (pass.first_row + first_y) * in_stride, in_stride,
                            in_stride, columns[0]);
    rows_to_columns<kLanes>(pass.source + (pass.first_row + second_y) * in_stride, in_stride,
                            in_stride, columns[1]);
    for (std::uint32_t x = 0; x < pass.target_width; ++x) {
      const std::int32_t* weights = axis.weights + std::size_t{x} * axis.taps;
      const std::size_t first = std::size_t{axis.first[x]} * 3 * kLanes;
      const std::uint8_t* in = columns[0] + first;
      const std::uint8_t* in2 = columns[1] + first;
      auto r = Ops::splat(kHalf);
      auto g = r;
      auto b = r;
      auto r2 = r;
      auto g2 = r;
      auto b2 = r;
      for (std::uint32_t t = 0; t < axis.count[x]; ++t, in += 3 * kLanes, in2 += 3 * kLanes) {
        const auto w = Ops::splat(weights[t]);
        r = Ops::multiply_add(r, Ops::load_bytes(in), w);
        g = Ops::multiply_add(g, Ops::load_bytes(in + kLanes), w);
        b = Ops::multiply_add(b, Ops::load_bytes(in + 2 * kLanes), w);
        r2 = Ops::multiply_add(r2, Ops::load_bytes(in2), w);
        g2 = Ops::multiply_add(g2, Ops::load_bytes(in2 + kLanes), w);
        b2 = Ops::multiply_add(b2, Ops::load_bytes(in2 + 2 * kLanes), w);
      }
      Ops::store_bytes_3(outputs[0] + std::size_t{x} * 3 * kLanes, r, g, b);
      Ops::store_bytes_3(outputs[1] + std::size_t{x} * 3 * kLanes, r2, g2, b2);
    }
    columns_to_rows<kLanes>(outputs[0], out_stride, pass.target + first_y * out_stride, out_stride);
    columns_to_rows<kLanes>(outputs[1], out_stride, pass.target + second_y * out_stride,
                            out_stride);
  };
  std::uint32_t y = 0;
  for (; y + 2 * kLanes <= pass.rows; y += 2 * kLanes) two_blocks(y, y + kLanes);
  if (y < pass.rows)
    two_blocks(pass.rows >= 2 * kLanes ? pass.rows - 2 * kLanes : 0, pass.rows - kLanes);
}

// The horizontal pass over bands of kBandRows rows (all of them when fewer): the band is
// transposed, so that each source byte column is a row of the band's height, and every output
// byte column is then a weighted sum of whole source columns, the vertical pass's shape with no
// per-pixel reduction; the result is transposed back. The last band ends at the last row, so it
// overlaps the one before and rewrites some rows with the bytes they have.
template <class Ops, std::uint32_t kChannels>
void horizontal_in_bands(const HorizontalPass& pass, const AxisView& axis) {
  const std::uint32_t band = std::min(pass.rows, kBandRows);
  const std::size_t in_stride = std::size_t{pass.source_width} * kChannels;
  const std::size_t out_stride = std::size_t{pass.target_width} * kChannels;
  std::uint8_t* columns = pass.band_columns;
  std::uint8_t* outputs = pass.band_outputs;
  const auto one_band = [&](std::uint32_t y) {
    transpose(pass.source + (pass.first_row + y) * in_stride, in_stride, band, in_stride, columns,
              band);
    // A channel's columns are every kChannels-th row of the transposed band.
    for (std::uint32_t c = 0; c < kChannels; ++c)
      weighted_rows<Ops>(columns + c * band, kChannels * band, band, 0, pass.target_width, axis,
                         outputs + c * band);
    transpose(outputs, band, out_stride, band, pass.target + y * out_stride, out_stride);
  };
  std::uint32_t y = 0;
  for (; y + band <= pass.rows; y += band) one_band(y);
  if (y < pass.rows) one_band(pass.rows - band);
}

// The horizontal pass of every vector level. RGB with 8 lanes or more goes in blocks of a
// vector's rows, where R, G and B share each weight (faster there than bands); the rest in bands.
// Passes of fewer rows than a vector take the per-pixel kernels.
template <class Ops, std::uint32_t kChannels>
void horizontal_by_transposes(const HorizontalPass& pass, const AxisView& axis,
                              const ExpandedView& layout) {
  if (pass.rows < Ops::kLanes) {
    if constexpr (kChannels == 3)
      horizontal_rgb<Ops>(pass, axis, layout);
    else
      horizontal_grey<Ops>(pass, axis, layout);
  } else if constexpr (kChannels == 3 && Ops::kLanes >= 8) {
    horizontal_rgb_by_blocks<Ops>(pass, axis);
  } else {
    horizontal_in_bands<Ops, kChannels>(pass, axis);
  }
}

// Sixteen grey bytes become 48 RGB bytes with three byte shuffles (SSSE3, which every vector
// level has).
void grey_to_rgb(const std::uint8_t* grey, std::size_t pixels, std::uint8_t* rgb) {
  const __m128i first = _mm_setr_epi8(0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5);
  const __m128i second = _mm_setr_epi8(5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10);
  const __m128i third =
      _mm_setr_epi8(10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15);
  std::size_t i = 0;
  for (; i + 16 <= pixels; i += 16) {
    const __m128i g = _mm_loadu_si128(reinterpret_cast<const __m128i*>(grey + i));
    __m128i* out = reinterpret_cast<__m128i*>(rgb + 3 * i);
    _mm_storeu_si128(out, _mm_shuffle_epi8(g, first));
    _mm_storeu_si128(out + 1, _mm_shuffle_epi8(g, second));
    _mm_storeu_si128(out + 2, _mm_shuffle_epi8(g, third));
  }
  for (; i < pixels; ++i) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = grey[i];
}

template <class Ops>
constexpr Kernels kernels_of() {
  return Kernels{Ops::kLanes,
                 false,
                 horizontal_by_transposes<Ops, 3>,
                 horizontal_by_transposes<Ops, 1>,
                 vertical<Ops>,
                 nullptr,
                 grey_to_rgb};
}

}  // namespace
}  // namespace odbatch::resample
