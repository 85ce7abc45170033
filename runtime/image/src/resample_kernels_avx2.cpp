// The kernels with AVX2: eight 32-bit lanes, two RGB taps per multiply.
#include "resample_kernels_simd.hpp"

namespace odbatch::resample {
namespace {

struct Avx2Ops {
  using Vector = __m256i;
  static constexpr std::uint32_t kLanes = 8;

  static Vector splat(std::int32_t value) { return _mm256_set1_epi32(value); }
  static Vector load_bytes(const std::uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static Vector load_rgb_taps(const std::uint8_t* p) {
    const __m128i pick = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    return _mm256_cvtepu8_epi32(
        _mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), pick));
  }
  static Vector load_weights(const std::int32_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static Vector multiply_add(Vector sum, Vector a, Vector b) {
    return _mm256_add_epi32(sum, _mm256_mullo_epi32(a, b));
  }
  static Vector add(Vector a, Vector b) { return _mm256_add_epi32(a, b); }
  static void store_bytes(std::uint8_t* p, Vector sum) {
    const Vector v = _mm256_srai_epi32(sum, kPrecisionBits);
    const __m128i words =
        _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(words, words));
  }
  // Two saturating narrowings work within 128-bit halves, each half holding four lanes of every
  // vector; one lane permutation puts each vector's eight bytes together.
  static __m256i narrow_4(Vector a, Vector b, Vector c, Vector d) {
    const __m256i ab = _mm256_packus_epi32(_mm256_srai_epi32(a, kPrecisionBits),
                                           _mm256_srai_epi32(b, kPrecisionBits));
    const __m256i cd = _mm256_packus_epi32(_mm256_srai_epi32(c, kPrecisionBits),
                                           _mm256_srai_epi32(d, kPrecisionBits));
    return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd),
                                       _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  }
  static void store_bytes_3(std::uint8_t* p, Vector a, Vector b, Vector c) {
    const __m256i bytes = narrow_4(a, b, c, c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(bytes));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p + 16), _mm256_extracti128_si256(bytes, 1));
  }
  static void store_bytes_4(std::uint8_t* p, Vector a, Vector b, Vector c, Vector d) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrow_4(a, b, c, d));
  }
  static __m128i fold_to_4(Vector v) {
    return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  }
};

}  // namespace

extern const Kernels kAvx2Kernels = kernels_of<Avx2Ops>();

}  // namespace odbatch::resample
