#pragma once
// odbatch's CUDA parts (the component cuda: find_package(odbatch CONFIG COMPONENTS cuda) and
// odbatch::cuda, or pkg-config odbatch-cuda; docs/cuda.md): CudaStager, which moves each batch to
// the GPU while the previous step computes, and the DeviceBatch it hands out; CudaStream and
// CudaError; and the trainer's NCCL communicator over the ranks of a DistEnv
// (bootstrap_nccl_communicator) with the epoch handshake on it.
#include "odbatch/cuda/cuda_error.hpp"
#include "odbatch/cuda/cuda_stager.hpp"
#include "odbatch/cuda/cuda_stream.hpp"
#include "odbatch/cuda/nccl_bootstrap.hpp"
