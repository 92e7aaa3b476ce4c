// The Hopper backward's dQ pass (d >= 192; BackwardConfig::kSplitHeadDim): dQ = scale dS K for one block
// of query rows per CTA, walking the keys, while the main kernel (backward_kernel.h) computes dK and dV only.
// The main kernel's 64-key blocks would add dQ into an fp32 accumulator once per key block: at d = 256 those
// reductions were half its time (session 61: 64 KB into L2 per 64 x 64 step). Here dQ stays in registers
// and is written once, converted: no accumulator, no reductions, no postprocess, the same sums in the same
// order on every call (deterministic). The price is S and dP computed a second time (3 GEMMs here beside the
// main kernel's 4, against 5 in one kernel); measured 1.12-1.35x the speed of the atomics (s62_dqpass.sh).
//   warpgroup 0  producer: one thread loads the CTA's Q and dO (128 rows) once, then K and V of each
//                key block the rows see (backward_query_walk) into K stages (two) and a V stage (one);
//   warpgroups 1, 2  consumers: query rows [64 w, + 64) of the block each. Per key block of 64 keys:
//                S = Q K^T and dP = dO V^T (m64n64, shared-memory operands), P = exp2(S scale log2 e - LSE
//                log2 e) (masked), dS = P (dP - D) (softcap / ALiBi / dropout: as
//                backward_modified_gradients), dQ += dS K (m64n256 / m64n192, dS from registers, K N-major).
//                The next block's S and dP are issued before the last dQ GEMM is waited for, so the tensor
//                cores stay busy through the softmax.
// The LSE (base 2) and D are the preprocess's (cuda_sm80's aux kernels), as for the main kernel; Q, dO, K, V
// are read through the main kernel's tensor maps (64-row boxes).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda/sm90/backward_steps.h"

namespace flashattn::detail::cuda_sm90 {

template <class Main>
struct BackwardDqConfig {
  using Element = typename Main::Element;
  static constexpr int kHeadDim = Main::kHeadDim;    // of Q, K, dQ
  static constexpr int kHeadDimV = Main::kHeadDimV;  // of dO, V
  static constexpr int kGemmDim = kHeadDim;          // (no narrowed GEMMs: backward_steps.h's defaults)
  static_assert(Main::kSplitHeadDim, "the dQ pass is d >= 192's (BackwardConfig::kSplitHeadDim)");
  static constexpr bool kGeneral = Main::kGeneral;
  static constexpr int kConsumers = 2;
  static constexpr int kBlockM = 64 * kConsumers;  // query rows per CTA
  static constexpr int kBlockN = Main::kBlockN;    // keys per step: the K / V maps' boxes
  static constexpr int kMapRows = Main::kBlockM;   // the Q / dO maps' boxes
  static_assert(kBlockN == 64 && kBlockM % kMapRows == 0, "64-key steps, whole Q / dO boxes");
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kRowBytes = 128;
  static constexpr int kChunks = kHeadDim / 64;
  static constexpr int kChunksV = kHeadDimV / 64;
  static constexpr int kQChunkBytes = kBlockM * kRowBytes;
  static constexpr int kQBytes = kChunks * kQChunkBytes;
  static constexpr int kDoBytes = kChunksV * kQChunkBytes;
  static constexpr int kKChunkBytes = kBlockN * kRowBytes;
  static constexpr int kKBytes = kChunks * kKChunkBytes;
  static constexpr int kVBytes = kChunksV * kKChunkBytes;
  // Q and dO (64 KB each at d = 256) stay; K has two stages, V one (two stages of each, 128 KB, would not
  // fit beside them at d = 256): V's next block loads once both consumers' dP GEMMs are done, behind the
  // softmax, dQ's GEMM and the next S.
  static constexpr int kKStages = 2;
  static constexpr int kQOffset = 0;
  static constexpr int kDoOffset = kQOffset + kQBytes;
  static constexpr int kKOffset = kDoOffset + kDoBytes;
  static constexpr int kVOffset = kKOffset + kKStages * kKBytes;
  static constexpr int kBarrierOffset = kVOffset + kVBytes;
  // q_full (Q and dO), per K stage k_full, k_empty, then v_full, v_empty.
  static constexpr int kBarriers = 1 + 2 * kKStages + 2;
  static constexpr int kSmemBytes = kBarrierOffset + 8 * kBarriers + 1024;  // + the swizzle atom's alignment
  static_assert(kSmemBytes <= 227 * 1024, "shared memory of one CTA");
  // Consumers: dQ (d / 2: 128 at d = 256), S and dP (32 + 32), dS's fragments (16) at the peak. As the main
  // kernel's.
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = 240;
  static_assert((kLaunchRegisters - kProducerRegisters) * 128 >=
                    (kConsumerRegisters - kLaunchRegisters) * 128 * kConsumers,
                "the consumers' setmaxnreg increase must fit in what the producer's decrease frees");
};

template <class Config>
struct BackwardDqShared {
  std::uint32_t base;  // 1024-byte aligned
  __device__ std::uint32_t q() const { return base + Config::kQOffset; }
  __device__ std::uint32_t dout() const { return base + Config::kDoOffset; }
  __device__ std::uint32_t k(int stage) const { return base + Config::kKOffset + stage * Config::kKBytes; }
  __device__ std::uint32_t v() const { return base + Config::kVOffset; }
  __device__ std::uint32_t barrier(int index) const { return base + Config::kBarrierOffset + 8 * index; }
  __device__ std::uint32_t q_full() const { return barrier(0); }
  __device__ std::uint32_t k_full(int stage) const { return barrier(1 + stage); }
  __device__ std::uint32_t k_empty(int stage) const { return barrier(1 + Config::kKStages + stage); }
  __device__ std::uint32_t v_full() const { return barrier(1 + 2 * Config::kKStages); }
  __device__ std::uint32_t v_empty() const { return barrier(2 + 2 * Config::kKStages); }

  __device__ void init_barriers() const {
    ptx::mbarrier_init(q_full(), 1);
    for (int stage = 0; stage < Config::kKStages; ++stage) {
      ptx::mbarrier_init(k_full(stage), 1);
      // Every consumer thread arrives once its reads are done (racecheck orders a thread's reads before the
      // next copy through its own arrival; see BackwardShared::init_barriers).
      ptx::mbarrier_init(k_empty(stage), 128 * Config::kConsumers);
    }
    ptx::mbarrier_init(v_full(), 1);
    ptx::mbarrier_init(v_empty(), 128 * Config::kConsumers);
    ptx::fence_mbarrier_init();
  }
};

// The CTA's (query block, head, sequence), walked from the last: the last heads first, which the main kernel
// (key blocks fastest, heads ascending) left in L2, and within a head the last query blocks first, the
// longest under a causal mask.
struct BackwardDqTile {
  int m_block, head, batch;
};
__device__ __forceinline__ BackwardDqTile backward_dq_tile(const BackwardKernelParams& p) {
  const int index = p.q_blocks * p.heads * p.batch - 1 - static_cast<int>(blockIdx.x);
  const int rest = index / p.q_blocks;
  return {index % p.q_blocks, rest % p.heads, rest / p.heads};
}

template <class Config>
__device__ void backward_dq_producer(const BackwardKernelParams& p, const BackwardDqShared<Config>& smem,
                                     const BackwardDqTile& tile, const BackwardSequence& seq,
                                     const BackwardQueryWalk& walk) {
  const int head_kv = tile.head / p.group;
  const int row = seq.q_row0 + tile.m_block * Config::kBlockM;
  ptx::mbarrier_arrive_expect_tx(smem.q_full(), Config::kQBytes + Config::kDoBytes);
#pragma unroll
  for (int c = 0; c < (Config::kChunks > Config::kChunksV ? Config::kChunks : Config::kChunksV); ++c) {
#pragma unroll
    for (int box = 0; box < Config::kBlockM / Config::kMapRows; ++box) {
      const int at = c * Config::kQChunkBytes + box * Config::kMapRows * Config::kRowBytes;
      if (c < Config::kChunks) {
        ptx::tma_load_4d(smem.q() + at, &p.maps.q, smem.q_full(), 64 * c, row + box * Config::kMapRows,
                         tile.head, seq.map_batch);
      }
      if (c < Config::kChunksV) {
        ptx::tma_load_4d(smem.dout() + at, &p.maps.dout, smem.q_full(), 64 * c, row + box * Config::kMapRows,
                         tile.head, seq.map_batch);
      }
    }
  }
  for (int step = 0; step < walk.n_end - walk.n_begin; ++step) {
    const int key = seq.k_row0 + (walk.n_begin + step) * Config::kBlockN;
    const int stage = step % Config::kKStages;
    if (step >= Config::kKStages) {
      ptx::mbarrier_wait_parity(smem.k_empty(stage), ((step / Config::kKStages) - 1) & 1);
    }
    ptx::mbarrier_arrive_expect_tx(smem.k_full(stage), Config::kKBytes);
#pragma unroll
    for (int c = 0; c < Config::kChunks; ++c) {
      ptx::tma_load_4d(smem.k(stage) + c * Config::kKChunkBytes, &p.maps.k, smem.k_full(stage), 64 * c, key,
                       head_kv, seq.map_batch);
    }
    if (step >= 1) ptx::mbarrier_wait_parity(smem.v_empty(), (step - 1) & 1);
    ptx::mbarrier_arrive_expect_tx(smem.v_full(), Config::kVBytes);
#pragma unroll
    for (int c = 0; c < Config::kChunksV; ++c) {
      ptx::tma_load_4d(smem.v() + c * Config::kKChunkBytes, &p.maps.v, smem.v_full(), 64 * c, key, head_kv,
                       seq.map_batch);
    }
  }
}

// One step's dS for a consumer's 64 query rows x 64 keys, packed as the A fragments of dQ's GEMM. Element
// 4 c + r of the S / dP accumulators is row `row` + 8 (r / 2), key `key` + 8 c + r % 2. kGeneral: from
// both tiles (backward_general_element, the modifiers chosen once a step, hidden elements zeroed in a pass of
// their own; dropout: bit 4 c + r of `dropped`, cuda_sm80::dropout_bits_rows, marks the dropped elements);
// otherwise st holds P already (computed while dP's GEMM ran).
template <class Config>
__device__ __forceinline__ void backward_dq_gradient(const BackwardKernelParams& p, float (&st)[32],
                                                     float (&dp)[32], const float (&lse)[2],
                                                     const float (&delta)[2], int row, int key, int offset,
                                                     bool masked, float slope_log2, int keys, bool dropout,
                                                     std::uint32_t dropped, std::uint32_t (&dsf)[4][4]) {
  using Element = typename Config::Element;
  if constexpr (Config::kGeneral) {
    if (dropout) {
#pragma unroll
      for (int i = 0; i < 32; ++i) dp[i] = backward_dropout_keep(p, dp[i], dropped, i);
    }
    backward_general_step(p, slope_log2, [&]<bool kSoftcap, bool kAlibi>() {
#pragma unroll
      for (int c = 0; c < 8; ++c) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          backward_general_element<kSoftcap, kAlibi>(
              p, st[4 * c + r], dp[4 * c + r], lse[r / 2], delta[r / 2],
              row + 8 * (r / 2) + offset - (key + 8 * c + (r % 2)), slope_log2);
        }
      }
    });
    if (masked) {
#pragma unroll
      for (int c = 0; c < 8; ++c) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          if (!backward_visible(p, key + 8 * c + (r % 2), row + 8 * (r / 2) + offset, keys))
            dp[4 * c + r] = 0.f;
        }
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < 32; ++i) dp[i] = st[i] * (dp[i] - delta[(i % 4) / 2]);
  }
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    // Keys 16 kk .. + 15 (c = 2 kk, 2 kk + 1) are the A fragment of k-step kk: rows r, r + 8 of keys 2 t,
    // then of keys 2 t + 8.
    const int kk = c / 2, r0 = 2 * (c % 2);
    dsf[kk][r0] = pack_pair<Element>(dp[4 * c], dp[4 * c + 1]);
    dsf[kk][r0 + 1] = pack_pair<Element>(dp[4 * c + 2], dp[4 * c + 3]);
  }
}

template <class Config>
__device__ void backward_dq_consumer(const BackwardKernelParams& p, const BackwardDqShared<Config>& smem,
                                     const BackwardDqTile& tile, const BackwardSequence& seq,
                                     const BackwardQueryWalk& walk, int consumer) {
  using Element = typename Config::Element;
  const int thread = static_cast<int>(threadIdx.x) % 128;
  const int warp = thread / 32, lane = thread % 32;
  const int thread_in_consumers = static_cast<int>(threadIdx.x) - 128;
  const int i0 = tile.m_block * Config::kBlockM;
  const int first = i0 + 64 * consumer;          // this consumer's first query row
  const int row = first + 16 * warp + lane / 4;  // this thread's rows: row, row + 8
  const int offset = seq.k - seq.q;
  const int steps = walk.n_end - walk.n_begin;

  float dq[Config::kHeadDim / 2];
#pragma unroll
  for (int i = 0; i < Config::kHeadDim / 2; ++i) dq[i] = 0.f;

  if (steps > 0) {
    // Rows past the sequence's queries: P = 0 (as the preprocess's LSE of +inf there).
    const std::int64_t stats = (static_cast<std::int64_t>(tile.batch) * p.heads + tile.head) * p.rows_padded;
    float lse[2], delta[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = row + 8 * half;
      lse[half] = r < seq.q ? p.lse_log2[stats + r] : INFINITY;
      delta[half] = r < seq.q ? p.delta[stats + r] : 0.f;
    }
    [[maybe_unused]] const float slope_log2 = backward_alibi_slope_log2<Config>(p, tile.batch, tile.head);
    const std::uint32_t q_rows = smem.q() + 64 * consumer * Config::kRowBytes;
    const std::uint32_t do_rows = smem.dout() + 64 * consumer * Config::kRowBytes;
    ptx::mbarrier_wait_parity(smem.q_full(), 0);
    // Query rows past seqused_q may hold anything (backward_zero_query_rows): zeros, so that their S and dP
    // are not NaN (0 x NaN is NaN).
    if (p.seqused_q != nullptr && i0 + Config::kBlockM > seq.q) {
      backward_zero_tile_pair_rows<Config, Config::kQChunkBytes>(smem.q(), smem.dout(), seq.q - i0,
                                                                 Config::kBlockM, thread_in_consumers);
    }
    for (int step = 0; step < steps; ++step) {
      const int n0 = (walk.n_begin + step) * Config::kBlockN;
      const int stage = step % Config::kKStages;
      ptx::mbarrier_wait_parity(smem.k_full(stage), (step / Config::kKStages) & 1);
      if (n0 + Config::kBlockN > seq.k) {
        // Key rows past the sequence's: zeros (backward_zero_key_rows), in both stages it reads.
        ptx::mbarrier_wait_parity(smem.v_full(), step & 1);
        backward_zero_tile_pair_rows<Config, Config::kKChunkBytes>(smem.k(stage), smem.v(), seq.k - n0,
                                                                   Config::kBlockN, thread_in_consumers);
      }
      float st[32], dp[32];
      ptx::wgmma_fence();
      backward_gemm_transposed_scores<Config, 64, Config::kQChunkBytes, Config::kKChunkBytes>(st, q_rows,
                                                                                              smem.k(stage));
      ptx::wgmma_commit_group();
      ptx::mbarrier_wait_parity(smem.v_full(), step & 1);
      ptx::wgmma_fence();  // dp's registers (read by the last step's dS) before the GEMM overwrites them
      backward_gemm_transposed_scores<Config, 64, Config::kQChunkBytes, Config::kKChunkBytes,
                                      Config::kHeadDimV>(dp, do_rows, smem.v());
      ptx::wgmma_commit_group();
      if (step > 0) {
        // The previous step's dQ GEMM is done: its K stage may be loaded again.
        ptx::wgmma_wait_group<2>();
        ptx::mbarrier_arrive(smem.k_empty((step - 1) % Config::kKStages));
      }
      // Whether any (query, key) pair of this consumer's rows and the block is hidden (backward_consumer's
      // test, 64 rows).
      const bool masked = n0 + Config::kBlockN > seq.k ||
                          (p.window_left >= 0 && first + 63 + offset - p.window_left > n0) ||
                          (p.window_right >= 0 && first + offset + p.window_right < n0 + Config::kBlockN - 1);
      const int key = n0 + 2 * (lane % 4);
      std::uint32_t dsf[4][4];
      std::uint32_t dropped = 0;  // kGeneral with dropout: the step's drop bits, while both GEMMs run
      if (Config::kGeneral && p.dropout_threshold != 0) {
        dropped = cuda_sm80::dropout_bits_rows(p.dropout_keys, p.dropout_offset, p.dropout_threshold,
                                               static_cast<std::int64_t>(tile.batch) * p.heads + tile.head,
                                               row, n0 / 8, lane);
      }
      if constexpr (!Config::kGeneral) {
        ptx::wgmma_wait_group<1>();
        ptx::wgmma_fence_operand(st);
#pragma unroll
        for (int c = 0; c < 8; ++c) {
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            st[4 * c + r] = ptx::ex2_approx_ftz_f32(st[4 * c + r] * p.scale_log2 - lse[r / 2]);
            if (masked && !backward_visible(p, key + 8 * c + (r % 2), row + 8 * (r / 2) + offset, seq.k)) {
              st[4 * c + r] = 0.f;
            }
          }
        }
      }
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(st);
      ptx::wgmma_fence_operand(dp);
      ptx::mbarrier_arrive(smem.v_empty());  // this thread's dP read V
      backward_dq_gradient<Config>(p, st, dp, lse, delta, row, key, offset, masked, slope_log2, seq.k,
                                   Config::kGeneral && p.dropout_threshold != 0, dropped, dsf);
      ptx::wgmma_fence();
      backward_gemm_key_gradient<Config, Config::kKChunkBytes>(dq, dsf, smem.k(stage));
      ptx::wgmma_commit_group();
    }
    ptx::wgmma_wait_group<0>();
    ptx::wgmma_fence_operand(dq);
  }
  // Rows past the sequence's queries (up to its allocated rows) get zeros, as the postprocess writes.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    if (row + 8 * half >= seq.q) {
#pragma unroll
      for (int c = 0; c < Config::kHeadDim / 8; ++c) dq[4 * c + 2 * half] = dq[4 * c + 2 * half + 1] = 0.f;
    }
  }
  Element* head = static_cast<Element*>(p.dq) + tile.batch * p.dq_batch_stride + tile.head * p.dq_head_stride;
  backward_store_rows<Config, Config::kHeadDim>(head, p.dq_row_stride, seq.q_row0, first, seq.q_allocated, dq,
                                                p.scale, thread, 0, p.qk_cols);
}

template <class Config>
__global__ void __launch_bounds__(Config::kThreads, 1)
    backward_dq_kernel(const __grid_constant__ BackwardKernelParams p) {
  extern __shared__ unsigned char shared_buffer[];
  const std::uint32_t raw = ptx::cvta_to_shared(shared_buffer);
  const BackwardDqShared<Config> smem{(raw + 1023u) & ~1023u};
  const BackwardDqTile tile = backward_dq_tile(p);
  const BackwardSequence seq = backward_sequence<Config::kBlockN>(p, tile.batch, 0);
  // A query block past the sequence's rows (varlen: of a shorter sequence) has nothing to write.
  if (tile.m_block * Config::kBlockM >= seq.q_allocated) return;
  const BackwardQueryWalk walk =
      backward_query_walk<Config::kBlockN>(p, seq, tile.m_block * Config::kBlockM, Config::kBlockM);
  if (threadIdx.x == 0) smem.init_barriers();
  __syncthreads();
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Config::kProducerRegisters>();
    if (threadIdx.x == 0 && walk.n_end > walk.n_begin) backward_dq_producer<Config>(p, smem, tile, seq, walk);
  } else {
    ptx::setmaxnreg_inc<Config::kConsumerRegisters>();
    // Warp-uniform to ptxas, as the main kernel's consumers (backward_kernel.h): R2UR 78 -> 15.
    backward_dq_consumer<Config>(p, smem, tile, seq, walk, __shfl_sync(0xffffffffu, warpgroup, 0) - 1);
  }
}

}  // namespace flashattn::detail::cuda_sm90
