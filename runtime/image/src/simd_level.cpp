#include "odbatch/image/simd_level.hpp"

#include <cstdlib>
#include <string>

#include "odbatch/core/config.hpp"

namespace odbatch {

std::string_view to_string(SimdLevel level) {
  switch (level) {
    case SimdLevel::scalar:
      return "scalar";
    case SimdLevel::sse4:
      return "sse4";
    case SimdLevel::avx2:
      return "avx2";
    case SimdLevel::avx512:
      return "avx512";
    case SimdLevel::avx512_vnni:
      return "avx512vnni";
  }
  return "?";
}

std::optional<SimdLevel> parse_simd_level(std::string_view name) {
  for (const SimdLevel level : kSimdLevels)
    if (name == to_string(level)) return level;
  return std::nullopt;
}

SimdLevel cpu_simd_level() {
#if defined(ODBATCH_IMAGE_X86_KERNELS)
  static const SimdLevel level = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi"))
      return SimdLevel::avx512_vnni;
    if (__builtin_cpu_supports("avx512f")) return SimdLevel::avx512;
    if (__builtin_cpu_supports("avx2")) return SimdLevel::avx2;
    if (__builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3")) return SimdLevel::sse4;
    return SimdLevel::scalar;
  }();
  return level;
#else
  return SimdLevel::scalar;
#endif
}

bool simd_level_available(SimdLevel level) {
  return level <= cpu_simd_level();
}

SimdLevel default_simd_level() {
  const char* forced = std::getenv("ODBATCH_SIMD");
  if (forced == nullptr || *forced == '\0') return cpu_simd_level();
  const auto level = parse_simd_level(forced);
  if (!level)
    throw ConfigError("ODBATCH_SIMD",
                      "'" + std::string(forced) +
                          "' is not a level; use scalar, sse4, avx2, avx512 or avx512vnni");
  if (!simd_level_available(*level))
    throw ConfigError("ODBATCH_SIMD", std::string(forced) + " is above what this CPU supports (" +
                                          std::string(to_string(cpu_simd_level())) + ")");
  return *level;
}

}  // namespace odbatch
