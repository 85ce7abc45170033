#include "odbatch/cuda/nccl_bootstrap.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "odbatch/core/epoch_handshake.hpp"
#include "odbatch/store/store.hpp"
#include "odbatch/trainer/trainer_store.hpp"

namespace odbatch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(1);

void check_nccl(ncclResult_t result, const std::string& what) {
  if (result != ncclSuccess && result != ncclInProgress)
    throw NcclError(what + ": " + ncclGetErrorString(result));
}

void check_cuda(cudaError_t result, const std::string& what) {
  if (result != cudaSuccess) throw NcclError(what + ": " + cudaGetErrorString(result));
}

// Polls the communicator's state until `done` or the deadline; throws NcclError on its failure or
// at the deadline (the caller decides whether to abort it).
template <typename Done>
void wait_for(ncclComm_t comm, Clock::time_point deadline, const std::string& what, Done done) {
  while (true) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = ncclCommGetAsyncError(comm, &state);
    if (queried != ncclSuccess || (state != ncclSuccess && state != ncclInProgress))
      throw NcclError(what + ": " + ncclGetErrorString(queried != ncclSuccess ? queried : state));
    if (state == ncclSuccess && done()) return;
    if (Clock::now() >= deadline) throw NcclError(what + ": not done by the deadline");
    std::this_thread::sleep_for(kPollInterval);
  }
}

struct DeviceFree {
  void operator()(void* pointer) const { cudaFree(pointer); }
};

// Page-locked, so that copies into it return at once and the wait stays bounded.
struct HostFree {
  void operator()(void* pointer) const { cudaFreeHost(pointer); }
};

std::string rank_of_world(std::uint32_t rank, std::uint32_t world_size) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(world_size);
}

// Joins the communicator of `id` without blocking, up to the deadline; aborts it on failure.
ncclComm_t join_communicator(const ncclUniqueId& id, std::uint32_t rank, std::uint32_t world_size,
                             Clock::time_point deadline) {
  const std::string who = rank_of_world(rank, world_size);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so that the join can be bounded
  ncclComm_t comm = nullptr;
  try {
    check_nccl(ncclCommInitRankConfig(&comm, static_cast<int>(world_size), id,
                                      static_cast<int>(rank), &config),
               who + ": ncclCommInitRankConfig");
    wait_for(comm, deadline, who + ": joining the NCCL communicator", [] { return true; });
  } catch (const NcclError& e) {
    // Not the caller's yet: abort it here.
    if (comm) ncclCommAbort(comm);
    throw NcclError(std::string(e.what()) + "; the communicator was aborted");
  }
  return comm;
}

}  // namespace

ncclComm_t bootstrap_nccl_communicator(Store& store, std::uint32_t rank, std::uint32_t world_size,
                                       const NcclOptions& options) {
  const std::string who = rank_of_world(rank, world_size);
  const auto deadline = Clock::now() + options.timeout;
  ncclUniqueId id;
  try {
    if (rank == 0) {
      check_nccl(ncclGetUniqueId(&id), who + ": ncclGetUniqueId");
      std::vector<std::byte> bytes(sizeof id.internal);
      std::memcpy(bytes.data(), id.internal, bytes.size());
      store.set(options.unique_id_key, bytes);
    } else {
      const auto bytes = store.get(options.unique_id_key, options.timeout);
      if (bytes.size() != sizeof id.internal)
        throw NcclError(who + ": the unique id under '" + options.unique_id_key + "' has " +
                        std::to_string(bytes.size()) + " bytes, expected " +
                        std::to_string(sizeof id.internal));
      std::memcpy(id.internal, bytes.data(), bytes.size());
    }
  } catch (const StoreError& e) {
    throw NcclError(who + ": cannot exchange NCCL's unique id: " + e.what());
  }
  return join_communicator(id, rank, world_size, deadline);
}

ncclComm_t bootstrap_nccl_communicator(const DistEnv& dist, const NcclOptions& options) {
  if (dist.world_size <= 1) {
    ncclUniqueId id;
    check_nccl(ncclGetUniqueId(&id), rank_of_world(0, 1) + ": ncclGetUniqueId");
    return join_communicator(id, 0, 1, Clock::now() + options.timeout);
  }
  std::optional<TrainerStore> store;
  try {
    store.emplace(dist, options.timeout);
  } catch (const StoreError& e) {
    throw NcclError(rank_of_world(dist.rank, dist.world_size) +
                    ": cannot reach the run's store: " + e.what());
  }
  return bootstrap_nccl_communicator(store->keys(), dist.rank, dist.world_size, options);
}

void nccl_epoch_handshake(ncclComm_t comm, cudaStream_t stream, std::uint64_t fingerprint,
                          std::uint64_t steps, bool steps_checked, const std::string& phase,
                          std::chrono::milliseconds timeout) {
  const std::string what = "NCCL handshake at the " + phase;
  const auto deadline = Clock::now() + timeout;
  int ranks = 0;
  check_nccl(ncclCommCount(comm, &ranks), what + ": ncclCommCount");
  const HandshakeWords mine = handshake_words(fingerprint, steps);
  const std::size_t count = static_cast<std::size_t>(ranks) * kHandshakeWords;
  const std::size_t bytes = (kHandshakeWords + count) * sizeof(std::uint64_t);
  void* device_raw = nullptr;
  check_cuda(cudaMalloc(&device_raw, bytes), what + ": cudaMalloc");
  std::unique_ptr<void, DeviceFree> device(device_raw);
  void* host_raw = nullptr;
  check_cuda(cudaMallocHost(&host_raw, bytes), what + ": cudaMallocHost");
  std::unique_ptr<void, HostFree> host(host_raw);
  auto* const host_words = static_cast<std::uint64_t*>(host_raw);
  auto* const device_words = static_cast<std::uint64_t*>(device_raw);
  std::copy(mine.begin(), mine.end(), host_words);
  check_cuda(cudaMemcpyAsync(device_words, host_words, sizeof mine, cudaMemcpyHostToDevice, stream),
             what + ": cudaMemcpyAsync");
  check_nccl(ncclAllGather(device_words, device_words + kHandshakeWords, kHandshakeWords,
                           ncclUint64, comm, stream),
             what + ": ncclAllGather");
  check_cuda(cudaMemcpyAsync(host_words + kHandshakeWords, device_words + kHandshakeWords,
                             count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream),
             what + ": cudaMemcpyAsync");
  try {
    wait_for(comm, deadline, what, [&] {
      const cudaError_t state = cudaStreamQuery(stream);
      if (state == cudaErrorNotReady) return false;
      check_cuda(state, what + ": cudaStreamQuery");
      return true;
    });
  } catch (const NcclError&) {
    // Work still queued on the stream uses both buffers, and freeing them would wait for it: they
    // are left (a few bytes) to the communicator the caller aborts.
    static_cast<void>(device.release());
    static_cast<void>(host.release());
    throw;
  }
  const std::span<const std::uint64_t> gathered(host_words + kHandshakeWords, count);
  if (const auto disagreement = handshake_disagreement(gathered, steps_checked, phase))
    throw NcclError(*disagreement);
}

}  // namespace odbatch
