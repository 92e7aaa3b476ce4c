// Host side of the Hopper backward main kernel (backward_kernel.h) and, at d >= 192, the dQ pass
// (backward_dq_kernel.h): their tensor maps, parameters and launches. The preprocess and postprocess around
// them are cuda_sm80's (backward_aux_kernels.h), which own the workspace layout (LSE, D, the dQ accumulator
// in its DQ_BULK layout; the dQ pass uses neither the accumulator nor the postprocess).
#pragma once

#include <cuda_runtime.h>

#include "common/params.h"
#include "cuda/sm80/backward_config.h"
#include "cuda/sm80/grid_launch.h"  // launch_tiles
#include "cuda/sm90/backward_dq_kernel.h"
#include "cuda/sm90/backward_kernel.h"
#include "cuda/sm90/tensor_map.h"

namespace flashattn::detail::cuda_sm90 {

template <class Config>
cudaError_t launch_backward(const cuda_sm80::BackwardKernelArgs& args, cudaStream_t stream) {
  const BackwardParams& p = args.p;
  // The tensors' own columns (a padded head dim's are fewer than the kernel's, forward_config.h
  // kernel_head_dims): the maps zero-fill the loads past them and clip the stores.
  if (p.head_dim > Config::kHeadDim || p.head_dim_v > Config::kHeadDimV) return cudaErrorInvalidConfiguration;
  // The accumulator's rows are the kernel's (run() sized it so), except for the dQ pass, which has none.
  if (args.dq_accum != nullptr && args.accum_cols() != Config::kHeadDim) return cudaErrorInvalidConfiguration;
  const bool varlen = p.cu_seqlens_q != nullptr;
  // Varlen: maps over every sequence's rows (batch extent 1); the kernel adds the sequences' first rows.
  const std::int64_t q_rows = varlen ? p.q_rows : p.seqlen_q;
  const std::int64_t k_rows = varlen ? p.k_rows : p.seqlen_k;
  const std::int64_t map_batch = varlen ? 1 : p.batch;
  BackwardKernelParams k{};
  // (No keys, which only the dQ pass is launched for, writing zeros: no K / V maps, none read.)
  const bool maps_ok =
      encode_tile_map(&k.maps.q, p.dtype, p.q.data, p.head_dim, q_rows, p.heads, map_batch, p.q.row_stride,
                      p.q.head_stride, p.q.batch_stride, Config::kBlockM) &&
      encode_tile_map(&k.maps.dout, p.dtype, p.dout.data, p.head_dim_v, q_rows, p.heads, map_batch,
                      p.dout.row_stride, p.dout.head_stride, p.dout.batch_stride, Config::kBlockM) &&
      (p.seqlen_k == 0 ||
       (encode_tile_map(&k.maps.k, p.dtype, p.k.data, p.head_dim, k_rows, p.heads_kv, map_batch,
                        p.k.row_stride, p.k.head_stride, p.k.batch_stride, Config::kBlockN) &&
        encode_tile_map(&k.maps.v, p.dtype, p.v.data, p.head_dim_v, k_rows, p.heads_kv, map_batch,
                        p.v.row_stride, p.v.head_stride, p.v.batch_stride, Config::kBlockN)));
  if (!maps_ok) return cudaErrorInvalidValue;
  // kStagedKeyStore: dK / dV stored by TMA in boxes of one consumer's 64 rows (unsupported_reason has checked
  // their alignment as q's).
  if constexpr (Config::kStagedKeyStore) {
    if (p.seqlen_k > 0 &&
        !(encode_tile_map(&k.maps.dk, p.dtype, p.dk.data, p.head_dim, k_rows, p.heads_kv, map_batch,
                          p.dk.row_stride, p.dk.head_stride, p.dk.batch_stride, 64) &&
          encode_tile_map(&k.maps.dv, p.dtype, p.dv.data, p.head_dim_v, k_rows, p.heads_kv, map_batch,
                          p.dv.row_stride, p.dv.head_stride, p.dv.batch_stride, 64))) {
      return cudaErrorInvalidValue;
    }
  }
  k.lse_log2 = args.lse_log2;
  k.delta = args.delta;
  k.dq_accum = args.dq_accum;
  k.dq_semaphore = args.dq_semaphore;
  k.tile_counter = args.tile_counter;
  k.m_blocks = args.m_blocks;
  // (run() always sets both in deterministic mode; not cudaErrorInvalidValue, which reports a tensor map.)
  if (Config::kDeterministic && (args.dq_semaphore == nullptr || args.tile_counter == nullptr)) {
    return cudaErrorInvalidConfiguration;
  }
  k.dk = p.dk.data;
  k.dv = p.dv.data;
  k.dk_batch_stride = p.dk.batch_stride, k.dk_row_stride = p.dk.row_stride,
  k.dk_head_stride = p.dk.head_stride;
  k.dv_batch_stride = p.dv.batch_stride, k.dv_row_stride = p.dv.row_stride,
  k.dv_head_stride = p.dv.head_stride;
  k.cu_seqlens_q = p.cu_seqlens_q;
  k.cu_seqlens_k = p.cu_seqlens_k;
  k.seqused_q = p.seqused_q;
  k.seqused_k = p.seqused_k;
  k.batch = static_cast<int>(p.batch);
  k.heads = static_cast<int>(p.heads);
  k.heads_kv = static_cast<int>(p.heads_kv);
  k.group = static_cast<int>(p.heads / p.heads_kv);
  k.seqlen_q = static_cast<int>(p.seqlen_q);
  k.seqlen_k = static_cast<int>(p.seqlen_k);
  k.rows_padded = static_cast<int>(args.rows_padded);
  // Key blocks of the CTAs (every sequence's, of the longest).
  const std::int64_t key_blocks = (p.seqlen_k + Config::kBlockN - 1) / Config::kBlockN;
  k.n_blocks = static_cast<int>(key_blocks);
  k.window_left = static_cast<int>(p.mask.window_left);
  k.window_right = static_cast<int>(p.mask.window_right);
  k.scale_log2 = args.scale_log2;
  k.scale = p.scale;
  if (p.softcap > 0.f) {
    k.softcap_in = p.scale / p.softcap;
    k.softcap_log2 = p.softcap * 1.4426950408889634f;
  }
  k.alibi_slopes = p.alibi_slopes;
  k.alibi_batch_stride = p.alibi_batch_stride;
  k.dropout_keys = args.dropout_keys;
  k.dropout_offset = p.dropout_offset;
  k.dropout_threshold = args.dropout_threshold;
  k.dropout_rescale = args.dropout_rescale;
  k.qk_cols = static_cast<int>(p.head_dim), k.v_cols = static_cast<int>(p.head_dim_v);
  // (run_backward picks the kGeneral kernels exactly when these are set; not cudaErrorInvalidValue, which
  // reports a tensor map.)
  if (Config::kGeneral != (p.softcap > 0.f || p.alibi_slopes != nullptr || args.dropout_threshold > 0))
    return cudaErrorInvalidConfiguration;

  const std::int64_t tiles = key_blocks * p.heads_kv * p.batch;
  k.total_tiles = static_cast<int>(tiles);
  // One CTA a SM at most where the kernel is persistent (BackwardConfig::kPersistent) and every tile has the
  // same work (no mask band, one length for all sequences), else one per tile. Under a causal mask the static
  // assignment (backward_tile_index) read 0.77x cuDNN's speed at d128 16k (s60_final.sh; a simulation of it:
  // 1.53x the ideal time there, 1.03x at 512-8k), where the hardware's own CTA order stays balanced.
  const bool uniform_tiles = p.mask.window_left < 0 && p.mask.window_right < 0 && !varlen &&
                             p.seqused_q == nullptr && p.seqused_k == nullptr;
  std::int64_t ctas = tiles;
  if (Config::kPersistent && uniform_tiles) {
    int device = 0, sms = 0;
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        e != cudaSuccess)
      return e;
    if (ctas > sms) ctas = sms;
  }
  // (launch_tiles caps its grid at INT_MAX, which unsupported_reason's 32-bit bounds keep it below.)
  if (tiles > 0) {
    if (cudaError_t e = cuda_sm80::launch_tiles<Config>(backward_kernel<Config>, k, ctas, stream);
        e != cudaSuccess) {
      return e;
    }
  }
  if constexpr (Config::kSplitHeadDim) {  // d >= 192: the dQ pass
    using DqConfig = BackwardDqConfig<Config>;
    k.dq = p.dq.data;
    k.dq_batch_stride = p.dq.batch_stride, k.dq_row_stride = p.dq.row_stride,
    k.dq_head_stride = p.dq.head_stride;
    const std::int64_t q_blocks = (p.seqlen_q + DqConfig::kBlockM - 1) / DqConfig::kBlockM;
    k.q_blocks = static_cast<int>(q_blocks);
    // (unsupported_reason bounds this by 32-bit indices.)
    const std::int64_t dq_tiles = q_blocks * p.heads * p.batch;
    if (dq_tiles > 0)
      return cuda_sm80::launch_tiles<DqConfig>(backward_dq_kernel<DqConfig>, k, dq_tiles, stream);
  }
  return cudaSuccess;
}

// The masked d = 64 kernels (BackwardConfig::kSkipHidden): instantiated in units of their own,
// backward_hdim64_{dtype}_masked.cu, so that the default mode's unit compiles no longer.
extern template cudaError_t launch_backward<BackwardConfig<64, __half, 2, false, false, true>>(
    const cuda_sm80::BackwardKernelArgs&, cudaStream_t);
extern template cudaError_t launch_backward<BackwardConfig<64, __nv_bfloat16, 2, false, false, true>>(
    const cuda_sm80::BackwardKernelArgs&, cudaStream_t);

// The kernel of (head dim, element type, deterministic mode, softcap / ALiBi / dropout) for this call: at
// d = 64, three consumer warpgroups (192-key blocks) from 2048 keys (D64_THREE_FROM), two (128-key blocks)
// below and in deterministic mode (BackwardConfig::kConsumers; two in the kGeneral kernels), below that under
// a causal or window band the two-consumer kernel that passes hidden steps (kSkipHidden, SKIP_HIDDEN); at d
// >= 192 (d = dv = 192, 256; (d, dv) = (192, 128)) the split-column kernel (64-key blocks) and the dQ pass,
// both modes (kDeterministic false). kHeadDimV = kHeadDim but at (192, 128). Deterministic mode needs
// args.dq_semaphore and args.tile_counter (zeroed by the preprocess); kGeneral exactly the calls with
// softcap, ALiBi or dropout.
// kGemmDim 96 (kHeadDim 128, any mode: units backward_hdim96_*.cu): the narrowed kernels (BackwardConfig
// kGemmDim_) for head dims of at most 96 (forward_config.h narrowed_gemm_dim).
template <int kHeadDim, typename Element, bool kDeterministic, bool kGeneral, int kHeadDimV,
          int kGemmDim = kHeadDim>
cudaError_t run_backward(const cuda_sm80::BackwardKernelArgs& args, cudaStream_t stream) {
  static_assert(kHeadDimV == kHeadDim || kHeadDim >= 192, "d != dv only with the split columns");
  if constexpr (kGemmDim != kHeadDim) {
    static_assert(kHeadDim == 128 && kGemmDim == 96);
    return launch_backward<
        BackwardConfig<kHeadDim, Element, 2, kDeterministic, kGeneral, false, kHeadDimV, kGemmDim>>(args,
                                                                                                    stream);
  } else if constexpr (kHeadDim >= 192) {
    static_assert(!kDeterministic, "d >= 192 has one kernel for both modes (each output written once)");
    // The dQ pass writes dQ: no accumulator (run() passes none) and no postprocess.
    if (args.dq_accum != nullptr) return cudaErrorInvalidConfiguration;
    return launch_backward<BackwardConfig<kHeadDim, Element, 2, false, kGeneral, false, kHeadDimV>>(args,
                                                                                                    stream);
  } else if constexpr (kDeterministic) {
    return launch_backward<BackwardConfig<kHeadDim, Element, 2, true, kGeneral>>(args, stream);
  } else {
    // (Not in the kGeneral kernels: ptxas serializes the three-consumer kernel's wgmmas there, C7512, for
    // want of registers.)
    if constexpr (kHeadDim == 64 && !kGeneral) {
      if (args.p.seqlen_k >= FLASHATTN_SM90_BWD_D64_THREE_FROM) {
        return launch_backward<BackwardConfig<kHeadDim, Element, 3, false, kGeneral>>(args, stream);
      }
      const bool banded = args.p.mask.window_left >= 0 || args.p.mask.window_right >= 0;
      if (FLASHATTN_SM90_BWD_SKIP_HIDDEN != 0 && banded) {
        return launch_backward<BackwardConfig<kHeadDim, Element, 2, false, false, true>>(args, stream);
      }
    }
    return launch_backward<BackwardConfig<kHeadDim, Element, 2, false, kGeneral>>(args, stream);
  }
}

}  // namespace flashattn::detail::cuda_sm90
