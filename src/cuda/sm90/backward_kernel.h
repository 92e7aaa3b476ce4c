// The Hopper backward main kernel: warp-specialised, TMA + wgmma, one CTA per key block (64 keys per consumer
// warpgroup: 128 keys, or 192 at d = 64 from 2048 keys) of one (sequence, K/V head), walking every query
// block of 64 rows that sees the keys, for each query head of the K/V head's group. d = dv = 64 or 128 (this
// description); d = dv = 192 / 256 and (d, dv) = (192, 128) have a consumer of their own
// (BackwardConfig::kSplitHeadDim, backward_consumer_split_head_dim: 64-key blocks, the columns split between
// two consumers, no dQ) and their dQ from a kernel of its own (backward_dq_kernel.h).
//   warpgroup 0  producer: one thread loads K and V once, then Q, dO and the rows' LSE and D (the
//                preprocess's, cuda_sm80's aux kernels) into a ring of two stages;
//   warpgroups 1, 2 (, 3)  consumers: keys [64 w, 64 w + 64) of the block each. Per query block:
//                S^T = K Q^T and dP^T = V dO^T (both 64 keys x 64 rows, shared-memory operands),
//                P^T = exp2(S^T scale log2 e - LSE log2 e) (masked), dS^T = P^T (dP^T - D),
//                dV += P^T dO and dK += dS^T Q (P^T and dS^T from registers),
//                dS^T to shared memory, then dQ = dS K: at d = 128 columns [64 w, + 64) over all 128 keys
//                (both warpgroups' dS^T), at d = 64 all columns over the warpgroup's own keys
//                (BackwardConfig::kSplitDq); staged in shared memory and added to the fp32 dQ accumulator
//                by bulk reductions (cp.reduce.async.bulk), one per query block and staged tile, issued by
//                a consumer thread, or under kDqWriter by
//   warp 1       the dQ writer: one thread that issues them as the tiles are staged and, in deterministic
//                mode, waits for their turns and their completion, so that the consumers do not.
// dQ's accumulator rows keep cuda_sm80's DQ_BULK layout (16-byte units swizzled, dq_bulk_unit), so
// cuda_sm80's postprocess scales and converts it. dK is scaled by softmax_scale at the end; dK and dV
// are stored from registers (rows past the sequence's keys are not stored).
// Deterministic mode (BackwardConfig::kDeterministic): the reductions into a query block run in a fixed
// order, descending key blocks (backward_dq_turn), each waiting for its turn on the block's semaphore.
// Softcap / ALiBi / dropout (BackwardConfig::kGeneral): kernels of their own, whose probabilities and dS^T
// come from one pass over both score tiles (backward_modified_gradients; dropout's mask from the forward's
// Philox stream, cuda/sm80/dropout.h).
// Files: backward_config.h (configuration, parameters, shared memory), backward_steps.h (the step's GEMMs,
// stores, zeroing and the general kernels' elementwise math, shared with the dQ pass), backward_consumer.h (d
// = 64 / 128), backward_split_consumer.h (d >= 192); here the producer, the tile walk and the kernel.
#pragma once

#include <cstdint>

#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/sm90/backward_config.h"
#include "cuda/sm90/backward_consumer.h"
#include "cuda/sm90/backward_split_consumer.h"
#include "cuda/sm90/backward_walk.h"  // backward_sequence

namespace flashattn::detail::cuda_sm90 {

template <class Config>
__device__ void backward_producer(const BackwardKernelParams& p, const BackwardShared<Config>& smem,
                                  const BackwardTile& tile, const BackwardSequence& seq, int& step,
                                  int kv_round) {
  const int n0 = tile.n_block * Config::kBlockN;
  // The previous tile's consumers are done with K / V (their last GEMMs waited for).
  if (kv_round > 0) ptx::mbarrier_wait_parity(smem.kv_empty(), (kv_round - 1) & 1);
  ptx::mbarrier_arrive_expect_tx(smem.kv_full(), Config::kKBytes + Config::kVBytes);
#pragma unroll
  for (int c = 0; c < (Config::kChunks > Config::kChunksV ? Config::kChunks : Config::kChunksV); ++c) {
    if (c < Config::kChunks) {
      ptx::tma_load_4d(smem.k() + c * Config::kKChunkBytes, &p.maps.k, smem.kv_full(), 64 * c,
                       seq.k_row0 + n0, tile.head_kv, seq.map_batch);
    }
    if (c < Config::kChunksV) {
      ptx::tma_load_4d(smem.v() + c * Config::kKChunkBytes, &p.maps.v, smem.kv_full(), 64 * c,
                       seq.k_row0 + n0, tile.head_kv, seq.map_batch);
    }
  }
  for (int g = 0; g < p.group; ++g) {
    const int head = tile.head_kv * p.group + g;
    const std::int64_t stats_row0 =
        (static_cast<std::int64_t>(tile.batch) * p.heads + head) * static_cast<std::int64_t>(p.rows_padded);
    for (int m = seq.m_begin; m < seq.m_end; ++m, ++step) {
      const int stage = step % Config::kStages;
      if (step >= Config::kStages) {
        ptx::mbarrier_wait_parity(smem.empty(stage), ((step / Config::kStages) - 1) & 1);
      }
      const int row = seq.q_row0 + m * Config::kBlockM;
      ptx::mbarrier_arrive_expect_tx(smem.q_full(stage), Config::kQBytes + 2 * Config::kStatsBytes);
#pragma unroll
      for (int c = 0; c < Config::kChunks; ++c) {
        ptx::tma_load_4d(smem.q(stage) + c * Config::kQChunkBytes, &p.maps.q, smem.q_full(stage), 64 * c, row,
                         head, seq.map_batch);
      }
      const std::int64_t stats = stats_row0 + m * Config::kBlockM;
      ptx::bulk_load(smem.lse(stage), p.lse_log2 + stats, Config::kStatsBytes, smem.q_full(stage));
      ptx::bulk_load(smem.delta(stage), p.delta + stats, Config::kStatsBytes, smem.q_full(stage));
      ptx::mbarrier_arrive_expect_tx(smem.do_full(stage), Config::kDoBytes);
#pragma unroll
      for (int c = 0; c < Config::kChunksV; ++c) {
        ptx::tma_load_4d(smem.dout(stage) + c * Config::kQChunkBytes, &p.maps.dout, smem.do_full(stage),
                         64 * c, row, head, seq.map_batch);
      }
    }
  }
}

// Calls work(tile, seq, kv_round) for each of this CTA's tiles that has keys (first_index, then
// backward_tile_index's order), kv_round counting those. Each role runs its own walk after its setmaxnreg
// (one walk shared by both, ptxas cannot keep their register counts apart and ignores setmaxnreg).
template <class Config, class Work>
__device__ __forceinline__ void backward_for_each_tile(const BackwardKernelParams& p, int first_index,
                                                       Work&& work) {
  int kv_round = 0;
  for (int round = 0;; ++round) {
    const int index = round == 0 ? first_index : backward_tile_index(round);
    if (index >= p.total_tiles) break;
    const BackwardTile tile = backward_tile<Config>(p, index);
    const BackwardSequence seq =
        backward_sequence<Config::kBlockN>(p, tile.batch, tile.n_block * Config::kBlockN);
    // Nothing of this block's keys exists in the sequence: no dK / dV rows to write.
    if (tile.n_block * Config::kBlockN >= seq.k_allocated) continue;
    work(tile, seq, kv_round);
    ++kv_round;
  }
}

template <class Config>
__global__ void __launch_bounds__(Config::kThreads, 1)
    backward_kernel(const __grid_constant__ BackwardKernelParams p) {
  extern __shared__ unsigned char shared_buffer[];
  const std::uint32_t raw = ptx::cvta_to_shared(shared_buffer);
  const BackwardShared<Config> smem{(raw + 1023u) & ~1023u};
  if (threadIdx.x == 0) {
    smem.init_barriers();
    // Deterministic mode (one CTA per tile): tiles claimed in increasing order, each by a running CTA, so a
    // turn's wait (for lower tiles) always ends, whatever order the hardware starts CTAs in.
    if constexpr (Config::kDeterministic) {
      ptx::st_shared_b32(smem.claimed_tile(), static_cast<std::uint32_t>(atomicAdd(p.tile_counter, 1ull)));
    }
  }
  __syncthreads();
  const int first_index = Config::kDeterministic ? static_cast<int>(ptx::ld_shared_b32(smem.claimed_tile()))
                                                 : static_cast<int>(blockIdx.x);
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  int step = 0;  // the ring's and the staging buffers' position, continued from tile to tile
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Config::kProducerRegisters>();
    if (threadIdx.x == 0) {
      backward_for_each_tile<Config>(
          p, first_index, [&](const BackwardTile& tile, const BackwardSequence& seq, int kv_round) {
            backward_producer<Config>(p, smem, tile, seq, step, kv_round);
          });
    } else if (Config::kDqWriter && threadIdx.x == 32) {
      if constexpr (Config::kDqWriter) {
        backward_for_each_tile<Config>(p, first_index,
                                       [&](const BackwardTile& tile, const BackwardSequence& seq, int) {
                                         backward_dq_writer<Config>(p, smem, tile, seq, step);
                                       });
      }
    }
  } else {
    ptx::setmaxnreg_inc<Config::kConsumerRegisters>();
    // The consumer index from a shuffle of lane 0, which ptxas knows to be warp-uniform (threadIdx.x / 128 it
    // cannot prove so): the shared-memory addresses derived from it, and through them the GEMM descriptors,
    // then stay on the uniform datapath (R2UR in the d64 / d128 / d256 kernels 112 / 75 / 115 -> 56 / 28 /
    // 28; 0.95-0.98x the time at d128 / d256 from 1k, level at d64, s64_skip_uniform.sh).
    backward_for_each_tile<Config>(
        p, first_index, [&](const BackwardTile& tile, const BackwardSequence& seq, int kv_round) {
          // (Shuffled here, not once before the walk: that form leaves the d64 three-consumer kernel 12 bytes
          // of spills, this one none.)
          const int consumer = __shfl_sync(0xffffffffu, warpgroup, 0) - 1;
          if constexpr (Config::kSplitHeadDim) {
            // (Where the consumers' column counts differ, each is an instance of its own.)
            if constexpr (Config::kConsumerInstances) {
              if (consumer == 0) {
                backward_consumer_split_head_dim<Config, 0>(p, smem, tile, seq, 0, step, kv_round);
              } else {
                backward_consumer_split_head_dim<Config, 1>(p, smem, tile, seq, 1, step, kv_round);
              }
            } else {
              backward_consumer_split_head_dim<Config, -1>(p, smem, tile, seq, consumer, step, kv_round);
            }
          } else {
            backward_consumer<Config>(p, smem, tile, seq, consumer, step, kv_round);
          }
        });
    // The last reductions' reads of shared memory complete before the CTA leaves.
    ptx::cp_async_bulk_wait_group_read<0>();
  }
}

}  // namespace flashattn::detail::cuda_sm90
