// The pieces of a backward step shared by the Hopper backward's consumers (backward_consumer.h,
// backward_split_consumer.h) and the d >= 192 dQ pass (backward_dq_kernel.h): the step's GEMMs, the stores of
// dK / dV / dQ rows, the zeroing of rows past a sequence's, and softcap / ALiBi / dropout's probabilities.
#pragma once

#include <cstdint>

#include "cuda/ptx/approx_math.h"
#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/ptx/wgmma.h"
#include "cuda/sm80/dropout.h"  // the backward's drop bits, shared with cuda_sm80
#include "cuda/sm90/backward_config.h"
#include "cuda/sm90/epilogue.h"  // pack_pair

namespace flashattn::detail::cuda_sm90 {

// 64 x kN (keys x query rows) = A (64 key rows, K-major) * B^T (kN query rows, K-major) over kDepth columns
// (the head dim: d for S^T from K and Q, dv for dP^T from V and dO, or the narrowed kGemmDim; kN = 32: a d >=
// 192 consumer's half of
// the query block). The operands' 64-column chunks lie kAChunkBytes / kBChunkBytes apart; the dQ pass swaps
// the roles (A = 64 query rows, B = the keys: S and dP).
template <class Config, int kN = 64, int kAChunkBytes = Config::kKChunkBytes,
          int kBChunkBytes = Config::kQChunkBytes, int kDepth = Config::kGemmDim>
__device__ __forceinline__ void backward_gemm_transposed_scores(float (&acc)[kN / 2], std::uint32_t a,
                                                                std::uint32_t b) {
  const std::uint64_t desc_a0 = ptx::make_smem_desc_sw128(a, 16, 1024);
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(b, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < kDepth / 16; ++kk) {
    const int offset = (kk % 4) * 32;  // 16 elements = 32 bytes along the swizzled row
    ptx::wgmma_m64k16_ss<kN, typename Config::Element>(
        acc, ptx::smem_desc_moved(desc_a0, (kk / 4) * kAChunkBytes + offset, 0),
        ptx::smem_desc_moved(desc_b0, (kk / 4) * kBChunkBytes + offset, 0), kk > 0 ? 1 : 0);
  }
}

// acc (64 keys x d) += A (64 keys x 64 query rows, from registers) * B (64 query rows x d, N-major: the Q or
// dO stage, whose rows are the K steps): dV += P^T dO, dK += dS^T Q. The dQ pass: dQ (64 query rows x d) +=
// dS (64 rows x 64 keys) K (the K stage, 64-column chunks kBChunkBytes apart). d >= 192 (OWN_FIRST): kN = a
// consumer's columns of dK or dV over kKSteps = 2 (its 32 query rows).
template <class Config, int kBChunkBytes = Config::kQChunkBytes, int kN = Config::kGemmDim, int kKSteps = 4>
__device__ __forceinline__ void backward_gemm_key_gradient(float (&acc)[kN / 2],
                                                           const std::uint32_t (&a)[kKSteps][4],
                                                           std::uint32_t b) {
  const std::uint64_t desc0 = ptx::make_smem_desc_sw128(b, kBChunkBytes, 1024);
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) {  // 16 rows of B a k-step
    ptx::wgmma_m64k16_rs_tb<kN, typename Config::Element>(
        acc, a[kk], ptx::smem_desc_moved(desc0, kk * 16 * Config::kRowBytes, 0), 1);
  }
}

// d >= 192: acc (64 keys x kN columns) += A (64 keys x 64 query rows: P^T or dS^T staged in shared memory,
// K-major) * B (64 query rows x the columns: kN / 64 chunks of the dO or Q stage from `b`, N-major): a
// consumer's columns of dV += P^T dO or dK += dS^T Q. OWN_FIRST: the k-steps [first_step, + kKSteps) alone
// (the other consumer's 32 rows).
template <class Config, int kN, int kKSteps = Config::kBlockM / 16>
__device__ __forceinline__ void backward_gemm_key_gradient_staged(float (&acc)[kN / 2], std::uint32_t a,
                                                                  std::uint32_t b, int first_step = 0) {
  const std::uint64_t desc_a0 = ptx::make_smem_desc_sw128(a, 16, 1024);
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(b, Config::kQChunkBytes, 1024);
#pragma unroll
  for (int j = 0; j < kKSteps; ++j) {
    const int kk = first_step + j;
    ptx::wgmma_m64k16_ss_tb<kN, typename Config::Element>(
        acc, ptx::smem_desc_moved(desc_a0, kk * 32, 0),
        ptx::smem_desc_moved(desc_b0, kk * 16 * Config::kRowBytes, 0), 1);
  }
}

// 64 query rows x 64 columns of dQ = dS K over kKeys keys: A = dS^T's rows read M-major (its key rows are the
// K steps), B = K's rows of one 64-column chunk read N-major (its key rows are the K steps). kSplitDq: all
// 128 keys, column chunk w; otherwise the consumer's own 64 keys, the one chunk.
template <class Config, int kKeys>
__device__ __forceinline__ void backward_gemm_dq(float (&acc)[32], std::uint32_t ds, std::uint32_t k_chunk) {
  const std::uint64_t desc_a0 = ptx::make_smem_desc_sw128(ds, Config::kDsBytes, 1024);
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(k_chunk, Config::kKChunkBytes, 1024);
#pragma unroll
  for (int kk = 0; kk < kKeys / 16; ++kk) {
    const int step = kk * 16 * Config::kRowBytes;
    ptx::wgmma_m64k16_ss_tatb<64, typename Config::Element>(
        acc, ptx::smem_desc_moved(desc_a0, step, 0), ptx::smem_desc_moved(desc_b0, step, 0), kk > 0 ? 1 : 0);
  }
}

// Stores 64 rows x kCols columns (from column0) of a warpgroup's accumulator times `scale` to the rows
// row0 + first .. of `head` (first: the warpgroup's first row within the sequence; rows at or past `rows`
// are not written, nor columns at or past `cols`, the tensor's: a padded head dim's): dK, dV (key rows) and
// the dQ pass's dQ (query rows).
template <class Config, int kCols>
__device__ __forceinline__ void backward_store_rows(typename Config::Element* head, std::int64_t row_stride,
                                                    int row0, int first, int rows,
                                                    const float (&acc)[kCols / 2], float scale, int thread,
                                                    int column0, int cols) {
  using Element = typename Config::Element;
  const int lane = thread % 32;
  const int key = first + 16 * (thread / 32) + lane / 4;  // and key + 8
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int j = key + 8 * half;
    if (j >= rows) continue;
    Element* row = head + (static_cast<std::int64_t>(row0) + j) * row_stride + column0 + 2 * (lane % 4);
#pragma unroll
    for (int c = 0; c < kCols / 8; ++c) {
      if (column0 + 8 * c >= cols) break;  // (cols is a multiple of 8: a group of 8 is wholly in or out)
      *reinterpret_cast<std::uint32_t*>(row + 8 * c) =
          pack_pair<Element>(acc[4 * c + 2 * half] * scale, acc[4 * c + 2 * half + 1] * scale);
    }
  }
}

// Stores dK or dV (64 keys x kCols columns from column0 of this warpgroup, accumulator layout) times `scale`
// to global memory; rows at or past the sequence's keys in dK / dV are not written.
template <class Config, int kCols = Config::kHeadDim>
__device__ __forceinline__ void backward_store_key_rows(void* base, std::int64_t batch_stride,
                                                        std::int64_t row_stride, std::int64_t head_stride,
                                                        const BackwardTile& tile, const BackwardSequence& seq,
                                                        int first_key, const float (&acc)[kCols / 2],
                                                        float scale, int thread, int column0, int cols) {
  using Element = typename Config::Element;
  Element* head = static_cast<Element*>(base) + tile.batch * batch_stride + tile.head_kv * head_stride;
  backward_store_rows<Config, kCols>(head, row_stride, seq.k_row0, first_key, seq.k_allocated, acc, scale,
                                     thread, column0, cols);
}

// kStagedKeyStore: the warpgroup's 64 rows x kCols of dK or dV (accumulator layout) times `scale`, written to
// kCols / 64 boxes of 64 rows x 128 bytes, 8 KB apart from `boxes`, 128B-swizzled (the TMA store's box
// layout): one stmatrix per 16 columns, matrices 0 / 1 rows +0 / +8 of columns 16 i .. + 7, 2 / 3 the same
// rows of the next 8 columns (acc[8 i ..] in that order); lane l addresses row 8 (l / 8 % 2) + l % 8 of its
// warp's 16, unit 2 (i % 4) + l / 16 of the box, swizzled by the row (as the forward's store_output).
template <class Config, int kCols>
__device__ __forceinline__ void backward_stage_key_rows(std::uint32_t boxes, const float (&acc)[kCols / 2],
                                                        float scale, int thread) {
  using Element = typename Config::Element;
  const int lane = thread % 32;
  const int row = 16 * (thread / 32) + 8 * ((lane / 8) % 2) + lane % 8;
  const std::uint32_t row_at = boxes + row * Config::kRowBytes;
  const int unit_xor = (lane / 16) ^ (lane % 8);
#pragma unroll
  for (int i = 0; i < kCols / 16; ++i) {
    const float* v = acc + 8 * i;
    ptx::stmatrix_x4(
        row_at + (i / 4) * 8192 + ((unit_xor ^ (2 * (i % 4))) << 4),
        pack_pair<Element>(v[0] * scale, v[1] * scale), pack_pair<Element>(v[2] * scale, v[3] * scale),
        pack_pair<Element>(v[4] * scale, v[5] * scale), pack_pair<Element>(v[6] * scale, v[7] * scale));
  }
}

// A warpgroup's 64 key rows of dK (times softmax_scale; kColsK columns from column_k) and dV (kColsV from
// column_v), accumulator layout, at key row first_key of the tile's sequence. kStagedKeyStore: staged at
// dk_boxes / dv_boxes (kCols / 64 boxes each, rounded up, 8 KB apart, in shared memory no GEMM reads any
// more; a narrowed kernel's last box holds 32 columns, the tensor map clips the rest) and stored by the
// warpgroup's thread 0 with TMA, where the tensor maps bound the rows: all but a varlen sequence's last block
// (whose rows past its keys are the next sequence's; in batched layout the maps end at seqlen_k). Otherwise
// from registers.
template <class Config, int kColsK, int kColsV = kColsK>
__device__ __forceinline__ void backward_store_key_gradients(
    const BackwardKernelParams& p, const BackwardTile& tile, const BackwardSequence& seq, int first_key,
    int column_k, int column_v, std::uint32_t dk_boxes, std::uint32_t dv_boxes, const float (&dk)[kColsK / 2],
    const float (&dv)[kColsV / 2], int consumer, int thread) {
  if (Config::kStagedKeyStore && (p.cu_seqlens_k == nullptr || first_key + 64 <= seq.k_allocated)) {
    __syncwarp();  // (stmatrix and bar.sync are aligned: converged again after a leader's branch)
    backward_stage_key_rows<Config, kColsK>(dk_boxes, dk, p.scale, thread);
    backward_stage_key_rows<Config, kColsV>(dv_boxes, dv, 1.f, thread);
    ptx::fence_proxy_async_shared_cta();  // each thread's writes before the copy engine reads them
    ptx::bar_sync(kBackwardKeysStaged + consumer, 128);
    if (thread == 0 && first_key < seq.k_allocated) {  // (the maps clip the rows past seqlen_k)
#pragma unroll
      for (int c = 0; c < ((kColsK > kColsV ? kColsK : kColsV) + 63) / 64; ++c) {
        if (c < (kColsK + 63) / 64) {
          ptx::tma_store_4d(&p.maps.dk, dk_boxes + c * 8192, column_k + 64 * c, seq.k_row0 + first_key,
                            tile.head_kv, seq.map_batch);
        }
        if (c < (kColsV + 63) / 64) {
          ptx::tma_store_4d(&p.maps.dv, dv_boxes + c * 8192, column_v + 64 * c, seq.k_row0 + first_key,
                            tile.head_kv, seq.map_batch);
        }
      }
      ptx::cp_async_bulk_commit_group();
    }
  } else {
    backward_store_key_rows<Config, kColsK>(p.dk, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride, tile,
                                            seq, first_key, dk, p.scale, thread, column_k, p.qk_cols);
    backward_store_key_rows<Config, kColsV>(p.dv, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride, tile,
                                            seq, first_key, dv, 1.f, thread, column_v, p.v_cols);
  }
}

// Named barrier `id` of `threads` threads, waiting (sync) or not (arrive); kUnaligned: the unaligned form,
// for warps that reach it from different instructions (bar.sync / bar.arrive are .aligned): the split-column
// consumers where each is an instance of its own (BackwardConfig::kConsumerInstances).
template <bool kUnaligned>
__device__ __forceinline__ void backward_bar_sync(int id, int threads) {
  if constexpr (kUnaligned) {
    ptx::bar_sync_unaligned(id, threads);
  } else {
    ptx::bar_sync(id, threads);
  }
}
template <bool kUnaligned>
__device__ __forceinline__ void backward_bar_arrive(int id, int threads) {
  if constexpr (kUnaligned) {
    ptx::bar_arrive_unaligned(id, threads);
  } else {
    ptx::bar_arrive(id, threads);
  }
}

// Rows [first_row, end_row) of two tiles (K and V, or Q and dO: kChunks and kChunksV 64-column chunks
// kChunkBytes apart) set to zero by every consumer thread (thread_in_consumers of the Config's consumers),
// fenced for the async proxy and passed a barrier of the consumers, before any GEMM reads them.
template <class Config, int kChunkBytes, bool kUnaligned = false>
__device__ __forceinline__ void backward_zero_tile_pair_rows(std::uint32_t a, std::uint32_t b, int first_row,
                                                             int end_row, int thread_in_consumers) {
  ptx::zero_rows_128b(a, kChunkBytes, Config::kChunks, first_row, end_row, thread_in_consumers,
                      128 * Config::kConsumers);
  ptx::zero_rows_128b(b, kChunkBytes, Config::kChunksV, first_row, end_row, thread_in_consumers,
                      128 * Config::kConsumers);
  ptx::fence_proxy_async_shared_cta();
  // bar.sync is aligned: every warp must reach it converged (the __syncwarp: nothing else here promises it
  // after the mbarrier waits and the zeroing loops) and at the same instruction as the other warps it counts,
  // so each caller has one call site a step (session 63's SKIP_HIDDEN forms that called it from a second site
  // for the steps a consumer passed made compute-sanitizer's synccheck report divergent threads).
  __syncwarp();
  backward_bar_sync<kUnaligned>(kBackwardConsumers, 128 * Config::kConsumers);
}

// Key rows past the sequence's (the next sequence's rows under varlen, unused rows past seqused_k, whatever
// they hold) become zeros: the dQ GEMM multiplies them by dS = 0, and 0 * NaN is NaN. All consumer threads.
template <class Config>
__device__ __forceinline__ void backward_zero_key_rows(const BackwardShared<Config>& smem,
                                                       const BackwardSequence& seq, int n0,
                                                       int thread_in_consumers) {
  if (n0 + Config::kBlockN > seq.k) {
    backward_zero_tile_pair_rows<Config, Config::kKChunkBytes, Config::kConsumerInstances>(
        smem.k(), smem.v(), max(seq.k - n0, 0), Config::kBlockN, thread_in_consumers);
  }
}

// Query rows past seqused_q may hold anything: zeros instead, for the same reason as the keys'. (Past a
// varlen sequence's end come the next sequence's rows, past the tensor the maps' zero fill; their LSE of +inf
// already zeroes their probabilities.) All consumer threads, once the stage's Q (and, waited for here, dO)
// landed.
template <class Config>
__device__ __forceinline__ void backward_zero_query_rows(const BackwardKernelParams& p,
                                                         const BackwardShared<Config>& smem,
                                                         const BackwardSequence& seq, int stage,
                                                         std::uint32_t phase, int i0,
                                                         int thread_in_consumers) {
  if (p.seqused_q != nullptr && i0 + Config::kBlockM > seq.q) {
    ptx::mbarrier_wait_parity(smem.do_full(stage), phase);
    backward_zero_tile_pair_rows<Config, Config::kQChunkBytes, Config::kConsumerInstances>(
        smem.q(stage), smem.dout(stage), seq.q - i0, Config::kBlockM, thread_in_consumers);
  }
}

// kGeneral: ALiBi's slope of query head `head` in base 2 (0: none).
template <class Config>
__device__ __forceinline__ float backward_alibi_slope_log2(const BackwardKernelParams& p, int batch,
                                                           int head) {
  return Config::kGeneral && p.alibi_slopes != nullptr
             ? p.alibi_slopes[batch * p.alibi_batch_stride + head] * 1.4426950408889634f
             : 0.f;
}

// Whether key j is visible to the query row whose diagonal (bottom-right aligned) is key `diag`: below the
// sequence's `keys` and inside the window / causal band.
__device__ __forceinline__ bool backward_visible(const BackwardKernelParams& p, int j, int diag, int keys) {
  return j < keys && (p.window_left < 0 || j >= diag - p.window_left) &&
         (p.window_right < 0 || j <= diag + p.window_right);
}

// kGeneral: one element's probability from its score (`s`; the distance from its key to its query row's
// diagonal key), in base 2: x = S scale log2 e, or with softcap softcap log2 e tanh(S softcap_in); ALiBi
// subtracts slope_log2 |distance|; P = 2^(x - lse_log2) (tanh.approx, as the forward's, so that P is the
// forward's probabilities). Then dS = P (dP - D) (1 - tanh^2) into `dp` (dropout: dP already times the keep
// factor, backward_dropout_keep; D = rowsum(dO o O) of the dropped output already) and P into `s`. dK and dQ
// take softmax_scale at the end, as without softcap: d(softcap tanh(S scale / softcap)) / dS is
// scale (1 - tanh^2). The modifiers are template arguments, chosen once a step (backward_general_step): as
// run-time tests in every element they doubled the plain kernel's instructions (s67_stalls.sh).
template <bool kSoftcap, bool kAlibi>
__device__ __forceinline__ void backward_general_element(const BackwardKernelParams& p, float& s, float& dp,
                                                         float lse_log2, float delta, int distance,
                                                         float slope_log2) {
  float x, dtanh = 1.f;
  if constexpr (kSoftcap) {
    const float th = ptx::tanh_approx_f32(s * p.softcap_in);
    x = th * p.softcap_log2;
    dtanh = 1.f - th * th;
  } else {
    x = s * p.scale_log2;
  }
  if constexpr (kAlibi) x -= slope_log2 * static_cast<float>(abs(distance));
  const float prob = ptx::ex2_approx_ftz_f32(x - lse_log2);
  dp = prob * (dp - delta) * dtanh;
  s = prob;
}

// Dropout: x times its keep factor, 0 where bit `bit` of `dropped` is set, else 1 / (1 - p). (A pass of its
// own over a tile, before dS for dP and after it for P, so that no keep factor stays live across the
// general pass: computed inside it, ptxas hoisted them out of its four forms and spilled.)
__device__ __forceinline__ float backward_dropout_keep(const BackwardKernelParams& p, float x,
                                                       std::uint32_t dropped, int bit) {
  return (dropped >> bit) & 1u ? 0.f : x * p.dropout_rescale;
}

// Runs pass.template operator()<kSoftcap, kAlibi>() with the step's modifiers as template arguments.
template <class Pass>
__device__ __forceinline__ void backward_general_step(const BackwardKernelParams& p, float slope_log2,
                                                      const Pass& pass) {
  if (p.softcap_in != 0.f) {
    if (slope_log2 != 0.f) {
      pass.template operator()<true, true>();
    } else {
      pass.template operator()<true, false>();
    }
  } else if (slope_log2 != 0.f) {
    pass.template operator()<false, true>();
  } else {
    pass.template operator()<false, false>();
  }
}

// kGeneral: one step's P~^T and dS^T from both score tiles (both GEMMs waited for; backward_general_element
// and, with dropout, backward_dropout_keep, in place), packed into the A fragments of dV's and dK's GEMMs.
// Element 4 c + r of an accumulator is query row i_first + 8 c + r % 2 (i_first = the block's first + 2 (lane
// % 4)), key `key` + 8 (r / 2). Dropout: `dropped` (cuda_sm80::dropout_bits_transposed) marks the elements
// the forward dropped. Hidden elements (masked steps only) become zeros in a pass of their own, as in the
// plain kernels.
template <class Config, int kColumnGroups>
__device__ __forceinline__ void backward_modified_gradients(
    const BackwardKernelParams& p, float (&st)[4 * kColumnGroups], float (&dpt)[4 * kColumnGroups],
    std::uint32_t lse_at, std::uint32_t delta_at, int i_first, int key, int offset, int keys, bool masked,
    float slope_log2, bool dropout, std::uint32_t dropped, std::uint32_t (&pf)[kColumnGroups / 2][4],
    std::uint32_t (&dsf)[kColumnGroups / 2][4]) {
  using Element = typename Config::Element;
  constexpr auto bit = cuda_sm80::dropout_transposed_bit<kColumnGroups>;
  if (dropout) {
#pragma unroll
    for (int c = 0; c < kColumnGroups; ++c) {
#pragma unroll
      for (int r = 0; r < 4; ++r)
        dpt[4 * c + r] = backward_dropout_keep(p, dpt[4 * c + r], dropped, bit(c, r));
    }
  }
  backward_general_step(p, slope_log2, [&]<bool kSoftcap, bool kAlibi>() {
#pragma unroll
    for (int c = 0; c < kColumnGroups; ++c) {
      const float2 lse = ptx::ld_shared_v2_f32(lse_at + 32 * c);
      const float2 delta = ptx::ld_shared_v2_f32(delta_at + 32 * c);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        backward_general_element<kSoftcap, kAlibi>(
            p, st[4 * c + r], dpt[4 * c + r], r % 2 == 0 ? lse.x : lse.y, r % 2 == 0 ? delta.x : delta.y,
            i_first + 8 * c + (r % 2) + offset - (key + 8 * (r / 2)), slope_log2);
      }
    }
  });
  if (dropout) {
#pragma unroll
    for (int c = 0; c < kColumnGroups; ++c) {
#pragma unroll
      for (int r = 0; r < 4; ++r) st[4 * c + r] = backward_dropout_keep(p, st[4 * c + r], dropped, bit(c, r));
    }
  }
  if (masked) {
#pragma unroll
    for (int c = 0; c < kColumnGroups; ++c) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        if (!backward_visible(p, key + 8 * (r / 2), i_first + 8 * c + (r % 2) + offset, keys)) {
          st[4 * c + r] = dpt[4 * c + r] = 0.f;
        }
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kColumnGroups; ++c) {
    const int kk = c / 2, r0 = 2 * (c % 2);  // columns 16 kk .. + 15: the A fragment of k-step kk
    pf[kk][r0] = pack_pair<Element>(st[4 * c], st[4 * c + 1]);
    pf[kk][r0 + 1] = pack_pair<Element>(st[4 * c + 2], st[4 * c + 3]);
    dsf[kk][r0] = pack_pair<Element>(dpt[4 * c], dpt[4 * c + 1]);
    dsf[kk][r0 + 1] = pack_pair<Element>(dpt[4 * c + 2], dpt[4 * c + 3]);
  }
}

}  // namespace flashattn::detail::cuda_sm90
