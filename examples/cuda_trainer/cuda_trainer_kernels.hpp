#pragma once
// The CUDA trainer's one kernel: its embedding lookup.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace cuda_trainer {

// On `stream`: row t of `rows` (tokens x hidden, row-major) becomes the embedding row of
// token_ids[t] (taken modulo vocab, so that any id is in range). Launch errors are left for
// cudaGetLastError.
void launch_gather_embedding_rows(const float* embedding, std::int32_t vocab, std::int32_t hidden,
                                  const std::int32_t* token_ids, std::int32_t tokens, float* rows,
                                  cudaStream_t stream);

}  // namespace cuda_trainer
