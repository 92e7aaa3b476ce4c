// The Hopper backward's consumer at d >= 192 (d = dv = 192 or 256, (d, dv) = (192, 128);
// BackwardConfig::kSplitHeadDim): 64 keys a CTA, the dK / dV columns split between two consumers, no dQ (the
// dQ pass's, backward_dq_kernel.h).
#pragma once

#include <cstdint>

#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/ptx/wgmma.h"
#include "cuda/sm90/backward_config.h"
#include "cuda/sm90/backward_steps.h"
#include "cuda/sm90/epilogue.h"  // pack_pair

// SCORE_ORDER (default 1): the d >= 192 consumers issue their score GEMMs in a fixed order, consumer 0's
// first, so that its softmax runs while consumer 1's GEMMs occupy the tensor cores (in any order both
// softmaxes tended to run at once, the tensor cores idle: s62_stalls.sh read the per-step barrier as the main
// stall). Measured (s62_order.sh, H200): 0.976-0.999x the time, every row below 1 but each within a row's
// spread between calls; off at d = 192 / (192, 128) 0.98-1.02x (s66_switches.sh).
#ifndef FLASHATTN_SM90_BWD_D256_SCORE_ORDER
#define FLASHATTN_SM90_BWD_D256_SCORE_ORDER 1
#endif

// OWN_FIRST (default 1): each d >= 192 consumer adds its own 32 rows' P^T dO and dS^T Q from registers before
// the barrier of both, so that its tensor work runs while the other's staged halves are awaited, and only the
// other's 32 rows come from the staged tiles after it. Measured (s63_own_first.sh, H200, against the staged
// form in one call): 0.958-1.005x the time (16k non-causal 0.958), with softcap 0.973-0.998x; at d = 192 /
// (192, 128) off read up to 1.03x the time (s66_switches.sh).
#ifndef FLASHATTN_SM90_BWD_D256_OWN_FIRST
#define FLASHATTN_SM90_BWD_D256_OWN_FIRST 1
#endif
namespace flashattn::detail::cuda_sm90 {

// SPLIT_HEAD_DIM (d >= 192): one consumer over one tile (64 keys). Per query block of 64 rows:
//   S^T, dP^T for its 32 rows [32 w, + 32) over all 64 keys (m64n32, shared-memory operands),
//   P^T and dS^T (as backward_consumer's); under OWN_FIRST dV[:, its columns] += P^T dO and
//   dK[:, its columns] += dS^T Q over those 32 rows from registers; both staged in shared memory (buffers
//   step % 2) for the other consumer; one barrier of both, then the same GEMMs over the other's 32 rows (all
//   64 without OWN_FIRST) from the staged tiles. Its columns: dK's chunks from key_chunk_begin(consumer),
//   dV's from value_chunk_begin(consumer) (BackwardConfig). dQ is the dQ pass's (backward_dq_kernel.h).
// kConsumer: the consumer this instance is, where their column counts differ (kConsumerInstances: d = 192,
// (192, 128)); -1 where they are equal (d = 256), one instance for both, `consumer_index` the index (a second
// instance measured 1.02-1.05x the time at d = 256, s66_d192.sh: its code twice in the instruction cache).
// A staged buffer is rewritten two steps later, after both consumers have passed the barrier of the step
// between, which each reaches only once its GEMMs of the step before have completed.
template <class Config, int kConsumer>
__device__ void backward_consumer_split_head_dim(const BackwardKernelParams& p,
                                                 const BackwardShared<Config>& smem, const BackwardTile& tile,
                                                 const BackwardSequence& seq, int consumer_index, int& step,
                                                 int kv_round) {
  using Element = typename Config::Element;
  static_assert((kConsumer >= 0) == Config::kConsumerInstances, "an instance per consumer exactly if needed");
  constexpr int kOwner = kConsumer >= 0 ? kConsumer : 0;  // whose column counts (equal without instances)
  constexpr int kColumnsK = 64 * (Config::key_chunk_begin(kOwner + 1) - Config::key_chunk_begin(kOwner));
  constexpr int kColumnsV = 64 * (Config::value_chunk_begin(kOwner + 1) - Config::value_chunk_begin(kOwner));
  static_assert(kColumnsK > 0 && kColumnsV > 0, "each consumer owns columns of dK and of dV");
  constexpr bool kOwnFirst = FLASHATTN_SM90_BWD_D256_OWN_FIRST != 0;
  const int consumer = kConsumer >= 0 ? kConsumer : consumer_index;
  const int thread = static_cast<int>(threadIdx.x) % 128;
  const int warp = thread / 32, lane = thread % 32;
  const int thread_in_consumers = static_cast<int>(threadIdx.x) - 128;
  const int n0 = tile.n_block * Config::kBlockN;
  const int key_local = 16 * warp + lane / 4;  // this thread's two keys (and + 8) of the block's 64
  const int query0 = 32 * consumer;            // this consumer's query rows of each block
  const int offset = seq.k - seq.q;
  // This consumer's first chunks of dK's and dV's columns, and their offsets in a Q / dO stage.
  const int key_chunk = kConsumer >= 0 ? Config::key_chunk_begin(kOwner) : consumer * (kColumnsK / 64);
  const int value_chunk = kConsumer >= 0 ? Config::value_chunk_begin(kOwner) : consumer * (kColumnsV / 64);
  const std::uint32_t q_columns = key_chunk * Config::kQChunkBytes;
  const std::uint32_t do_columns = value_chunk * Config::kQChunkBytes;

  float dk[kColumnsK / 2], dv[kColumnsV / 2];
#pragma unroll
  for (int i = 0; i < kColumnsK / 2; ++i) dk[i] = 0.f;
#pragma unroll
  for (int i = 0; i < kColumnsV / 2; ++i) dv[i] = 0.f;

  ptx::mbarrier_wait_parity(smem.kv_full(), kv_round & 1);
  backward_zero_key_rows<Config>(smem, seq, n0, thread_in_consumers);

  for (int g = 0; g < p.group; ++g) {
    const int head = tile.head_kv * p.group + g;
    [[maybe_unused]] const float slope_log2 = backward_alibi_slope_log2<Config>(p, tile.batch, head);
    for (int m = seq.m_begin; m < seq.m_end; ++m, ++step) {
      const int stage = step % Config::kStages;
      const std::uint32_t phase = (step / Config::kStages) & 1;
      const int i0 = m * Config::kBlockM;
      float st[16], dpt[16];
      ptx::mbarrier_wait_parity(smem.q_full(stage), phase);
      backward_zero_query_rows<Config>(p, smem, seq, stage, phase, i0, thread_in_consumers);
      if (FLASHATTN_SM90_BWD_D256_SCORE_ORDER != 0 && consumer == 1) {
        backward_bar_sync<Config::kConsumerInstances>(kBackwardScoreOrder, 128 * Config::kConsumers);
      }
      ptx::wgmma_fence();
      backward_gemm_transposed_scores<Config, 32>(st, smem.k(), smem.q(stage) + query0 * Config::kRowBytes);
      ptx::wgmma_commit_group();
      ptx::mbarrier_wait_parity(smem.do_full(stage), phase);
      ptx::wgmma_fence();
      backward_gemm_transposed_scores<Config, 32, Config::kKChunkBytes, Config::kQChunkBytes,
                                      Config::kHeadDimV>(dpt, smem.v(),
                                                         smem.dout(stage) + query0 * Config::kRowBytes);
      ptx::wgmma_commit_group();
      if (FLASHATTN_SM90_BWD_D256_SCORE_ORDER != 0 && consumer == 0) {
        backward_bar_arrive<Config::kConsumerInstances>(kBackwardScoreOrder, 128 * Config::kConsumers);
      }

      const bool masked = n0 + Config::kBlockN > seq.k ||
                          (p.window_left >= 0 && i0 + Config::kBlockM - 1 + offset - p.window_left > n0) ||
                          (p.window_right >= 0 && i0 + offset + p.window_right < n0 + Config::kBlockN - 1);
      // Column 8 c + 2 (lane % 4) + e of the accumulators is query row i0 + query0 + that.
      const std::uint32_t lse_at = smem.lse(stage) + 4 * query0 + 8 * (lane % 4);
      const std::uint32_t delta_at = smem.delta(stage) + 4 * query0 + 8 * (lane % 4);
      const int i_first = i0 + query0 + 2 * (lane % 4);
      std::uint32_t pf[2][4], dsf[2][4];
      std::uint32_t dropped = 0;  // kGeneral with dropout: the step's drop bits, while both GEMMs run
      if (Config::kGeneral && p.dropout_threshold != 0) {
        dropped = cuda_sm80::dropout_bits_transposed<4>(
            p.dropout_keys, p.dropout_offset, p.dropout_threshold,
            static_cast<std::int64_t>(tile.batch) * p.heads + head, i_first, (n0 + 16 * warp) / 8, lane);
      }
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(st);
      ptx::wgmma_fence_operand(dpt);
      if constexpr (Config::kGeneral) {
        backward_modified_gradients<Config, 4>(p, st, dpt, lse_at, delta_at, i_first, n0 + key_local, offset,
                                               seq.k, masked, slope_log2, p.dropout_threshold != 0, dropped,
                                               pf, dsf);
      } else {
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const float2 lse = ptx::ld_shared_v2_f32(lse_at + 32 * c);
          const float2 delta = ptx::ld_shared_v2_f32(delta_at + 32 * c);
          float prob[4], ds[4];
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            prob[r] = ptx::ex2_approx_ftz_f32(st[4 * c + r] * p.scale_log2 - (r % 2 == 0 ? lse.x : lse.y));
            if (masked && !backward_visible(p, n0 + key_local + 8 * (r / 2),
                                            i_first + 8 * c + (r % 2) + offset, seq.k)) {
              prob[r] = 0.f;
            }
            ds[r] = prob[r] * (dpt[4 * c + r] - (r % 2 == 0 ? delta.x : delta.y));
          }
          const int kk = c / 2, r0 = 2 * (c % 2);
          pf[kk][r0] = pack_pair<Element>(prob[0], prob[1]);
          pf[kk][r0 + 1] = pack_pair<Element>(prob[2], prob[3]);
          dsf[kk][r0] = pack_pair<Element>(ds[0], ds[1]);
          dsf[kk][r0 + 1] = pack_pair<Element>(ds[2], ds[3]);
        }
      }
      if constexpr (kOwnFirst) {
        // This consumer's 32 rows' share of dV and dK from its registers, in flight while the other's
        // P^T and dS^T are awaited.
        const std::uint32_t own_rows = query0 * Config::kRowBytes;
        ptx::wgmma_fence();
        backward_gemm_key_gradient<Config, Config::kQChunkBytes, kColumnsV, 2>(
            dv, pf, smem.dout(stage) + do_columns + own_rows);
        backward_gemm_key_gradient<Config, Config::kQChunkBytes, kColumnsK, 2>(
            dk, dsf, smem.q(stage) + q_columns + own_rows);
        ptx::wgmma_commit_group();
      }
      // P^T and dS^T into buffers step % 2: key rows of 128 bytes (64 query columns), 16-byte unit u of row r
      // at u ^ (r % 8); this consumer's columns are units [4 w, + 4). stmatrix as backward_consumer's.
      {
        const int matrix = lane / 8;
        const int row = 16 * warp + 8 * (matrix % 2) + lane % 8;
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
          const int unit = 4 * consumer + 2 * kk + matrix / 2;
          const std::uint32_t at = row * Config::kRowBytes + ((unit ^ (row % 8)) << 4);
          ptx::stmatrix_x4(smem.p(step % 2) + at, pf[kk][0], pf[kk][1], pf[kk][2], pf[kk][3]);
          ptx::stmatrix_x4(smem.ds(step % 2) + at, dsf[kk][0], dsf[kk][1], dsf[kk][2], dsf[kk][3]);
        }
      }
      ptx::fence_proxy_async_shared_cta();
      backward_bar_sync<Config::kConsumerInstances>(kBackwardConsumers, 128 * Config::kConsumers);

      ptx::wgmma_fence();
      if constexpr (kOwnFirst) {
        const int other_rows = 2 * (1 - consumer);  // the other consumer's two k-steps
        backward_gemm_key_gradient_staged<Config, kColumnsV, 2>(dv, smem.p(step % 2),
                                                                smem.dout(stage) + do_columns, other_rows);
        backward_gemm_key_gradient_staged<Config, kColumnsK, 2>(dk, smem.ds(step % 2),
                                                                smem.q(stage) + q_columns, other_rows);
      } else {
        backward_gemm_key_gradient_staged<Config, kColumnsV>(dv, smem.p(step % 2),
                                                             smem.dout(stage) + do_columns);
        backward_gemm_key_gradient_staged<Config, kColumnsK>(dk, smem.ds(step % 2),
                                                             smem.q(stage) + q_columns);
      }
      ptx::wgmma_commit_group();
      // dV and dK done: the stage's Q and dO are no longer read.
      ptx::wgmma_wait_group<0>();
      ptx::mbarrier_arrive(smem.empty(stage));
    }
  }
  // Every GEMM of the tile has completed: K / V may be overwritten.
  ptx::mbarrier_arrive(smem.kv_empty());
  // kStagedKeyStore: this consumer's columns of dK staged in K's buffer, of dV in V's (at their own chunks;
  // one tile a CTA: nothing is loaded there again).
  backward_store_key_gradients<Config, kColumnsK, kColumnsV>(
      p, tile, seq, n0, 64 * key_chunk, 64 * value_chunk, smem.k() + key_chunk * Config::kKChunkBytes,
      smem.v() + value_chunk * Config::kKChunkBytes, dk, dv, consumer, thread);
}

}  // namespace flashattn::detail::cuda_sm90
