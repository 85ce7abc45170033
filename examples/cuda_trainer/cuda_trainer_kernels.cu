#include <cstddef>

#include "cuda_trainer_kernels.hpp"

namespace cuda_trainer {
namespace {

constexpr int kThreadsPerRow = 256;

// One block per token; its threads copy the token's embedding row.
__global__ void gather_embedding_rows(const float* __restrict__ embedding, std::int32_t vocab,
                                      std::int32_t hidden,
                                      const std::int32_t* __restrict__ token_ids,
                                      float* __restrict__ rows) {
  const std::size_t token = blockIdx.x;
  const std::int32_t id = ((token_ids[token] % vocab) + vocab) % vocab;
  const float* source = embedding + static_cast<std::size_t>(id) * hidden;
  float* target = rows + token * hidden;
  const auto stride = static_cast<std::int32_t>(blockDim.x);
  for (auto h = static_cast<std::int32_t>(threadIdx.x); h < hidden; h += stride)
    target[h] = source[h];
}

}  // namespace

void launch_gather_embedding_rows(const float* embedding, std::int32_t vocab, std::int32_t hidden,
                                  const std::int32_t* token_ids, std::int32_t tokens, float* rows,
                                  cudaStream_t stream) {
  if (tokens == 0) return;
  gather_embedding_rows<<<static_cast<unsigned>(tokens), kThreadsPerRow, 0, stream>>>(
      embedding, vocab, hidden, token_ids, rows);
}

}  // namespace cuda_trainer
