// Host side of one forward instantiation: encode the tensor maps, size the
// persistent grid, launch. Included by the per-(head dim, dtype) translation
// units only, which instantiate run_forward explicitly.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "common/params.h"
#include "cuda/sm90/forward_config.h"
#include "cuda/sm90/forward_dispatch.h"
#include "cuda/sm90/forward_kernel.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/tensor_map.h"

namespace flashattn::detail::cuda_sm90 {

template <class Config>
cudaError_t launch_forward(const AttentionParams& a, int* tile_counter, cudaStream_t stream) {
  ForwardKernelParams k{};
  const bool maps_ok =
      encode_tile_map(&k.tma_q, a.dtype, a.q.data, a.head_dim, a.seqlen_q, a.heads, a.batch, a.q.row_stride,
                      a.q.head_stride, a.q.batch_stride, Config::kBlockM) &&
      encode_tile_map(&k.tma_k, a.dtype, a.k.data, a.head_dim, a.seqlen_k, a.heads_kv, a.batch,
                      a.k.row_stride, a.k.head_stride, a.k.batch_stride, Config::kBlockN) &&
      encode_tile_map(&k.tma_v, a.dtype, a.v.data, a.head_dim_v, a.seqlen_k, a.heads_kv, a.batch,
                      a.v.row_stride, a.v.head_stride, a.v.batch_stride, Config::kBlockN) &&
      encode_tile_map(&k.tma_o, a.dtype, a.out.data, a.head_dim_v, a.seqlen_q, a.heads, a.batch,
                      a.out.row_stride, a.out.head_stride, a.out.batch_stride, 64);
  if (!maps_ok) return cudaErrorInvalidValue;

  k.lse = a.lse;
  k.lse_batch_stride = a.lse_batch_stride, k.lse_head_stride = a.lse_head_stride,
  k.lse_row_stride = a.lse_row_stride;
  k.batch = static_cast<int>(a.batch);
  k.heads = static_cast<int>(a.heads);
  k.heads_per_kv = static_cast<int>(a.heads / a.heads_kv);
  k.seqlen_q = static_cast<int>(a.seqlen_q);
  k.seqlen_k = static_cast<int>(a.seqlen_k);
  k.m_blocks = static_cast<int>((a.seqlen_q + Config::kBlockM - 1) / Config::kBlockM);
  k.num_tiles = k.m_blocks * k.heads * k.batch;
  k.window_left = static_cast<int>(std::min<std::int64_t>(a.mask.window_left, a.seqlen_k + a.seqlen_q));
  k.window_right = static_cast<int>(std::min<std::int64_t>(a.mask.window_right, a.seqlen_k + a.seqlen_q));
  constexpr float kLog2e = 1.4426950408889634f;
  if (a.softcap > 0.f) {
    k.softcap_in = a.scale / a.softcap;
    k.score_log2 = a.softcap * kLog2e;
  } else {
    k.score_log2 = a.scale * kLog2e;
  }
  k.sink = a.sink;

  int device = 0, sms = 0, l2_bytes = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device); e != cudaSuccess)
    return e;
  // L2 sections (tile_scheduler.h): as many kv heads as fill about half of L2, times their query heads.
  const std::int64_t kv_head_bytes = std::max<std::int64_t>(1, a.seqlen_k * (a.head_dim + a.head_dim_v) * 2);
  const std::int64_t kv_heads_per_section = std::max<std::int64_t>(1, (l2_bytes / 2) / kv_head_bytes);
  k.sec_heads = static_cast<int>(
      std::min<std::int64_t>(kv_heads_per_section * k.heads_per_kv, std::int64_t{k.batch} * k.heads));
  k.tile_counter = tile_counter;
  if (cudaError_t e = cudaMemsetAsync(tile_counter, 0, sizeof(int), stream); e != cudaSuccess) return e;
  auto kernel = forward_kernel<Config>;
  if (cudaError_t e =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSmemBytes);
      e != cudaSuccess) {
    return e;
  }
  const int grid = std::max(1, std::min(sms, k.num_tiles));
  kernel<<<grid, Config::kThreads, Config::kSmemBytes, stream>>>(k);
  return cudaGetLastError();
}

template <int kHeadDim, typename Element>
cudaError_t run_forward(const AttentionParams& a, int* tile_counter, cudaStream_t stream) {
  return launch_forward<ForwardConfig<kHeadDim, Element>>(a, tile_counter, stream);
}

}  // namespace flashattn::detail::cuda_sm90
