#pragma once
// The trainer's NCCL communicator, bootstrapped through the run's TCP store, and the epoch
// handshake on it (ARCHITECTURE.md): built only with CUDA and NCCL (the component cuda). The round
// protocol never uses this communicator; the handshake runs on the trainer's own stream, so that
// it is ordered with the trainer's collectives. Every wait is bounded: a communicator that does
// not come up or a reduction that does not finish in time is aborted and reported.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "odbatch/dist/dist_env.hpp"

namespace odbatch {

class Store;

class NcclError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NcclOptions {
  // Rank 0 publishes NCCL's unique id under this key of the store view it is given.
  std::string unique_id_key = "nccl/unique_id";
  // For the unique id to appear, the communicator to come up, and each handshake.
  std::chrono::milliseconds timeout{120'000};
};

// Every rank calls it (its CUDA device already selected): rank 0 creates the unique id and sets it
// in `store`, the others wait for it; then all join the communicator, which the caller owns
// (ncclCommDestroy). Throws NcclError naming the rank and the cause.
ncclComm_t bootstrap_nccl_communicator(Store& store, std::uint32_t rank, std::uint32_t world_size,
                                       const NcclOptions& options = {});

// The same for the ranks of `dist`, through the run's store at MASTER_ADDR:MASTER_PORT under the
// trainer's keys ("trainer/", as TrainerAllreduce's), which is rank 0's pipeline's: construct the
// Pipeline first. The store is let go once the communicator is up; a single rank needs none. Also
// throws NcclError when the store cannot be reached within options.timeout.
ncclComm_t bootstrap_nccl_communicator(const DistEnv& dist, const NcclOptions& options = {});

// One allgather of every rank's batching fingerprint and step count on `stream`, waited for up to
// `timeout`. `steps_checked`: at an epoch's end, the step counts must agree too. Throws NcclError
// naming `phase`, the disagreeing rank and both values, or the NCCL or CUDA failure or the
// deadline; then the communicator may have work pending that never ends: abort it
// (ncclCommAbort), as the trainer's abort hook would.
void nccl_epoch_handshake(ncclComm_t comm, cudaStream_t stream, std::uint64_t fingerprint,
                          std::uint64_t steps, bool steps_checked, const std::string& phase,
                          std::chrono::milliseconds timeout);

}  // namespace odbatch
