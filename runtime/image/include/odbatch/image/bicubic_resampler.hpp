#pragma once
// Resizes packed RGB or grey images (row-major HWC, uint8) with PIL's BICUBIC filter, the one
// Qwen2-VL's image processor uses, and produces PIL's exact output (Pillow 9.4 checked bit for
// bit).
//
// The filter, as in Pillow's Resample.c:
// - Kernel: Keys cubic convolution with a = -0.5,
//     k(x) = (a+2)|x|^3 - (a+3)|x|^2 + 1     for |x| < 1,
//     k(x) = a|x|^3 - 5a|x|^2 + 8a|x| - 4a   for 1 <= |x| < 2,  0 beyond.
// - Antialiasing: when shrinking by s = in/out > 1 the kernel is stretched by s (support 2s
//   source pixels, k(x/s)); when enlarging it is used as is (support 2).
// - Output pixel i is centred at source coordinate (i + 0.5) * in/out; taps are the source pixels
//   whose centres lie within the support, clipped at the image edges; weights are normalised to
//   sum to 1, then turned into 22-bit fixed point (rounded half away from zero).
// - Separable: a horizontal pass (only over the source rows the vertical pass needs) into a uint8
//   intermediate, then a vertical pass; each pass adds 2^21, shifts right by 22 and clamps to
//   0..255, so every output value is rounded to nearest and clamped.
// Pixel values stay uint8 in 0..255; rescaling and mean/std normalisation belong to the trainer.
#include <cstdint>
#include <span>
#include <vector>

namespace odbatch {

// Not thread-safe: it keeps its weight tables and intermediate rows between calls, so resizing
// repeatedly allocates only when an image needs more room than any before it.
class BicubicResampler {
 public:
  // `source` holds source_width * source_height * channels bytes and `target` target_width *
  // target_height * channels; every side is at least 1 and channels is 1 (grey) or 3 (RGB).
  // Throws std::invalid_argument otherwise. Channels are resized independently, so a grey image
  // resized and then copied into R, G and B equals the RGB image resized.
  void resize(std::span<const std::uint8_t> source, std::uint32_t source_width,
              std::uint32_t source_height, std::span<std::uint8_t> target,
              std::uint32_t target_width, std::uint32_t target_height, std::uint32_t channels = 3);

  // Fixed-point weights of one axis: output pixel i reads `count[i]` source pixels from
  // `first[i]` with the weights at `weights[i * taps]`.
  struct AxisWeights {
    std::uint32_t taps = 0;
    std::vector<std::uint32_t> first;
    std::vector<std::uint32_t> count;
    std::vector<std::int32_t> weights;
  };

 private:
  AxisWeights horizontal_;
  AxisWeights vertical_;
  std::vector<double> unnormalised_;        // one output pixel's weights before normalising
  std::vector<std::uint8_t> intermediate_;  // horizontally resized source rows
};

}  // namespace odbatch
