// Append-with-rotary and query-rotary kernels of the KV-cache forward.
// Memory-bound elementwise work: one thread per output element, grid-stride.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "cuda/sm80/append_kv.h"
#include "cuda/sm80/clipped_indices.h"
#include "cuda/sm80/kvcache_kernels.h"

namespace flashattn::detail::cuda_sm80 {
namespace {

template <typename Element>
__global__ void append_kv_kernel(const __grid_constant__ AttentionParams p) {
  const std::int64_t total = append_kv_elements(p);
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    append_kv_element<Element>(p, idx);
  }
}

template <typename Element>
__global__ void rotate_q_kernel(const __grid_constant__ AttentionParams p, Element* q_rotated) {
  const std::int64_t total = p.batch * p.seqlen_q * p.heads * p.head_dim;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = idx % p.head_dim;
    std::int64_t rest = idx / p.head_dim;
    const std::int64_t head = rest % p.heads;
    rest /= p.heads;
    const std::int64_t i = rest % p.seqlen_q;
    const std::int64_t b = rest / p.seqlen_q;
    const SequenceLengths seq = clipped_sequence_lengths(p, b);
    const auto* src = static_cast<const Element*>(p.q.data) + b * p.q.batch_stride + i * p.q.row_stride +
                      head * p.q.head_stride;
    q_rotated[idx] = from_float<Element>(rotated(p, src, c, rotary_query_position(p, seq, i)));
  }
}

template <typename Out>
__device__ __forceinline__ void store_as(void* base, std::int64_t offset, float value) {
  if constexpr (std::is_same_v<Out, float>) {
    static_cast<float*>(base)[offset] = value;
  } else {
    static_cast<Out*>(base)[offset] = from_float<Out>(value);
  }
}

// One CTA per (batch, row, head); threads stride over dv. The split loop runs
// twice over lse_partial (max, then weights): splits are few and L1-resident.
template <typename Out>
__global__ void combine_kernel(const __grid_constant__ CombineParams p) {
  const std::int64_t rows = p.batch * p.seqlen * p.heads;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const std::int64_t head = row % p.heads;
    const std::int64_t i = (row / p.heads) % p.seqlen;
    const std::int64_t b = row / (p.heads * p.seqlen);
    const float* lse_row =
        p.lse_partial + b * p.lp_batch_stride + i * p.lp_row_stride + head * p.lp_head_stride;
    float lse_max = -INFINITY;
    for (std::int64_t s = 0; s < p.splits; ++s) lse_max = fmaxf(lse_max, lse_row[s * p.lp_split_stride]);
    float sum = 0.f;
    if (lse_max != -INFINITY) {
      for (std::int64_t s = 0; s < p.splits; ++s) sum += expf(lse_row[s * p.lp_split_stride] - lse_max);
    }
    const float lse = lse_max == -INFINITY ? -INFINITY : lse_max + logf(sum);
    if (p.lse != nullptr && threadIdx.x == 0) {
      p.lse[b * p.lse_batch_stride + i * p.lse_row_stride + head * p.lse_head_stride] = lse;
    }
    const float* op_row =
        p.out_partial + b * p.op_batch_stride + i * p.op_row_stride + head * p.op_head_stride;
    const std::int64_t out_row = b * p.out.batch_stride + i * p.out.row_stride + head * p.out.head_stride;
    for (std::int64_t c = threadIdx.x; c < p.head_dim_v; c += blockDim.x) {
      float acc = 0.f;
      if (lse != -INFINITY) {
        for (std::int64_t s = 0; s < p.splits; ++s) {
          const float weight = expf(lse_row[s * p.lp_split_stride] - lse);
          // A split with weight 0 may hold anything finite; skip it so inf/NaN-free rows stay so.
          if (weight > 0.f) acc += weight * op_row[s * p.op_split_stride + c];
        }
      }
      store_as<Out>(p.out.data, out_row + c, acc);
    }
  }
}

unsigned grid_for(std::int64_t work, int block) {
  const std::int64_t blocks = (work + block - 1) / block;
  // Grid-stride loops cover the rest; this bounds the grid without limiting size.
  return static_cast<unsigned>(blocks < 65536 * 8 ? (blocks > 0 ? blocks : 1) : 65536 * 8);
}

}  // namespace

cudaError_t launch_append_kv(const AttentionParams& p, cudaStream_t stream) {
  const std::int64_t total = append_kv_elements(p);
  if (total == 0) return cudaSuccess;
  if (p.dtype == DType::float16) {
    append_kv_kernel<__half><<<grid_for(total, 256), 256, 0, stream>>>(p);
  } else {
    append_kv_kernel<__nv_bfloat16><<<grid_for(total, 256), 256, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

cudaError_t launch_rotate_q(const AttentionParams& p, void* q_rotated, cudaStream_t stream) {
  const std::int64_t total = p.batch * p.seqlen_q * p.heads * p.head_dim;
  if (total == 0) return cudaSuccess;
  if (p.dtype == DType::float16) {
    rotate_q_kernel<__half><<<grid_for(total, 256), 256, 0, stream>>>(p, static_cast<__half*>(q_rotated));
  } else {
    rotate_q_kernel<__nv_bfloat16>
        <<<grid_for(total, 256), 256, 0, stream>>>(p, static_cast<__nv_bfloat16*>(q_rotated));
  }
  return cudaGetLastError();
}

cudaError_t launch_combine(const CombineParams& p, cudaStream_t stream) {
  const std::int64_t rows = p.batch * p.seqlen * p.heads;
  if (rows == 0) return cudaSuccess;
  const unsigned grid = static_cast<unsigned>(rows < INT_MAX ? rows : INT_MAX);
  const int block = p.head_dim_v >= 128 ? 128 : 64;
  switch (p.out_dtype) {
    case DType::float16:
      combine_kernel<__half><<<grid, block, 0, stream>>>(p);
      break;
    case DType::bfloat16:
      combine_kernel<__nv_bfloat16><<<grid, block, 0, stream>>>(p);
      break;
    default:
      combine_kernel<float><<<grid, block, 0, stream>>>(p);
      break;
  }
  return cudaGetLastError();
}

}  // namespace flashattn::detail::cuda_sm80
