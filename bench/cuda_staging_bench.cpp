// Moving batches to the GPU with CudaStager, as JSON:
//   h2d: the stager's bandwidth (packing into pinned memory, then one asynchronous copy per batch)
//     against a plain cudaMemcpyAsync of the same bytes from pinned memory (the link's peak), and
//     the packing alone, on the host;
//   overlap: steps of cuBLAS sgemms on the compute stream while the next batch is staged, against
//     the same steps with nothing to copy (staged_vs_compute_only near 1: the copy is hidden) and
//     against a copy then compute on one stream (serial, what a trainer without a side stream
//     pays).
// Without a GPU it prints why and a report that says skipped, and exits 0.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench_report.hpp"
#include "odbatch/batch/batch_collator.hpp"
#include "odbatch/cuda/batch_block_layout.hpp"
#include "odbatch/cuda/cuda_error.hpp"
#include "odbatch/cuda/cuda_stager.hpp"
#include "odbatch/cuda/cuda_stream.hpp"
#include "odbatch/cuda/pinned_buffer_pool.hpp"

namespace odbatch::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::size_t tokens = 65536;  // per batch, packed
  std::size_t image_mib = 16;  // pixel bytes per batch, in 448x448 RGB images
  std::size_t batches = 60;    // per measurement
  std::size_t slots = 2;       // the stager's device slots
  int gemm_n = 4096;           // the compute step's sgemms are n x n x n
  double compute_ms = 0;       // per step; 0: twice a step of staging alone
  std::string out_path;
};

constexpr std::size_t kDistinctBatches = 4;
constexpr std::uint32_t kRowTokens = 4096;
constexpr std::uint32_t kImageSide = 448;
constexpr int kWarmup = 5;

void check_cublas(cublasStatus_t status, std::string_view call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + ": " + cublasGetStatusString(status));
}

std::shared_ptr<Batch> make_batch(const Options& options, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<SamplePayload> samples;
  for (std::size_t left = options.tokens; left > 0;) {
    const auto length = static_cast<std::uint32_t>(std::min<std::size_t>(left, kRowTokens));
    SamplePayload& sample = samples.emplace_back();
    sample.id = samples.size();
    for (std::uint32_t t = 0; t < length; ++t)
      sample.input_ids.push_back(static_cast<std::int32_t>(rng() % 32000));
    sample.labels = sample.input_ids;
    left -= length;
  }
  const std::size_t image_bytes = std::size_t{kImageSide} * kImageSide * 3;
  const std::size_t images = options.image_mib * (std::size_t{1} << 20) / image_bytes;
  for (std::size_t i = 0; i < images; ++i) {
    DecodedImage image;
    image.grid = {kImageSide / 14, kImageSide / 14, kImageSide * kImageSide / 784};
    image.width = image.height = kImageSide;
    image.rgb.resize(image_bytes);
    for (auto& byte : image.rgb) byte = static_cast<std::uint8_t>(rng());
    samples[i % samples.size()].images.push_back(std::move(image));
  }
  std::vector<const SamplePayload*> rows;
  for (const auto& sample : samples) rows.push_back(&sample);
  auto batch = std::make_shared<Batch>();
  BatchCollator({.layout = BatchLayout::packed}).collate(rows, {}, *batch);
  return batch;
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) {
    check_cuda_call(cudaMalloc(&data_, bytes), "cudaMalloc");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

// Milliseconds between two events recorded around work on `stream`.
template <typename Work>
double device_ms(cudaStream_t stream, Work work) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check_cuda_call(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda_call(cudaEventCreate(&stop), "cudaEventCreate");
  check_cuda_call(cudaEventRecord(start, stream), "cudaEventRecord");
  work();
  check_cuda_call(cudaEventRecord(stop, stream), "cudaEventRecord");
  check_cuda_call(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check_cuda_call(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

double gbps(double bytes, double ms) {
  return bytes / (ms * 1e6);
}

// n x n sgemms on one stream: the trainer's compute.
class Sgemm {
 public:
  Sgemm(int n, cudaStream_t stream) : n_(n), a_(bytes()), b_(bytes()), c_(bytes()) {
    check_cublas(cublasCreate(&handle_), "cublasCreate");
    check_cublas(cublasSetStream(handle_, stream), "cublasSetStream");
    check_cuda_call(cudaMemsetAsync(a_.get(), 0, bytes(), stream), "cudaMemsetAsync");
    check_cuda_call(cudaMemsetAsync(b_.get(), 0, bytes(), stream), "cudaMemsetAsync");
  }
  Sgemm(const Sgemm&) = delete;
  Sgemm& operator=(const Sgemm&) = delete;
  ~Sgemm() { cublasDestroy(handle_); }

  void run(int times) {
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < times; ++i)
      check_cublas(
          cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &one,
                      static_cast<const float*>(a_.get()), n_, static_cast<const float*>(b_.get()),
                      n_, &zero, static_cast<float*>(c_.get()), n_),
          "cublasSgemm");
  }

 private:
  std::size_t bytes() const { return std::size_t(n_) * std::size_t(n_) * sizeof(float); }
  int n_;
  DeviceBuffer a_, b_, c_;
  cublasHandle_t handle_ = nullptr;
};

// Runs `steps` trainer steps, each: wait for the staged batch, compute, release, stage the next
// (so that its copy overlaps this step's compute). Host milliseconds per step, after warm-up.
double staged_step_ms(CudaStager& stager, const std::vector<std::shared_ptr<Batch>>& batches,
                      const CudaStream& compute, Sgemm* sgemm, int gemms, std::size_t steps) {
  std::size_t next = 0;
  const auto stage_next = [&] { stager.stage(batches[next++ % batches.size()]); };
  stage_next();
  Clock::time_point start;
  for (std::size_t step = 0; step < steps + kWarmup; ++step) {
    if (step == kWarmup) {
      compute.synchronize();
      start = Clock::now();
    }
    DeviceBatch& batch = stager.wait(compute.get());
    if (sgemm) sgemm->run(gemms);
    stager.release(batch, compute.get());
    stage_next();
  }
  compute.synchronize();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  stager.release(stager.wait(compute.get()), compute.get());
  compute.synchronize();
  return ms / static_cast<double>(steps);
}

int run(const Options& options) {
  Report report;
  report["benchmark"] = "cuda_staging";
  int gpus = 0;
  const cudaError_t probed = cudaGetDeviceCount(&gpus);
  if (probed != cudaSuccess || gpus == 0) {
    const std::string reason = probed != cudaSuccess ? cudaGetErrorString(probed) : "no devices";
    std::cerr << "cuda staging bench: no GPU visible (" << reason << "); skipped\n";
    report["skipped"] = true;
    report["reason"] = "no GPU visible: " + reason;
    emit_report(report, options.out_path);
    return 0;
  }
  cudaDeviceProp properties{};
  check_cuda_call(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  report["skipped"] = false;
  report["device"] = properties.name;

  std::vector<std::shared_ptr<Batch>> batches;
  for (std::uint32_t seed = 0; seed < kDistinctBatches; ++seed)
    batches.push_back(make_batch(options, seed));
  const BatchBlockLayout layout = BatchBlockLayout::of(*batches.front());
  const auto block_bytes = static_cast<double>(layout.total_bytes);
  report["batch"] = {{"tokens", batches.front()->input_ids().size()},
                     {"pixel_bytes", batches.front()->pixel_values().size()},
                     {"block_bytes", layout.total_bytes},
                     {"slots", options.slots}};

  const CudaStream compute;
  const int steps = static_cast<int>(options.batches);

  // The link's peak: the same bytes from pinned memory, back to back on one stream.
  PinnedBufferPool pool(1);
  const PinnedBuffer pinned = pool.acquire(layout.total_bytes);
  write_batch_block(*batches.front(), layout, pinned.data());
  const DeviceBuffer target(layout.total_bytes);
  const auto copies = [&](int times) {
    for (int i = 0; i < times; ++i)
      check_cuda_call(cudaMemcpyAsync(target.get(), pinned.data(), layout.total_bytes,
                                      cudaMemcpyHostToDevice, compute.get()),
                      "cudaMemcpyAsync");
  };
  copies(kWarmup);
  const double peak_ms = device_ms(compute.get(), [&] { copies(steps); }) / steps;

  // Packing alone: what the host does per batch before its copy can start.
  const auto pack_start = Clock::now();
  for (int i = 0; i < steps; ++i)
    write_batch_block(*batches[static_cast<std::size_t>(i) % batches.size()], layout,
                      pinned.data());
  const double pack_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - pack_start).count() / steps;

  CudaStager stager({.slots = options.slots, .initial_slot_bytes = layout.total_bytes});
  const double stage_only_ms =
      staged_step_ms(stager, batches, compute, nullptr, 0, options.batches);
  report["h2d"] = {{"peak_gbps", rounded(gbps(block_bytes, peak_ms), 2)},
                   {"stager_gbps", rounded(gbps(block_bytes, stage_only_ms), 2)},
                   {"stager_vs_peak", rounded(peak_ms / stage_only_ms, 3)},
                   {"host_pack_gbps", rounded(gbps(block_bytes, pack_ms), 2)},
                   {"copy_ms", rounded(peak_ms, 3)},
                   {"pack_ms", rounded(pack_ms, 3)},
                   {"stager_step_ms", rounded(stage_only_ms, 3)}};

  Sgemm sgemm(options.gemm_n, compute.get());
  sgemm.run(kWarmup);
  const double gemm_ms = device_ms(compute.get(), [&] { sgemm.run(kWarmup); }) / kWarmup;
  const double target_ms = options.compute_ms > 0 ? options.compute_ms : 2 * stage_only_ms;
  const int gemms = std::max(1, static_cast<int>(std::lround(target_ms / gemm_ms)));

  const double compute_only_ms =
      device_ms(compute.get(), [&] { sgemm.run(gemms * steps); }) / steps;
  const double staged_ms = staged_step_ms(stager, batches, compute, &sgemm, gemms, options.batches);
  const double serial_ms = device_ms(compute.get(),
                                     [&] {
                                       for (int i = 0; i < steps; ++i) {
                                         copies(1);
                                         sgemm.run(gemms);
                                       }
                                     }) /
                           steps;
  // The share of the serial copy's cost that staging hides: 1 when staged steps cost no more
  // than compute alone.
  const double exposed = serial_ms - compute_only_ms;
  const double hidden =
      exposed > 0 ? std::clamp(1 - (staged_ms - compute_only_ms) / exposed, 0.0, 1.0) : 1.0;
  report["overlap"] = {{"gemm_n", options.gemm_n},
                       {"gemm_ms", rounded(gemm_ms, 3)},
                       {"gemms_per_step", gemms},
                       {"compute_only_step_ms", rounded(compute_only_ms, 3)},
                       {"staged_step_ms", rounded(staged_ms, 3)},
                       {"serial_step_ms", rounded(serial_ms, 3)},
                       {"staged_vs_compute_only", rounded(staged_ms / compute_only_ms, 3)},
                       {"hidden_fraction", rounded(hidden, 3)}};
  const CudaStagerStats stats = stager.stats();
  report["stager"] = {{"batches_staged", stats.batches_staged},
                      {"device_allocations", stats.device_allocations},
                      {"host_allocations", stats.host_allocations}};
  emit_report(report, options.out_path);
  return 0;
}

}  // namespace
}  // namespace odbatch::bench

int main(int argc, char** argv) {
  odbatch::bench::Options options;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--tokens" && has_value) {
        options.tokens = odbatch::bench::parse_count(arg, argv[++i]);
      } else if (arg == "--image-mib" && has_value) {
        options.image_mib = std::stoul(argv[++i]);
      } else if (arg == "--batches" && has_value) {
        options.batches = odbatch::bench::parse_count(arg, argv[++i]);
      } else if (arg == "--slots" && has_value) {
        options.slots = odbatch::bench::parse_count(arg, argv[++i]);
      } else if (arg == "--gemm-n" && has_value) {
        options.gemm_n = static_cast<int>(odbatch::bench::parse_count(arg, argv[++i]));
      } else if (arg == "--compute-ms" && has_value) {
        options.compute_ms = std::stod(argv[++i]);
      } else if (arg == "--out" && has_value) {
        options.out_path = argv[++i];
      } else {
        std::cerr << "usage: " << argv[0]
                  << " [--tokens N (65536)] [--image-mib N (16)] [--batches N (60)]"
                     " [--slots N (2)] [--gemm-n N (4096)] [--compute-ms MS (0: twice a"
                     " staging step)] [--out FILE]\n";
        return 2;
      }
    }
    return odbatch::bench::run(options);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
