// The kernels with AVX-512F: sixteen 32-bit lanes, four RGB taps per multiply.
#include "resample_kernels_simd.hpp"

namespace odbatch::resample {
namespace {

struct Avx512Ops {
  using Vector = __m512i;
  static constexpr std::uint32_t kLanes = 16;

  static Vector splat(std::int32_t value) { return _mm512_set1_epi32(value); }
  static Vector load_bytes(const std::uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static Vector load_rgb_taps(const std::uint8_t* p) {
    const __m128i pick = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    return _mm512_cvtepu8_epi32(
        _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), pick));
  }
  static Vector load_weights(const std::int32_t* p) { return _mm512_loadu_si512(p); }
  static Vector multiply_add(Vector sum, Vector a, Vector b) {
    return _mm512_add_epi32(sum, _mm512_mullo_epi32(a, b));
  }
  static Vector add(Vector a, Vector b) { return _mm512_add_epi32(a, b); }
  static void store_bytes(std::uint8_t* p, Vector sum) {
    // Negative sums to 0 first: the narrowing below saturates as unsigned.
    const Vector v =
        _mm512_max_epi32(_mm512_srai_epi32(sum, kPrecisionBits), _mm512_setzero_si512());
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtusepi32_epi8(v));
  }
  static void store_bytes_3(std::uint8_t* p, Vector a, Vector b, Vector c) {
    store_bytes(p, a);
    store_bytes(p + kLanes, b);
    store_bytes(p + 2 * kLanes, c);
  }
  static void store_bytes_4(std::uint8_t* p, Vector a, Vector b, Vector c, Vector d) {
    store_bytes_3(p, a, b, c);
    store_bytes(p + 3 * kLanes, d);
  }
  static __m128i fold_to_4(Vector v) {
    const __m256i halves =
        _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
  }
};

}  // namespace

extern const Kernels kAvx512Kernels = kernels_of<Avx512Ops>();

}  // namespace odbatch::resample
