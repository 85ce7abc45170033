#pragma once
// The vector instruction sets the image kernels can use, chosen once per resampler from what the
// CPU supports. Every level produces the same bytes (integer arithmetic, Pillow's fixed point);
// only the speed differs. The build stays portable: the vector kernels are compiled for their own
// instruction sets and only run where the CPU reports them.
#include <optional>
#include <string_view>

namespace odbatch {

// avx512_vnni: AVX-512 with VNNI's byte dot products and VBMI's byte permutes (Ice Lake and
// later, Zen 4), the fastest kernels; avx512 needs AVX-512F only.
enum class SimdLevel : unsigned char { scalar, sse4, avx2, avx512, avx512_vnni };
inline constexpr SimdLevel kSimdLevels[] = {SimdLevel::scalar, SimdLevel::sse4, SimdLevel::avx2,
                                            SimdLevel::avx512, SimdLevel::avx512_vnni};

// "scalar", "sse4", "avx2", "avx512", "avx512vnni"
std::string_view to_string(SimdLevel level);
std::optional<SimdLevel> parse_simd_level(std::string_view name);

// The highest level both this build and this CPU support (scalar on non-x86 builds).
SimdLevel cpu_simd_level();
bool simd_level_available(SimdLevel level);

// The level resamplers use unless told otherwise: cpu_simd_level(), lowered by the environment
// variable ODBATCH_SIMD (one of the names above), as ATEN_CPU_CAPABILITY lowers PyTorch's.
// Throws ConfigError when ODBATCH_SIMD names no level or one this CPU lacks.
SimdLevel default_simd_level();

}  // namespace odbatch
