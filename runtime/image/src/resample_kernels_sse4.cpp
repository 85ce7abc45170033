// The kernels with SSE4.1 (and SSSE3's byte shuffle): four 32-bit lanes.
#include "resample_kernels_simd.hpp"

namespace odbatch::resample {
namespace {

struct Sse4Ops {
  using Vector = __m128i;
  static constexpr std::uint32_t kLanes = 4;

  static Vector splat(std::int32_t value) { return _mm_set1_epi32(value); }
  static Vector load_bytes(const std::uint8_t* p) {
    std::int32_t bytes;
    std::memcpy(&bytes, p, 4);
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(bytes));
  }
  static Vector load_rgb_taps(const std::uint8_t* p) {
    const __m128i pick = _mm_setr_epi8(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1);
    std::int32_t bytes;
    std::memcpy(&bytes, p, 4);
    return _mm_shuffle_epi8(_mm_cvtsi32_si128(bytes), pick);
  }
  static Vector load_weights(const std::int32_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
  static Vector multiply_add(Vector sum, Vector a, Vector b) {
    return _mm_add_epi32(sum, _mm_mullo_epi32(a, b));
  }
  static Vector add(Vector a, Vector b) { return _mm_add_epi32(a, b); }
  static void store_bytes(std::uint8_t* p, Vector sum) {
    Vector v = _mm_srai_epi32(sum, kPrecisionBits);
    v = _mm_packus_epi16(_mm_packus_epi32(v, v), v);
    const std::int32_t bytes = _mm_cvtsi128_si32(v);
    std::memcpy(p, &bytes, 4);
  }
  static void store_bytes_4(std::uint8_t* p, Vector a, Vector b, Vector c, Vector d) {
    const Vector ab =
        _mm_packus_epi32(_mm_srai_epi32(a, kPrecisionBits), _mm_srai_epi32(b, kPrecisionBits));
    const Vector cd =
        _mm_packus_epi32(_mm_srai_epi32(c, kPrecisionBits), _mm_srai_epi32(d, kPrecisionBits));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(ab, cd));
  }
  static __m128i fold_to_4(Vector v) { return v; }
};

}  // namespace

extern const Kernels kSse4Kernels = kernels_of<Sse4Ops>();

}  // namespace odbatch::resample
