// The Hopper backward's consumer at d = dv = 64 and 128 (backward_consumer: S^T, dP^T, dV, dK and dQ of its
// 64 keys per query block; design in backward_kernel.h) and the dQ reductions into cuda_sm80's fp32
// accumulator, in deterministic mode in their turns, by the consumers or the dQ writer.
#pragma once

#include <cstdint>

#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/ptx/wgmma.h"
#include "cuda/sm80/backward_config.h"  // dq_bulk_unit: the dQ accumulator's layout, shared with cuda_sm80
#include "cuda/sm90/backward_config.h"
#include "cuda/sm90/backward_steps.h"
#include "cuda/sm90/epilogue.h"  // pack_pair

namespace flashattn::detail::cuda_sm90 {

// A bulk reduction of a staged dQ tile into the accumulator rows `rows`. Deterministic mode: in its turn
// (after `turn` reductions into the query block, counted by `semaphore`), and released once its adds are
// done, so that the next reduction in the order adds to them.
template <class Config>
__device__ __forceinline__ void backward_reduce_dq(float* rows, std::uint32_t staged, int* semaphore,
                                                   int turn) {
  if constexpr (Config::kDeterministic) {
    while (ptx::ld_acquire_gpu_s32(semaphore) != turn) {
    }
    ptx::fence_proxy_async_global();  // the acquired adds before this thread's bulk reduction
  }
  ptx::cp_reduce_async_bulk_add_f32(rows, staged, Config::kDqBytes);
  ptx::cp_async_bulk_commit_group();
  if constexpr (Config::kDeterministic) {
    ptx::cp_async_bulk_wait_group<0>();
    ptx::fence_proxy_async_global();
    ptx::red_release_gpu_add_s32(semaphore, 1);
  }
}

// kDqWriter (deterministic mode at d = 128): the dQ writer (one thread of the producer warpgroup's warp 1)
// over one tile: for each step (query block of each head), once both consumers have staged its tile, its
// reduction in its turn (backward_reduce_dq); the buffer is freed once the copy engine is done with it.
template <class Config>
__device__ void backward_dq_writer(const BackwardKernelParams& p, const BackwardShared<Config>& smem,
                                   const BackwardTile& tile, const BackwardSequence& seq, int& step) {
  static_assert(Config::kDeterministic && Config::kSplitDq, "the writer stages one tile a step, in turns");
  for (int g = 0; g < p.group; ++g) {
    const int head = tile.head_kv * p.group + g;
    const std::int64_t head_block0 = (static_cast<std::int64_t>(tile.batch) * p.heads + head) * p.m_blocks;
    for (int m = seq.m_begin; m < seq.m_end; ++m, ++step) {
      float* rows = p.dq_accum + ((head_block0 + m) * Config::kBlockM) * Config::kHeadDim;
      ptx::mbarrier_wait_parity(smem.dq_full(step % 2, 0), (step / 2) & 1);
      backward_reduce_dq<Config>(rows, smem.dq(step % 2, 0), p.dq_semaphore + head_block0 + m,
                                 backward_dq_turn<Config>(p, seq, tile.n_block, m, 0));
      // (backward_reduce_dq has waited for the reduction's completion already.)
      ptx::cp_async_bulk_wait_group_read<0>();
      ptx::mbarrier_arrive(smem.dq_empty(step % 2, 0));
    }
  }
}

template <class Config>
__device__ void backward_consumer(const BackwardKernelParams& p, const BackwardShared<Config>& smem,
                                  const BackwardTile& tile, const BackwardSequence& seq, int consumer,
                                  int& step, int kv_round) {
  using Element = typename Config::Element;
  const int thread = static_cast<int>(threadIdx.x) % 128;
  const int warp = thread / 32, lane = thread % 32;
  const int thread_in_consumers = static_cast<int>(threadIdx.x) - 128;  // zeroed rows: all consumers' threads
  // The thread that issues the dQ reductions: one for the CTA's tile, or one per consumer's own.
  const bool leader = Config::kSplitDq ? threadIdx.x == 128 : thread == 0;
  const int ds_barrier = Config::kSplitDq ? kBackwardConsumers : kBackwardWarpgroup + consumer;
  const int ds_threads = Config::kSplitDq ? 128 * Config::kConsumers : 128;
  const int n0 = tile.n_block * Config::kBlockN;
  // This thread's two key rows (accumulator rows of S^T / dP^T / dK / dV), within the CTA's block.
  const int key_local = 64 * consumer + 16 * warp + lane / 4;
  const int offset = seq.k - seq.q;

  float dk[Config::kGemmDim / 2], dv[Config::kGemmDim / 2];
#pragma unroll
  for (int i = 0; i < Config::kGemmDim / 2; ++i) dk[i] = dv[i] = 0.f;

  ptx::mbarrier_wait_parity(smem.kv_full(), kv_round & 1);
  if constexpr (Config::kStagedKeyStore) {
    // The previous tile's dK / dV stores have read their shared memory (the storing threads' bulk groups;
    // under kSplitDq one consumer's staged rows lie in buffers both write) before this tile writes it.
    if (kv_round > 0) {
      if (thread == 0) ptx::cp_async_bulk_wait_group_read<0>();
      __syncwarp();  // (bar.sync is aligned: its warps converged)
      ptx::bar_sync(kBackwardStagingFree, 128 * Config::kConsumers);
    }
  }
  backward_zero_key_rows<Config>(smem, seq, n0, thread_in_consumers);
  const std::uint32_t k_rows = smem.k() + 64 * consumer * Config::kRowBytes;
  const std::uint32_t v_rows = smem.v() + 64 * consumer * Config::kRowBytes;

  const int first_step = step;
  // kSkipHidden: the query blocks [mine_begin, mine_end) of the tile's walk see this consumer's keys (a part
  // of the walk at its start or end, or none); its other steps pass with no work.
  int mine_begin = seq.m_begin, mine_end = seq.m_end;
  if constexpr (Config::kSkipHidden) {
    const BackwardSequence mine = backward_sequence<64>(p, tile.batch, n0 + 64 * consumer);
    const bool any = mine.m_begin < mine.m_end;
    mine_begin = any ? max(mine.m_begin, seq.m_begin) : seq.m_end;
    mine_end = any ? max(min(mine.m_end, seq.m_end), mine_begin) : seq.m_end;
  }
  float* pending_dq = nullptr;       // the dQ accumulator rows of the previous step's staged tile (leader)
  int* pending_semaphore = nullptr;  // deterministic mode: its query block's semaphore and its turn there
  int pending_turn = 0;
  // The staged dQ tiles alternate between two buffers: by step, or under kSkipHidden by tile staged this tile
  // (a passed step stages none, and the buffer a step writes must not be the one whose reduction its barrier
  // issued; the previous tile's reads were waited for before this tile's first barrier).
  int dq_staged = 0;
  const auto dq_parity = [&] { return Config::kSkipHidden ? dq_staged : step; };
  const auto reduce_pending = [&] {
    backward_reduce_dq<Config>(pending_dq, smem.dq((dq_parity() - 1) % 2, consumer), pending_semaphore,
                               pending_turn);
  };
  for (int g = 0; g < p.group; ++g) {
    const int head = tile.head_kv * p.group + g;
    float* dq_rows = p.dq_accum + (static_cast<std::int64_t>(tile.batch) * p.heads + head) *
                                      static_cast<std::int64_t>(p.rows_padded) * Config::kHeadDim;
    [[maybe_unused]] const float slope_log2 = backward_alibi_slope_log2<Config>(p, tile.batch, head);
    for (int m = seq.m_begin; m < seq.m_end; ++m, ++step) {
      const int stage = step % Config::kStages;
      const std::uint32_t phase = (step / Config::kStages) & 1;
      float st[32], dpt[32];
      const int i0 = m * Config::kBlockM;
      if constexpr (Config::kDqWriter) {
        // This step's dQ staging buffer: the writer is done with its tile of two steps ago. (Waited for here,
        // where few registers are live.)
        if (step >= 2) ptx::mbarrier_wait_parity(smem.dq_empty(step % 2, consumer), ((step / 2) - 1) & 1);
      }
      ptx::mbarrier_wait_parity(smem.q_full(stage), phase);
      backward_zero_query_rows<Config>(p, smem, seq, stage, phase, i0, thread_in_consumers);
      if (Config::kSkipHidden && (m < mine_begin || m >= mine_end)) {
        // No row of the step sees this consumer's keys: the stage released with no work. (After the zeroing
        // above, whose aligned barrier both consumers reach from this one instruction.)
        ptx::mbarrier_arrive(smem.empty(stage));
        continue;
      }
      ptx::wgmma_fence();
      backward_gemm_transposed_scores<Config>(st, k_rows, smem.q(stage));
      ptx::wgmma_commit_group();
      ptx::mbarrier_wait_parity(smem.do_full(stage), phase);
      ptx::wgmma_fence();  // dpt's registers (last step's) before the GEMM overwrites them
      backward_gemm_transposed_scores<Config>(dpt, v_rows, smem.dout(stage));
      ptx::wgmma_commit_group();

      // Whether any (key, query) pair of the block is hidden: the window / causal band, or keys past the
      // sequence's (whose rows are zeros, so their scores are 0, not -inf).
      const bool masked = n0 + Config::kBlockN > seq.k ||
                          (p.window_left >= 0 && i0 + Config::kBlockM - 1 + offset - p.window_left > n0) ||
                          (p.window_right >= 0 && i0 + offset + p.window_right < n0 + Config::kBlockN - 1);

      std::uint32_t pf[4][4], dsf[4][4];
      if constexpr (Config::kGeneral) {
        // Dropout: the step's drop bits while both GEMMs run.
        const bool dropout = p.dropout_threshold != 0;
        std::uint32_t dropped = 0;
        if (dropout) {
          dropped = cuda_sm80::dropout_bits_transposed<8>(
              p.dropout_keys, p.dropout_offset, p.dropout_threshold,
              static_cast<std::int64_t>(tile.batch) * p.heads + head, i0 + 2 * (lane % 4),
              (n0 + key_local - lane / 4) / 8, lane);
        }
        ptx::wgmma_wait_group<0>();
        ptx::wgmma_fence_operand(st);
        ptx::wgmma_fence_operand(dpt);
        const std::uint32_t lse_at = smem.lse(stage) + 8 * (lane % 4);
        const std::uint32_t delta_at = smem.delta(stage) + 8 * (lane % 4);
        backward_modified_gradients<Config, 8>(p, st, dpt, lse_at, delta_at, i0 + 2 * (lane % 4),
                                               n0 + key_local, offset, seq.k, masked, slope_log2, dropout,
                                               dropped, pf, dsf);
      } else {
        ptx::wgmma_wait_group<1>();
        ptx::wgmma_fence_operand(st);
        // P^T. Column 8 c + 2 (lane % 4) + e of the accumulator is query row i0 + that; rows past the
        // sequence's queries have LSE = +inf (the preprocess), so their probabilities are 0.
        const std::uint32_t lse_at = smem.lse(stage) + 8 * (lane % 4);
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          const float2 lse = ptx::ld_shared_v2_f32(lse_at + 32 * c);
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            const float l = (r % 2 == 0) ? lse.x : lse.y;
            st[4 * c + r] = ptx::ex2_approx_ftz_f32(st[4 * c + r] * p.scale_log2 - l);
          }
        }
        if (masked) {
#pragma unroll
          for (int c = 0; c < 8; ++c) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
              const int j = n0 + key_local + 8 * (r / 2);
              const int diag = i0 + 8 * c + 2 * (lane % 4) + (r % 2) + offset;
              // (Spelled out, not backward_visible: the call changes the plain kernels' SASS, which the
              // timings in docs/performance.md are of.)
              const bool visible = j < seq.k && (p.window_left < 0 || j >= diag - p.window_left) &&
                                   (p.window_right < 0 || j <= diag + p.window_right);
              if (!visible) st[4 * c + r] = 0.f;
            }
          }
        }
        ptx::wgmma_wait_group<0>();
        ptx::wgmma_fence_operand(dpt);
        const std::uint32_t delta_at = smem.delta(stage) + 8 * (lane % 4);
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          const float2 d = ptx::ld_shared_v2_f32(delta_at + 32 * c);
          // Accumulator columns 16 kk .. 16 kk + 15 (c = 2 kk, 2 kk + 1) are the A fragment of k-step kk.
          const int kk = c / 2, r0 = 2 * (c % 2);
          pf[kk][r0] = pack_pair<Element>(st[4 * c], st[4 * c + 1]);
          pf[kk][r0 + 1] = pack_pair<Element>(st[4 * c + 2], st[4 * c + 3]);
          dsf[kk][r0] =
              pack_pair<Element>(st[4 * c] * (dpt[4 * c] - d.x), st[4 * c + 1] * (dpt[4 * c + 1] - d.y));
          dsf[kk][r0 + 1] = pack_pair<Element>(st[4 * c + 2] * (dpt[4 * c + 2] - d.x),
                                               st[4 * c + 3] * (dpt[4 * c + 3] - d.y));
        }
      }
      ptx::wgmma_fence();
      backward_gemm_key_gradient<Config>(dv, pf, smem.dout(stage));
      ptx::wgmma_commit_group();
      backward_gemm_key_gradient<Config>(dk, dsf, smem.q(stage));
      ptx::wgmma_commit_group();

      // dS^T into buffer step % 2: key rows key_local (and + 8), 128-byte rows of 64 query columns, 16-byte
      // unit u of row r at u ^ (r % 8). stmatrix: matrix (kk, j) is rows 16 warp + 8 (j % 2) of this
      // warpgroup's keys, unit 2 kk + j / 2; lane l addresses row l % 8 of matrix l / 8.
      {
        const int matrix = lane / 8;
        const int row = 64 * consumer + 16 * warp + 8 * (matrix % 2) + lane % 8;
        const std::uint32_t row_at = smem.ds(step % 2) + row * Config::kRowBytes;
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const int unit = 2 * kk + matrix / 2;
          ptx::stmatrix_x4(row_at + ((unit ^ (row % 8)) << 4), dsf[kk][0], dsf[kk][1], dsf[kk][2],
                           dsf[kk][3]);
        }
      }
      ptx::fence_proxy_async_shared_cta();
      // The previous step's reduction has read its staging buffer before anyone writes that buffer
      // again (next step); it was issued a step ago.
      if (!Config::kDqWriter && leader) ptx::cp_async_bulk_wait_group_read<0>();
      ptx::bar_sync(ds_barrier, ds_threads);
      if (!Config::kDqWriter && leader && pending_dq != nullptr) reduce_pending();

      float dq[32];
      ptx::wgmma_fence();
      if constexpr (Config::kSplitDq) {
        backward_gemm_dq<Config, Config::kBlockN>(dq, smem.ds(step % 2),
                                                  smem.k() + consumer * Config::kKChunkBytes);
      } else {
        backward_gemm_dq<Config, 64>(dq, smem.ds(step % 2) + 64 * consumer * Config::kRowBytes, k_rows);
      }
      ptx::wgmma_commit_group();
      // dV and dK done: the stage's Q and dO are no longer read.
      ptx::wgmma_wait_group<1>();
      ptx::mbarrier_arrive(smem.empty(stage));
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(dq);
      // Stage dQ's rows 16 warp + lane / 4 (+ 8), columns [64 consumer, + 64) under kSplitDq, else all 64, in
      // the accumulator's layout.
      {
        const std::uint32_t stage_at = smem.dq(dq_parity() % 2, consumer);
        const int row = 16 * warp + lane / 4;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          const int unit = (Config::kSplitDq ? 16 * consumer : 0) + 2 * c + (lane % 4) / 2;
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int r = row + 8 * half;
            ptx::st_shared_v2_f32(
                stage_at + r * Config::kHeadDim * 4 + 16 * cuda_sm80::dq_bulk_unit(unit, r) + 8 * (lane % 2),
                dq[4 * c + 2 * half], dq[4 * c + 2 * half + 1]);
          }
        }
      }
      ptx::fence_proxy_async_shared_cta();  // this thread's stores before the copy engine reads them
      if constexpr (Config::kDqWriter) {
        ptx::mbarrier_arrive(smem.dq_full(step % 2, consumer));
      } else {
        pending_dq = dq_rows + static_cast<std::int64_t>(i0) * Config::kHeadDim;
        ++dq_staged;
        if constexpr (Config::kDeterministic) {
          if (leader) {
            pending_semaphore =
                p.dq_semaphore + (static_cast<std::int64_t>(tile.batch) * p.heads + head) * p.m_blocks + m;
            pending_turn = backward_dq_turn<Config>(p, seq, tile.n_block, m, consumer);
          }
        }
      }
    }
  }
  // The last step's tile: staged by both warpgroups once both pass the barrier. (Its reads are waited for
  // before the next tile's first barrier, or at the kernel's end.)
  if (!Config::kDqWriter && step > first_step) {
    if (leader) ptx::cp_async_bulk_wait_group_read<0>();
    ptx::bar_sync(ds_barrier, ds_threads);
    // (kSkipHidden: a consumer whose steps were all passed has nothing staged.)
    if (leader && (!Config::kSkipHidden || pending_dq != nullptr)) reduce_pending();
  }
  // Every GEMM of the tile has completed (the last step waited for all): K / V may be overwritten.
  ptx::mbarrier_arrive(smem.kv_empty());
  const int first_key = n0 + 64 * consumer;
  // (kStagedKeyStore: in shared memory the tile's last steps are done with, BackwardShared::key_staging.)
  const std::uint32_t boxes = smem.key_staging(dq_parity(), consumer);
  backward_store_key_gradients<Config, Config::kGemmDim>(
      p, tile, seq, first_key, 0, 0, boxes, boxes + Config::kChunks * 8192, dk, dv, consumer, thread);
}

}  // namespace flashattn::detail::cuda_sm90
