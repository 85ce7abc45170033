#include "odbatch/image/bicubic_resampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "byte_digit_weights.hpp"
#include "odbatch/core/config.hpp"
#include "resample_kernels.hpp"

namespace odbatch {
namespace {

using resample::kPrecisionBits;

constexpr double kSupport = 2.0;
constexpr double kA = -0.5;
// Weight tables kept for the most recent source/target size pairs (each axis is one pair).
constexpr std::size_t kCachedTables = 8;

double bicubic(double x) {
  x = std::fabs(x);
  if (x < 1.0) return ((kA + 2.0) * x - (kA + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * kA;
  return 0.0;
}

// The horizontal weights laid out for a vector kernel (see resample::ExpandedView).
struct ExpandedWeights {
  std::uint32_t lanes = 0;  // 0: not laid out yet
  std::uint32_t groups_per_output = 0;
  std::vector<std::uint32_t> groups;
  std::vector<std::int32_t> expanded;
};

// One axis resized from in_size to out_size: Pillow's fixed-point weights.
struct AxisTable {
  std::uint32_t in_size = 0;
  std::uint32_t out_size = 0;
  std::uint64_t last_used = 0;
  std::uint32_t taps = 0;
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> count;
  std::vector<std::int32_t> weights;
  ExpandedWeights grey;
  ExpandedWeights rgb;
  resample::ByteDigits byte_digits;
  resample::GatherWeights grey_gather;
  resample::GatherWeights rgb_gather;

  // With the byte digits where they were built.
  resample::AxisView view() const {
    resample::AxisView view{taps, first.data(), count.data(), weights.data(), {}};
    if (byte_digits.built) view.digits = byte_digits.view();
    return view;
  }
};

// Pillow's precompute_coeffs followed by normalize_coeffs_8bpc.
void compute_weights(std::uint32_t in_size, std::uint32_t out_size, AxisTable& axis,
                     std::vector<double>& unnormalised) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = kSupport * filter_scale;
  axis.in_size = in_size;
  axis.out_size = out_size;
  axis.taps = static_cast<std::uint32_t>(std::ceil(support)) * 2 + 1;
  axis.first.resize(out_size);
  axis.count.resize(out_size);
  axis.weights.assign(std::size_t{out_size} * axis.taps, 0);
  axis.grey.lanes = axis.rgb.lanes = 0;
  axis.byte_digits.built = axis.grey_gather.built = axis.rgb_gather.built = false;
  unnormalised.resize(axis.taps);
  const double inverse_filter_scale = 1.0 / filter_scale;
  for (std::uint32_t i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    // Truncation toward zero, as Pillow's (int) casts, then clipped to the image.
    const auto lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(center - support + 0.5));
    const auto hi =
        std::min<std::int64_t>(in_size, static_cast<std::int64_t>(center + support + 0.5));
    const auto count = static_cast<std::uint32_t>(std::max<std::int64_t>(0, hi - lo));
    double total = 0.0;
    for (std::uint32_t t = 0; t < count; ++t) {
      const double w = bicubic((static_cast<double>(t + lo) - center + 0.5) * inverse_filter_scale);
      unnormalised[t] = w;
      total += w;
    }
    std::int32_t* weights = &axis.weights[std::size_t{i} * axis.taps];
    for (std::uint32_t t = 0; t < count; ++t) {
      const double normalised = total != 0.0 ? unnormalised[t] / total : unnormalised[t];
      const double fixed = normalised * (1 << kPrecisionBits);
      weights[t] = static_cast<std::int32_t>(fixed < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    axis.first[i] = static_cast<std::uint32_t>(lo);
    axis.count[i] = count;
  }
}

// RGB packs lanes / 4 taps a group, each weight in three lanes and 0 in the fourth; grey packs
// one tap a lane. Lanes past an output's taps stay 0, so the pixels they read do not count.
const ExpandedWeights& expanded(AxisTable& axis, std::uint32_t lanes, bool rgb) {
  ExpandedWeights& layout = rgb ? axis.rgb : axis.grey;
  if (layout.lanes == lanes) return layout;
  const std::uint32_t taps_per_group = rgb ? lanes / 4 : lanes;
  layout.lanes = lanes;
  layout.groups_per_output = (axis.taps + taps_per_group - 1) / taps_per_group;
  layout.groups.resize(axis.out_size);
  layout.expanded.assign(std::size_t{axis.out_size} * layout.groups_per_output * lanes, 0);
  for (std::uint32_t x = 0; x < axis.out_size; ++x) {
    const std::uint32_t count = axis.count[x];
    layout.groups[x] = (count + taps_per_group - 1) / taps_per_group;
    std::int32_t* out = &layout.expanded[std::size_t{x} * layout.groups_per_output * lanes];
    for (std::uint32_t t = 0; t < count; ++t) {
      const std::int32_t weight = axis.weights[std::size_t{x} * axis.taps + t];
      const std::uint32_t group = t / taps_per_group;
      const std::uint32_t slot = t % taps_per_group;
      std::int32_t* lane = out + std::size_t{group} * lanes + (rgb ? 4 * slot : slot);
      lane[0] = weight;
      if (rgb) lane[1] = lane[2] = weight;
    }
  }
  return layout;
}

const resample::ByteDigits& byte_digits(AxisTable& axis) {
  if (!axis.byte_digits.built)
    resample::build_byte_digits(axis.view(), axis.out_size, axis.byte_digits);
  return axis.byte_digits;
}

const resample::GatherWeights& gather_weights(AxisTable& axis, std::uint32_t channels) {
  resample::GatherWeights& gather = channels == 3 ? axis.rgb_gather : axis.grey_gather;
  if (!gather.built) resample::build_gather_weights(axis.view(), axis.out_size, channels, gather);
  return gather;
}

const resample::Kernels& kernels_for(SimdLevel level) {
  if (!simd_level_available(level))
    throw ConfigError("simd_level", std::string(to_string(level)) +
                                        " is above what this CPU supports (" +
                                        std::string(to_string(cpu_simd_level())) + ")");
  switch (level) {
#if defined(ODBATCH_IMAGE_X86_KERNELS)
    case SimdLevel::avx512_vnni:
      return resample::kAvx512VnniKernels;
    case SimdLevel::avx512:
      return resample::kAvx512Kernels;
    case SimdLevel::avx2:
      return resample::kAvx2Kernels;
    case SimdLevel::sse4:
      return resample::kSse4Kernels;
#endif
    default:
      return resample::kScalarKernels;
  }
}

// Outputs [from, ...) of an axis: a band of a vertical pass's rows.
resample::AxisView outputs_from(const resample::AxisView& axis, std::uint32_t from) {
  resample::AxisView rest{axis.taps, axis.first + from, axis.count + from,
                          axis.weights + std::size_t{from} * axis.taps, axis.digits};
  if (rest.digits.digits != nullptr) {
    rest.digits.groups += from;
    rest.digits.digits += std::size_t{from} * rest.digits.groups_per_output * 3;
  }
  return rest;
}

void check_extent(std::size_t bytes, std::uint32_t width, std::uint32_t height,
                  std::uint32_t channels, const char* which) {
  const std::size_t needed = std::size_t{width} * height * channels;
  if (width == 0 || height == 0 || bytes != needed)
    throw std::invalid_argument(std::string("BicubicResampler::resize: ") + which + " " +
                                std::to_string(width) + "x" + std::to_string(height) + "x" +
                                std::to_string(channels) + " needs " + std::to_string(needed) +
                                " bytes (and no zero side), got " + std::to_string(bytes));
}

}  // namespace

struct BicubicResampler::State {
  const resample::Kernels* kernels = nullptr;
  std::vector<AxisTable> tables;  // at most kCachedTables, reserved: references stay valid
  std::uint64_t uses = 0;
  std::vector<double> unnormalised;        // one output pixel's weights before normalising
  std::vector<std::uint8_t> intermediate;  // horizontally resized source rows
  std::vector<std::uint8_t> padded_row;    // a source row near the buffer's end, padded
  std::vector<std::uint8_t> row_bands;     // transposed bands of rows, source then target
  std::vector<std::uint8_t> grey_row;      // one output row of a grey image bound for RGB
  std::vector<std::uint8_t> rgb_band;      // a band of output rows for an RgbBandSink
  std::vector<std::uint8_t> grey_band;     // the same band's grey rows, before they become RGB

  // The table for resizing in_size to out_size, computed unless one of the cached ones is it;
  // the least recently used one makes room.
  AxisTable& table(std::uint32_t in_size, std::uint32_t out_size) {
    AxisTable* slot = nullptr;
    for (auto& cached : tables)
      if (cached.in_size == in_size && cached.out_size == out_size) {
        cached.last_used = ++uses;
        return cached;
      }
    if (tables.size() < kCachedTables) {
      slot = &tables.emplace_back();
    } else {
      slot = &*std::min_element(
          tables.begin(), tables.end(),
          [](const AxisTable& a, const AxisTable& b) { return a.last_used < b.last_used; });
    }
    compute_weights(in_size, out_size, *slot, unnormalised);
    slot->last_used = ++uses;
    return *slot;
  }

  // A vertical axis's weights, split into bytes first where the kernels read those.
  resample::AxisView vertical_view(AxisTable& axis) const {
    if (kernels->byte_digits) byte_digits(axis);
    return axis.view();
  }

  // Rows [first_row, first_row + rows) of `source` resized to target_width into `target`.
  void horizontal(std::span<const std::uint8_t> source, std::uint32_t source_width,
                  std::uint32_t first_row, std::uint32_t rows, AxisTable& axis,
                  std::uint32_t channels, std::uint8_t* target) {
    resample::ExpandedView layout;
    if (kernels->lanes != 0) {
      const ExpandedWeights& weights = expanded(axis, kernels->lanes, channels == 3);
      layout = {weights.groups_per_output, weights.groups.data(), weights.expanded.data(), {}};
    }
    if (kernels->byte_digits) {
      layout.gather = gather_weights(axis, channels).view();
    }
    const std::size_t in_row_bytes = std::size_t{source_width} * channels;
    const std::size_t out_row_bytes = std::size_t{axis.out_size} * channels;
    const std::size_t band = kernels->lanes == 0 ? 0 : resample::band_rows(rows, kernels->lanes);
    padded_row.resize(in_row_bytes + resample::kRowOverread);
    row_bands.resize(band * (in_row_bytes + out_row_bytes));
    const resample::HorizontalPass pass{source.data(),
                                        source.size(),
                                        source_width,
                                        first_row,
                                        rows,
                                        axis.out_size,
                                        target,
                                        padded_row.data(),
                                        row_bands.data(),
                                        row_bands.data() + band * in_row_bytes};
    (channels == 3 ? kernels->horizontal_rgb : kernels->horizontal_grey)(pass, axis.view(), layout);
  }

  // Only the source rows some output row reads are resized horizontally: returns the rows of
  // `target_row_bytes` bytes the vertical pass then reads, starting at source row `first_row`.
  const std::uint8_t* needed_rows(std::span<const std::uint8_t> source, std::uint32_t source_width,
                                  const AxisTable& vertical_axis, AxisTable& horizontal_axis,
                                  std::uint32_t channels) {
    const std::uint32_t first_row = vertical_axis.first.front();
    const std::uint32_t end_row = vertical_axis.first.back() + vertical_axis.count.back();
    intermediate.resize(std::size_t{end_row - first_row} * horizontal_axis.out_size * channels);
    horizontal(source, source_width, first_row, end_row - first_row, horizontal_axis, channels,
               intermediate.data());
    return intermediate.data();
  }
};

BicubicResampler::BicubicResampler(SimdLevel level)
    : level_(level), state_(std::make_unique<State>()) {
  state_->kernels = &kernels_for(level);
  state_->tables.reserve(kCachedTables);
}

BicubicResampler::BicubicResampler(BicubicResampler&&) noexcept = default;
BicubicResampler& BicubicResampler::operator=(BicubicResampler&&) noexcept = default;
BicubicResampler::~BicubicResampler() = default;

void BicubicResampler::resize(std::span<const std::uint8_t> source, std::uint32_t source_width,
                              std::uint32_t source_height, std::span<std::uint8_t> target,
                              std::uint32_t target_width, std::uint32_t target_height,
                              std::uint32_t channels) {
  if (channels != 1 && channels != 3)
    throw std::invalid_argument("BicubicResampler::resize: " + std::to_string(channels) +
                                " channels; 1 (grey) or 3 (RGB) are supported");
  check_extent(source.size(), source_width, source_height, channels, "source");
  check_extent(target.size(), target_width, target_height, channels, "target");
  const bool resize_rows = source_width != target_width;
  const bool resize_columns = source_height != target_height;
  if (!resize_rows && !resize_columns) {
    std::memcpy(target.data(), source.data(), source.size());
    return;
  }
  State& s = *state_;
  if (!resize_columns) {
    s.horizontal(source, source_width, 0, source_height, s.table(source_width, target_width),
                 channels, target.data());
    return;
  }
  const std::size_t row_bytes = std::size_t{target_width} * channels;
  AxisTable& vertical = s.table(source_height, target_height);
  if (!resize_rows) {
    s.kernels->vertical({source.data(), row_bytes, 0, target_height, target.data()},
                        s.vertical_view(vertical));
    return;
  }
  const std::uint8_t* rows =
      s.needed_rows(source, source_width, vertical, s.table(source_width, target_width), channels);
  s.kernels->vertical({rows, row_bytes, vertical.first.front(), target_height, target.data()},
                      s.vertical_view(vertical));
}

void BicubicResampler::resize_grey_to_rgb(std::span<const std::uint8_t> source,
                                          std::uint32_t source_width, std::uint32_t source_height,
                                          std::span<std::uint8_t> rgb_target,
                                          std::uint32_t target_width, std::uint32_t target_height) {
  check_extent(source.size(), source_width, source_height, 1, "source");
  check_extent(rgb_target.size(), target_width, target_height, 3, "target");
  const bool resize_rows = source_width != target_width;
  const bool resize_columns = source_height != target_height;
  State& s = *state_;
  if (!resize_columns) {
    const std::uint8_t* grey = source.data();
    if (resize_rows) {
      s.intermediate.resize(std::size_t{target_width} * target_height);
      s.horizontal(source, source_width, 0, source_height, s.table(source_width, target_width), 1,
                   s.intermediate.data());
      grey = s.intermediate.data();
    }
    s.kernels->grey_to_rgb(grey, std::size_t{target_width} * target_height, rgb_target.data());
    return;
  }
  AxisTable& vertical = s.table(source_height, target_height);
  const std::uint8_t* rows =
      resize_rows
          ? s.needed_rows(source, source_width, vertical, s.table(source_width, target_width), 1)
          : source.data() + std::size_t{vertical.first.front()} * source_width;
  const resample::AxisView all_rows = s.vertical_view(vertical);
  if (s.kernels->vertical_grey_to_rgb) {
    s.kernels->vertical_grey_to_rgb(
        {rows, target_width, vertical.first.front(), target_height, rgb_target.data()}, all_rows);
    return;
  }
  // One output row at a time: the vertical pass over that row's weights, then into RGB.
  s.grey_row.resize(target_width);
  for (std::uint32_t y = 0; y < target_height; ++y) {
    const resample::AxisView row = outputs_from(all_rows, y);
    s.kernels->vertical({rows, target_width, vertical.first.front(), 1, s.grey_row.data()}, row);
    s.kernels->grey_to_rgb(s.grey_row.data(), target_width,
                           rgb_target.data() + std::size_t{y} * target_width * 3);
  }
}

void BicubicResampler::resize_in_bands(std::span<const std::uint8_t> source,
                                       std::uint32_t source_width, std::uint32_t source_height,
                                       std::uint32_t channels, std::uint32_t target_width,
                                       std::uint32_t target_height, RgbBandSink& sink) {
  if (channels != 1 && channels != 3)
    throw std::invalid_argument("BicubicResampler::resize_in_bands: " + std::to_string(channels) +
                                " channels; 1 (grey) or 3 (RGB) are supported");
  check_extent(source.size(), source_width, source_height, channels, "source");
  check_extent(std::size_t{target_width} * target_height * 3, target_width, target_height, 3,
               "target");
  const std::uint32_t band_rows = sink.band_rows();
  if (band_rows == 0) throw std::invalid_argument("BicubicResampler::resize_in_bands: 0 band rows");
  State& s = *state_;
  const bool width_changes = source_width != target_width;
  const bool height_changes = source_height != target_height;
  const std::size_t target_row_bytes = std::size_t{target_width} * channels;
  const std::size_t band_pixels = std::size_t{band_rows} * target_width;
  s.rgb_band.resize(band_pixels * 3);
  if (channels == 1) s.grey_band.resize(band_pixels);
  std::uint8_t* const resized_band = channels == 3 ? s.rgb_band.data() : s.grey_band.data();
  AxisTable* vertical = height_changes ? &s.table(source_height, target_height) : nullptr;
  // The rows the vertical pass reads: horizontally resized where the width changes.
  const std::uint8_t* rows = nullptr;
  if (vertical)
    rows = width_changes ? s.needed_rows(source, source_width, *vertical,
                                         s.table(source_width, target_width), channels)
                         : source.data() + std::size_t{vertical->first.front()} * target_row_bytes;
  sink.begin(target_width, target_height);
  for (std::uint32_t y = 0; y < target_height; y += band_rows) {
    const std::uint32_t count = std::min(band_rows, target_height - y);
    // This band's rows, at the source's channels unless the vertical pass wrote grey as RGB.
    const std::uint8_t* band = nullptr;
    bool rgb = channels == 3;
    if (vertical) {
      const resample::AxisView these = outputs_from(s.vertical_view(*vertical), y);
      if (channels == 1 && s.kernels->vertical_grey_to_rgb) {
        s.kernels->vertical_grey_to_rgb(
            {rows, target_row_bytes, vertical->first.front(), count, s.rgb_band.data()}, these);
        rgb = true;
        band = s.rgb_band.data();
      } else {
        s.kernels->vertical({rows, target_row_bytes, vertical->first.front(), count, resized_band},
                            these);
        band = resized_band;
      }
    } else if (width_changes) {
      s.horizontal(source, source_width, y, count, s.table(source_width, target_width), channels,
                   resized_band);
      band = resized_band;
    } else {
      band = source.data() + std::size_t{y} * target_row_bytes;
    }
    if (!rgb) {
      s.kernels->grey_to_rgb(band, std::size_t{count} * target_width, s.rgb_band.data());
      band = s.rgb_band.data();
    }
    sink.band(band, y, count);
  }
}

}  // namespace odbatch
