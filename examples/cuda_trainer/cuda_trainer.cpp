// A data-parallel trainer on GPUs: each rank (started by `odbatch launch` or torchrun) runs the
// pipeline on its shard, stages every batch to its GPU with CudaStager while the previous step
// computes, and runs a small model step on the device: an embedding lookup of the batch's tokens,
// an sgemm of [tokens x hidden] by [hidden x hidden] (so a step costs what its tokens cost), and a
// loss, the mean absolute activation times the step's loss_scale. With several ranks the scaled
// losses are summed over an NCCL communicator bootstrapped through the run's store, on the compute
// stream, as a gradient allreduce would be: the pipeline keeps every rank's step count equal, so
// the allreduces pair up. IDLE steps run like any other, with loss scale 0.
//
//   odbatch launch --nproc 2 -- build/examples/cuda_trainer/odbatch_cuda_trainer
//   examples/pipeline.toml
//
// Options: --max-steps N (every rank departs after N steps), --hidden H (512), --print-every N
// (50 steps). Each rank uses GPU LOCAL_RANK: NCCL refuses two ranks of one communicator on one
// GPU, so with several ranks a node needs a visible GPU per local rank (a single rank with a
// larger LOCAL_RANK takes it modulo the visible GPUs).
//
// Exit codes: 0 trained, 1 failed, 2 usage; 77 (nothing ran) no GPU visible, or with several
// ranks fewer visible GPUs than LOCAL_WORLD_SIZE or LOCAL_RANK needs: the code CTest's
// SKIP_RETURN_CODE and automake read as "skipped". Every rank of such a node exits 77 where the
// launcher sets LOCAL_WORLD_SIZE (odbatch launch and torchrun do), so none waits for a peer that
// left.
#include <cublas_v2.h>
// cuda_runtime.h, not only the C API: the typed overloads (cudaMallocHost(float**, ...)) live here.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_trainer_kernels.hpp"
#include "odbatch/cuda.hpp"
#include "odbatch/dist_env.hpp"
#include "odbatch/pipeline.hpp"
#include "odbatch/pipeline_config.hpp"

namespace {

constexpr int kNoGpuExitCode = 77;
constexpr std::int32_t kVocab = 32768;  // token ids are taken modulo this

using odbatch::check_cuda_call;

void check_cublas(cublasStatus_t status, std::string_view call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + ": " + cublasGetStatusString(status));
}

struct Options {
  std::string config_file;
  std::optional<std::uint64_t> max_steps;
  std::int32_t hidden = 512;
  std::uint64_t print_every = 50;
};

// Device memory that grows to the largest size asked of it.
class DeviceFloats {
 public:
  DeviceFloats() = default;
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  ~DeviceFloats() { cudaFree(data_); }

  float* get() const { return data_; }

  float* at_least(std::size_t count) {
    if (count > capacity_) {
      if (data_) {
        // Queued work may still use the old buffer.
        check_cuda_call(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        check_cuda_call(cudaFree(data_), "cudaFree");
        data_ = nullptr;
      }
      check_cuda_call(cudaMalloc(&data_, count * sizeof(float)), "cudaMalloc");
      capacity_ = count;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// Embedding, one dense layer and a scalar loss, all on `stream`.
class TinyModel {
 public:
  TinyModel(std::int32_t hidden, cudaStream_t stream) : hidden_(hidden), stream_(stream) {
    check_cublas(cublasCreate(&cublas_), "cublasCreate");
    check_cublas(cublasSetStream(cublas_, stream), "cublasSetStream");
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    // On the model's stream, which does not order itself after the legacy default stream, and
    // finished before `values` goes: the first step must read whole weights.
    const auto fill = [&](DeviceFloats& target, std::size_t count) {
      std::vector<float> values(count);
      for (auto& value : values) value = normal(rng);
      check_cuda_call(cudaMemcpyAsync(target.at_least(count), values.data(), count * sizeof(float),
                                      cudaMemcpyHostToDevice, stream_),
                      "cudaMemcpyAsync (weights)");
      check_cuda_call(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (weights)");
    };
    fill(embedding_, std::size_t{kVocab} * hidden_size());
    fill(weight_, hidden_size() * hidden_size());
    loss_.at_least(1);
  }
  TinyModel(const TinyModel&) = delete;
  TinyModel& operator=(const TinyModel&) = delete;
  ~TinyModel() { cublasDestroy(cublas_); }

  // Queues one step on the batch; the loss stays on the device (loss()).
  void step(const odbatch::DeviceBatch& batch, double loss_scale) {
    // The gather's grid and the sgemm count tokens in 32 bits.
    if (batch.input_ids.size > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw std::runtime_error("a batch of " + std::to_string(batch.input_ids.size) +
                               " tokens: the model takes at most 2^31 - 1");
    const auto tokens = static_cast<std::int32_t>(batch.input_ids.size);
    const std::size_t values = batch.input_ids.size * hidden_size();
    float* rows = rows_.at_least(values);
    float* out = out_.at_least(values);
    cuda_trainer::launch_gather_embedding_rows(embedding_.get(), kVocab, hidden_,
                                               batch.input_ids.data, tokens, rows, stream_);
    check_cuda_call(cudaGetLastError(), "gather_embedding_rows");
    // Row-major [tokens x hidden] is column-major [hidden x tokens]: out = weight * rows.
    const float one = 1.0f, zero = 0.0f;
    check_cublas(cublasSetPointerMode(cublas_, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    check_cublas(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, hidden_, tokens, hidden_, &one,
                             weight_.get(), hidden_, rows, hidden_, &zero, out, hidden_),
                 "cublasSgemm");
    check_cublas(cublasSetPointerMode(cublas_, CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
    // tokens x hidden exceeds 32 bits at a few hundred thousand tokens.
    check_cublas(cublasSasum_64(cublas_, static_cast<std::int64_t>(values), out, 1, loss_.get()),
                 "cublasSasum_64");
    check_cublas(cublasSetPointerMode(cublas_, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    const auto scale =
        values > 0 ? static_cast<float>(loss_scale / static_cast<double>(values)) : 0.0f;
    check_cublas(cublasSscal(cublas_, 1, &scale, loss_.get(), 1), "cublasSscal");
  }

  float* loss() const { return loss_.get(); }

 private:
  std::size_t hidden_size() const { return static_cast<std::size_t>(hidden_); }

  std::int32_t hidden_;
  cudaStream_t stream_;
  cublasHandle_t cublas_ = nullptr;
  DeviceFloats embedding_, weight_, rows_, out_, loss_;
};

// The trainer's communicator over every rank (none for a single rank), through the run's store.
class LossAllreduce {
 public:
  explicit LossAllreduce(const odbatch::DistEnv& dist) {
    if (dist.world_size > 1) comm_ = odbatch::bootstrap_nccl_communicator(dist);
  }
  LossAllreduce(const LossAllreduce&) = delete;
  LossAllreduce& operator=(const LossAllreduce&) = delete;
  ~LossAllreduce() {
    if (comm_) ncclCommDestroy(comm_);
  }

  void sum(float* value, cudaStream_t stream) {
    if (!comm_) return;
    const ncclResult_t result = ncclAllReduce(value, value, 1, ncclFloat, ncclSum, comm_, stream);
    if (result != ncclSuccess)
      throw std::runtime_error(std::string("ncclAllReduce: ") + ncclGetErrorString(result));
  }

  // A failed run may leave the allreduce pending forever: abort instead of destroying.
  void abort() {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
  }

 private:
  ncclComm_t comm_ = nullptr;
};

// LOCAL_WORLD_SIZE as odbatch launch and torchrun set it; 0 where it is absent or malformed.
std::uint32_t local_world_size() {
  const char* text = std::getenv("LOCAL_WORLD_SIZE");
  if (!text) return 0;
  const std::string_view view(text);
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  return error == std::errc{} && end == view.data() + view.size() ? value : 0;
}

int train(const Options& options, int gpus) {
  const auto dist = odbatch::DistEnv::from_env();
  const auto visible = static_cast<std::uint32_t>(gpus);
  const std::uint32_t local_ranks = std::max(local_world_size(), dist.local_rank + 1);
  if (dist.world_size > 1 && local_ranks > visible) {
    std::cerr << "cuda trainer: rank " << dist.rank << " (local rank " << dist.local_rank
              << "): " << local_ranks << " ranks on this node need a GPU each, and " << gpus
              << " are visible (NCCL cannot put two ranks on one GPU)\n";
    return kNoGpuExitCode;
  }
  const int device = static_cast<int>(dist.local_rank % visible);
  check_cuda_call(cudaSetDevice(device), "cudaSetDevice");
  odbatch::PipelineOptions pipeline_options;
  pipeline_options.on_abort = [rank = dist.rank](const std::string& reason) {
    std::cerr << "rank " << rank << ": abort hook: " << reason << '\n';
  };
  // Rank 0's pipeline hosts the run's store at MASTER_ADDR, port MASTER_PORT + 1009 (a single
  // rank has none).
  odbatch::Pipeline pipeline(odbatch::PipelineConfig::from_toml_file(options.config_file), dist,
                             pipeline_options);
  LossAllreduce allreduce(dist);
  const odbatch::CudaStream compute;
  TinyModel model(options.hidden, compute.get());
  odbatch::CudaStager stager;  // two slots: the next batch's copy runs while this step computes
  float* host_loss = nullptr;
  check_cuda_call(cudaMallocHost(&host_loss, sizeof(float)), "cudaMallocHost");
  const std::unique_ptr<float, decltype(&cudaFreeHost)> host_loss_owner(host_loss, &cudaFreeHost);

  std::uint64_t steps = 0, idle_steps = 0, tokens = 0;
  try {
    pipeline.start_epoch(0);
    auto batch = pipeline.next_batch();
    if (batch) stager.stage(batch);
    while (batch) {
      const odbatch::DeviceBatch& staged = stager.wait(compute.get());
      const auto& info = staged.step_info;
      model.step(staged, info.idle ? 0.0 : info.loss_scale);
      allreduce.sum(model.loss(), compute.get());
      ++steps;
      idle_steps += info.idle ? 1 : 0;
      tokens += info.tokens;
      if (steps % options.print_every == 0) {
        check_cuda_call(cudaMemcpyAsync(host_loss, model.loss(), sizeof(float),
                                        cudaMemcpyDeviceToHost, compute.get()),
                        "cudaMemcpyAsync (loss)");
        check_cuda_call(cudaStreamSynchronize(compute.get()), "cudaStreamSynchronize");
        std::cout << "rank " << dist.rank << ": step " << info.step << ": " << info.tokens
                  << " tokens (" << info.global.tokens << " on all ranks), loss scale "
                  << info.loss_scale << ", loss " << *host_loss << (info.idle ? " IDLE" : "")
                  << '\n';
      }
      stager.release(staged, compute.get());
      // Not one batch more than the steps run, so that departing accounts for exactly those.
      if (options.max_steps && steps == *options.max_steps) break;
      // Taken and staged while the step above runs on the GPU.
      batch = pipeline.next_batch();
      if (batch) stager.stage(batch);
    }
    check_cuda_call(cudaStreamSynchronize(compute.get()), "cudaStreamSynchronize");
  } catch (...) {
    allreduce.abort();
    // The held batch's slot and the model's buffers are freed on the way out: queued work that
    // reads them must finish first. Its own error, if any, is the one being thrown already.
    cudaStreamSynchronize(compute.get());
    throw;
  }
  if (options.max_steps && steps == *options.max_steps) pipeline.depart();
  const auto stats = stager.stats();
  std::cout << "rank " << dist.rank << ": " << steps << " steps (" << idle_steps << " idle), "
            << tokens << " tokens on GPU " << device << "; staged " << stats.bytes_staged
            << " bytes in " << stats.batches_staged << " batches\n";
  return 0;
}

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

// Parses argv into `options`; false for a malformed command line.
bool parse_options(int argc, char** argv, Options& options) {
  if (argc < 2) return false;
  options.config_file = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const auto value = parse_count(argv[i + 1]);
    if (!value) return false;
    if (flag == "--max-steps") {
      options.max_steps = *value;
    } else if (flag == "--hidden" && *value <= 8192) {
      options.hidden = static_cast<std::int32_t>(*value);
    } else if (flag == "--print-every") {
      options.print_every = *value;
    } else {
      return false;
    }
  }
  return argc % 2 == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, options)) {
    std::cerr << "usage: " << argv[0]
              << " PIPELINE.toml [--max-steps N] [--hidden H (512)] [--print-every N (50)]"
                 "   (under odbatch launch or torchrun)\n";
    return 2;
  }
  int gpus = 0;
  const cudaError_t probed = cudaGetDeviceCount(&gpus);
  if (probed != cudaSuccess || gpus == 0) {
    std::cerr << "cuda trainer: no GPU visible ("
              << (probed != cudaSuccess ? cudaGetErrorString(probed) : "no devices") << ")\n";
    return kNoGpuExitCode;
  }
  try {
    return train(options, gpus);
  } catch (const std::exception& e) {
    std::cerr << "cuda trainer: " << e.what() << '\n';
    return 1;
  }
}
