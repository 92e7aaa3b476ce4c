// The Hopper backward main kernel: warp-specialised, TMA + wgmma, one CTA per key block (64 keys per consumer
// warpgroup: 128 keys, or 192 at d = 64 from 2048 keys) of one (sequence, K/V head), walking every query
// block of 64 rows that sees the keys, for each query head of the K/V head's group. d = dv = 64 or 128 (this
// description); d = dv = 256 has a consumer of its own (BackwardConfig::kSplitHeadDim,
// backward_consumer_split_head_dim: 64-key blocks, the columns split between two consumers, no dQ) and its dQ
// from a kernel of its own (backward_dq_kernel.h).
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
// Softcap / ALiBi (BackwardConfig::kScoreMods): kernels of their own, whose probabilities and dS^T come
// from one pass over both score tiles (backward_modified_gradients).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda/ptx/approx_math.h"
#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/ptx/wgmma.h"
#include "cuda/sm80/backward_config.h"  // dq_bulk_unit: the dQ accumulator's layout, shared with cuda_sm80
#include "cuda/sm90/backward_walk.h"    // BackwardSequence, backward_sequence, backward_last_block_reaching
#include "cuda/sm90/epilogue.h"         // pack_pair

// STAGES3 (default 1): three stages of the Q / dO ring in the d = 64 kernels of two consumers. Measured
// (s63_d64_stages.sh, H200, against two stages in one call): 0.962-0.993x the time at 512-2k tokens.
#ifndef FLASHATTN_SM90_BWD_D64_STAGES3
#define FLASHATTN_SM90_BWD_D64_STAGES3 1
#endif

namespace flashattn::detail::cuda_sm90 {

template <int kHeadDim_, typename Element_, int kConsumers_ = 2, bool kDeterministic_ = false,
          bool kScoreMods_ = false>
struct BackwardConfig {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;  // d == dv
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256,
                "the backward kernel's layouts are for d = dv = 64, 128 or 256");
  // SPLIT_HEAD_DIM (d = 256; backward_consumer_split_head_dim): 64 keys a CTA, whose dK and dV (64 x 256
  // each, 256 registers a thread for one warpgroup) the two consumers split by columns, 128 each. Each
  // consumer computes the scores of its 32 query rows of a block over all 64 keys, adds their share of dV and
  // dK from its registers (OWN_FIRST) and stages P^T and dS^T in shared memory for the other. No dQ: the dQ
  // pass computes it (backward_dq_kernel.h). Adding it here, to an fp32 accumulator from registers by atomics
  // (session 61), took half this kernel's time (64 KB into L2 per 64 x 64 step); the dQ pass, which computes
  // S and dP a second time, ran 1.12-1.35x its speed (s62_dqpass.sh). Both kernels write each output once, in
  // a fixed order: deterministic mode is the default mode. One CTA per tile. (Measured and not kept, session
  // 62: one consumer's dV and the other's dK, clusters sharing Q / dO by multicast, the next scores issued
  // early; session 63: the next scores issued before the dV / dK GEMMs are waited for, EARLY_SCORES.)
  static constexpr bool kSplitHeadDim = kHeadDim == 256;
  static constexpr int kBlockM = kBackwardQueryRows;  // query rows per step (backward_walk.h)
  static_assert(kBlockM == cuda_sm80::kBackwardBlockM,
                "the deterministic semaphores count blocks of kBlockM rows");
  // One consumer warpgroup per 64 keys of the CTA's block: two at d = 128; two or three at d = 64
  // (run_backward: three from 2048 keys, where a step's chain of GEMM waits, softmax and barriers, the d64
  // kernel's limit, interleaves with a third warpgroup's: +7-12% at 2k-8k keys on an H200; below, the 192-key
  // blocks' padding and fewer CTAs cost more, 0.92 at 512, s59_d64.sh).
  static constexpr int kConsumers = kConsumers_;
  static constexpr int kBlockN = kSplitHeadDim ? 64 : 64 * kConsumers;  // keys per CTA
  static constexpr int kThreads = 128 * (kConsumers + 1);
  // The ring of Q, dO, LSE, D. STAGES3 (d = 64, two consumers: 176 KB with three): the loads of short
  // sequences, whose stalls are mostly the long scoreboard (s62_stalls_d64_d128.sh), further ahead.
  static constexpr int kStages =
      FLASHATTN_SM90_BWD_D64_STAGES3 != 0 && kHeadDim == 64 && kConsumers_ == 2 ? 3 : 2;
  static constexpr int kRowBytes = 128;
  static constexpr int kChunks = kHeadDim / 64;  // 64-column 128B-swizzled chunks of a row
  // Deterministic mode: one CTA per tile, claimed from a counter in increasing order (backward_kernel), and
  // each dQ reduction in its turn (backward_reduce_dq).
  static constexpr bool kDeterministic = kDeterministic_;
  static_assert(!kSplitHeadDim || (kConsumers == 2 && !kDeterministic),
                "d = 256: two consumers splitting the columns; deterministic without a mode of its own");
  // SCORE_MODS: softcap and / or ALiBi modify the scores before the softmax (a tanh and its derivative, a
  // distance bias per element): the probabilities wait for dP^T's GEMM too, so that each element's P^T and
  // dS^T come from one pass and the tanh's derivative needs no registers of its own (backward_consumer).
  // Kernels of their own: the plain ones keep the exp2 overlapped with dP^T's GEMM.
  static constexpr bool kScoreMods = kScoreMods_;
  // PERSISTENT (backward_tile_index): at most one CTA a SM walking the tiles. Not with three consumers, where
  // it measured 0.94-1.10x the time of one CTA per tile (s60_persistent.sh: 1.10 at d64 non-causal 2k, 1.07
  // causal 8k) against 0.92-1.00x with two; not in deterministic mode (tiles claimed in order). The launch
  // makes it persistent only where all tiles have the same work (launch_backward).
  static constexpr bool kPersistent = kConsumers == 2 && !kDeterministic && !kSplitHeadDim;
  static constexpr int kKChunkBytes = kBlockN * kRowBytes;
  static constexpr int kQChunkBytes = kBlockM * kRowBytes;
  static constexpr int kKBytes = kChunks * kKChunkBytes;
  static constexpr int kQBytes = kChunks * kQChunkBytes;
  static constexpr int kDsBytes = kBlockN * kBlockM * 2;   // dS^T: kBlockN key rows of 64 query columns
  static constexpr int kDqBytes = kBlockM * kHeadDim * 4;  // the fp32 dQ tile
  // kSplitDq (d = 128): each consumer computes dQ's columns [64 w, + 64) over all 128 keys, from both
  // consumers' dS^T (a barrier of both a step), into one staged tile that one thread reduces. Otherwise
  // (d = 64) each consumer computes the whole tile over its own 64 keys (32 accumulator registers either
  // way), stages it apart and reduces it itself: no barrier between the consumers, twice the reductions.
  static constexpr bool kSplitDq = kHeadDim == 128;
  static_assert(!kSplitDq || kConsumers == 2, "kSplitDq splits dQ's 128 columns between two consumers");
  // Two steps' staged dQ tiles (per consumer); none at d = 256 (added from registers).
  static constexpr int kDqBuffers = kSplitHeadDim ? 0 : 2 * (kSplitDq ? 1 : kConsumers);
  // d = 256: P^T staged for dV's GEMM as dS^T is for dK's and dQ's (two buffers each, steps alternate).
  static constexpr int kPBuffers = kSplitHeadDim ? 2 : 0;
  // DQ_WRITER: the reductions issued by a thread of the producer warpgroup (backward_dq_writer), the staging
  // buffers handed over through mbarriers; in deterministic mode at d = 128 only, where the consumers'
  // waits for the reductions' turns and completion cost 20-26% of the time (s60_writer.sh: 0.81-0.84x the
  // time with the writer). Measured and not kept: the default mode at d = 128 (0.94-1.05x the time, slower
  // from 8k), the default and deterministic modes at d = 64 (0.97-1.12x), in two forms.
  static constexpr bool kDqWriter = kDeterministic && kSplitDq;
  static constexpr int kStatsBytes = kBlockM * 4;  // one float per query row

  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = kKOffset + kKBytes;
  static constexpr int kQOffset = kVOffset + kKBytes;
  static constexpr int kDoOffset = kQOffset + kStages * kQBytes;
  static constexpr int kDsOffset = kDoOffset + kStages * kQBytes;    // two buffers (steps alternate)
  static constexpr int kPOffset = kDsOffset + 2 * kDsBytes;          // kPBuffers buffers
  static constexpr int kDqOffset = kPOffset + kPBuffers * kDsBytes;  // kDqBuffers buffers
  static constexpr int kLseOffset = kDqOffset + kDqBuffers * kDqBytes;
  static constexpr int kDeltaOffset = kLseOffset + kStages * kStatsBytes;
  static constexpr int kBarrierOffset = kDeltaOffset + kStages * kStatsBytes;
  // kv_full, kv_empty, then per stage q_full (Q, LSE, D), do_full (dO), empty, then under kDqWriter per dQ
  // buffer dq_full, dq_empty.
  static constexpr int kBarriers = 2 + 3 * kStages + (kDqWriter ? 2 * kDqBuffers : 0);
  static constexpr int kClaimOffset = kBarrierOffset + 8 * kBarriers;  // deterministic: the claimed tile
  // + 1024 for aligning the dynamic buffer's base to the swizzle atom.
  static constexpr int kSmemBytes = kClaimOffset + 8 + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory of one CTA");

  // Producer: one thread issuing copies; consumers: dK, dV (d / 2 each), S^T, dP^T (32 + 32), the 16-bit
  // fragments of P^T, dS^T (16 + 16) and dQ (32) at their peaks: 240 for two consumers, 160 for three
  // (d = 64). setmaxnreg moves registers within what the CTA was given at launch (kLaunchRegisters a thread,
  // __launch_bounds__'s share of 64 K in steps of 8): a consumer's increase waits until the producer's
  // decrease has freed enough, forever if it cannot (a producer at 32 beside two consumers at 240 hung,
  // session 60's s60_dynamic.sh: 136 x 128 freed, 72 x 256 wanted).
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = kConsumers == 2 ? 240 : 160;
  static_assert((kLaunchRegisters - kProducerRegisters) * 128 >=
                    (kConsumerRegisters - kLaunchRegisters) * 128 * kConsumers,
                "the consumers' setmaxnreg increase must fit in what the producer's decrease frees");
};

struct BackwardMaps {
  CUtensorMap q, k, v, dout;  // (d, rows, heads, batch): q / dout boxes of 64 rows, k / v of kBlockN
};

struct BackwardKernelParams {
  BackwardMaps maps;
  const float* lse_log2 = nullptr;  // (batch, heads, rows_padded), the preprocess's
  const float* delta = nullptr;     // (batch, heads, rows_padded)
  float* dq_accum = nullptr;        // (batch, heads, rows_padded, d), DQ_BULK layout
  // Deterministic mode (the preprocess zeroes both): reductions done per (batch, head, 64-row query block),
  // and the counter CTAs claim their tiles from.
  int* dq_semaphore = nullptr;
  unsigned long long* tile_counter = nullptr;
  int m_blocks = 0;  // rows_padded / 64
  void* dk = nullptr;
  void* dv = nullptr;
  std::int64_t dk_batch_stride = 0, dk_row_stride = 0, dk_head_stride = 0;
  std::int64_t dv_batch_stride = 0, dv_row_stride = 0, dv_head_stride = 0;
  const std::int32_t* cu_seqlens_q = nullptr;
  const std::int32_t* cu_seqlens_k = nullptr;
  const std::int32_t* seqused_q = nullptr;
  const std::int32_t* seqused_k = nullptr;
  int batch = 0, heads = 0, heads_kv = 0, group = 1;
  int seqlen_q = 0, seqlen_k = 0;  // varlen: the maxima
  int rows_padded = 0;
  int n_blocks = 0;     // key blocks per sequence (of the longest)
  int total_tiles = 0;  // n_blocks x heads_kv x batch
  int window_left = -1, window_right = -1;
  float scale_log2 = 0.f;  // softmax_scale * log2(e)
  float scale = 1.f;
  // kScoreMods: softcap's tanh(q.k * softcap_in) scaled by softcap_log2 = softcap * log2(e) (softcap_in = 0:
  // none), as the forward's (kernel_params.h); ALiBi's slopes (null: none), subtracted as
  // slope * log2(e) * |i + seqlen_k - seqlen_q - j| in base 2.
  float softcap_in = 0.f, softcap_log2 = 0.f;
  const float* alibi_slopes = nullptr;
  std::int64_t alibi_batch_stride = 0;
  // The dQ pass (d = 256; backward_dq_kernel.h): dQ itself, and the blocks of
  // BackwardDqConfig::kBlockM query rows per (sequence, head) of the longest sequence. (Last, so that the
  // other kernels' parameter offsets stay as they were.)
  void* dq = nullptr;
  std::int64_t dq_batch_stride = 0, dq_row_stride = 0, dq_head_stride = 0;
  int q_blocks = 0;
};

// The CTA's (key block, K/V head, sequence): key blocks fastest, so that the CTAs running at once share
// few heads, whose Q, dO and dQ accumulator rows (read or added to by every key block of the head) then
// stay in L2. (Key blocks slowest, the first order tried, read them from DRAM once per key block: at
// 2048 tokens 0.70x of cuDNN's speed.)
// Deterministic mode numbers a head's key blocks from the last, so that a tile's turn (backward_dq_turn:
// after the higher key blocks) waits only for tiles claimed before it.
struct BackwardTile {
  int n_block, head_kv, batch;
};
template <class Config>
__device__ __forceinline__ BackwardTile backward_tile(const BackwardKernelParams& p, int index) {
  const int rest = index / p.n_blocks, n_index = index % p.n_blocks;
  return {Config::kDeterministic ? p.n_blocks - 1 - n_index : n_index, rest % p.heads_kv, rest / p.heads_kv};
}

// Deterministic mode: the number of reductions into query block m (of 64 rows) before this one's, key blocks
// descending (as cuda_sm80's dq_turn; under a causal or windowed mask a higher key block reaches a query
// block it shares with a lower one first, so the lower one rarely waits). The key blocks that reach m are
// contiguous (backward_sequence's m_begin / m_end are non-decreasing in the key block): the last of them is
// the highest below the sequence's key blocks whose first query block is at most m. Under kSplitDq one
// reduction per key block, otherwise one per consumer (ascending within the block).
template <class Config>
__device__ __forceinline__ int backward_dq_turn(const BackwardKernelParams& p, const BackwardSequence& seq,
                                                int n_block, int m, int consumer) {
  const int last = backward_last_block_reaching<Config::kBlockN>(p, seq, m);
  return Config::kSplitDq ? last - n_block : (last - n_block) * Config::kConsumers + consumer;
}

// PERSISTENT: the CTAs (at most one a SM) walk the tiles in rounds, a snake over the CTAs (round r's tile of
// CTA c is r G + c in even rounds, r G + G - 1 - c in odd ones). The next tile's K / V and first Q / dO load
// while the consumers finish the tile before (its last dQ reduction, dK / dV stores). A static assignment:
// launch_backward uses it only where the tiles have equal work (under a causal mask it left d128 16k at 1.53x
// the ideal time); launched with one CTA per tile, the walk is that one tile.
__device__ __forceinline__ int backward_tile_index(int round) {
  const int ctas = static_cast<int>(gridDim.x), cta = static_cast<int>(blockIdx.x);
  return round * ctas + ((round & 1) != 0 ? ctas - 1 - cta : cta);
}

template <class Config>
struct BackwardShared {
  std::uint32_t base;  // 1024-byte aligned
  __device__ std::uint32_t k() const { return base + Config::kKOffset; }
  __device__ std::uint32_t v() const { return base + Config::kVOffset; }
  __device__ std::uint32_t q(int stage) const { return base + Config::kQOffset + stage * Config::kQBytes; }
  __device__ std::uint32_t dout(int stage) const {
    return base + Config::kDoOffset + stage * Config::kQBytes;
  }
  __device__ std::uint32_t ds(int buffer) const {
    return base + Config::kDsOffset + buffer * Config::kDsBytes;
  }
  __device__ std::uint32_t p(int buffer) const { return base + Config::kPOffset + buffer * Config::kDsBytes; }
  // Step parity `buffer`'s staged dQ tile (of consumer `consumer` where each stages its own).
  __device__ static int dq_index(int buffer, int consumer) {
    return Config::kSplitDq ? buffer : buffer * Config::kConsumers + consumer;
  }
  __device__ std::uint32_t dq(int buffer, int consumer) const {
    return base + Config::kDqOffset + dq_index(buffer, consumer) * Config::kDqBytes;
  }
  __device__ std::uint32_t lse(int stage) const {
    return base + Config::kLseOffset + stage * Config::kStatsBytes;
  }
  __device__ std::uint32_t delta(int stage) const {
    return base + Config::kDeltaOffset + stage * Config::kStatsBytes;
  }
  __device__ std::uint32_t barrier(int index) const { return base + Config::kBarrierOffset + 8 * index; }
  __device__ std::uint32_t kv_full() const { return barrier(0); }
  __device__ std::uint32_t kv_empty() const { return barrier(1); }
  __device__ std::uint32_t q_full(int stage) const { return barrier(2 + 3 * stage); }
  __device__ std::uint32_t do_full(int stage) const { return barrier(3 + 3 * stage); }
  __device__ std::uint32_t empty(int stage) const { return barrier(4 + 3 * stage); }
  // kDqWriter: staged dQ buffer (buffer, consumer) written by its consumer(s) / read by the writer.
  __device__ std::uint32_t dq_full(int buffer, int consumer) const {
    return barrier(2 + 3 * Config::kStages + dq_index(buffer, consumer));
  }
  __device__ std::uint32_t dq_empty(int buffer, int consumer) const {
    return barrier(2 + 3 * Config::kStages + Config::kDqBuffers + dq_index(buffer, consumer));
  }
  __device__ std::uint32_t claimed_tile() const { return base + Config::kClaimOffset; }

  __device__ void init_barriers() const {
    ptx::mbarrier_init(kv_full(), 1);
    ptx::mbarrier_init(kv_empty(), 128 * Config::kConsumers);  // every consumer thread, after its last GEMM
    for (int stage = 0; stage < Config::kStages; ++stage) {
      ptx::mbarrier_init(q_full(stage), 1);
      ptx::mbarrier_init(do_full(stage), 1);
      // Every consumer thread arrives: each reads the stage's LSE and D with ld.shared, and
      // compute-sanitizer's racecheck orders a thread's reads before the next bulk copy into the stage only
      // through its own arrival (a warp leader's arrival after __syncwarp was reported as a race).
      ptx::mbarrier_init(empty(stage), 128 * Config::kConsumers);
    }
    if constexpr (Config::kDqWriter) {
      for (int buffer = 0; buffer < Config::kDqBuffers; ++buffer) {
        // Every thread that stages the tile (both consumers' under kSplitDq), after its stores and proxy
        // fence; the writer once the copy engine is done with it.
        ptx::mbarrier_init(barrier(2 + 3 * Config::kStages + buffer),
                           Config::kSplitDq ? 128 * Config::kConsumers : 128);
        ptx::mbarrier_init(barrier(2 + 3 * Config::kStages + Config::kDqBuffers + buffer), 1);
      }
    }
    ptx::fence_mbarrier_init();
  }
};

// Named barriers of the backward kernel (id 0 is __syncthreads). kBackwardConsumers: both consumer
// warpgroups (zeroed rows written; under kSplitDq also each step's dS^T of both, and their dQ tiles of the
// step before staged). kBackwardWarpgroup + w: warpgroup w alone, the same for its own dS^T and dQ tile.
inline constexpr int kBackwardConsumers = 1;
inline constexpr int kBackwardWarpgroup = 2;
// d = 256 (SCORE_ORDER): consumer 0 arrives once its score GEMMs of a step are issued, consumer 1 waits for
// that before issuing its own.
inline constexpr int kBackwardScoreOrder = 4;

// SCORE_ORDER (default 1): the d = 256 consumers issue their score GEMMs in a fixed order, consumer 0's
// first, so that its softmax runs while consumer 1's GEMMs occupy the tensor cores (in any order both
// softmaxes tended to run at once, the tensor cores idle: s62_stalls.sh read the per-step barrier as the main
// stall). Measured (s62_order.sh, H200): 0.976-0.999x the time, every row below 1 but each within a row's
// spread between calls.
#ifndef FLASHATTN_SM90_BWD_D256_SCORE_ORDER
#define FLASHATTN_SM90_BWD_D256_SCORE_ORDER 1
#endif

// OWN_FIRST (default 1): each d = 256 consumer adds its own 32 rows' P^T dO and dS^T Q from registers before
// the barrier of both, so that its tensor work runs while the other's staged halves are awaited, and only the
// other's 32 rows come from the staged tiles after it. Measured (s63_own_first.sh, H200, against the staged
// form in one call): 0.958-1.005x the time (16k non-causal 0.958), with softcap 0.973-0.998x.
#ifndef FLASHATTN_SM90_BWD_D256_OWN_FIRST
#define FLASHATTN_SM90_BWD_D256_OWN_FIRST 1
#endif

template <class Config>
__device__ void backward_producer(const BackwardKernelParams& p, const BackwardShared<Config>& smem,
                                  const BackwardTile& tile, const BackwardSequence& seq, int& step,
                                  int kv_round) {
  const int n0 = tile.n_block * Config::kBlockN;
  // The previous tile's consumers are done with K / V (their last GEMMs waited for).
  if (kv_round > 0) ptx::mbarrier_wait_parity(smem.kv_empty(), (kv_round - 1) & 1);
  ptx::mbarrier_arrive_expect_tx(smem.kv_full(), 2 * Config::kKBytes);
#pragma unroll
  for (int c = 0; c < Config::kChunks; ++c) {
    ptx::tma_load_4d(smem.k() + c * Config::kKChunkBytes, &p.maps.k, smem.kv_full(), 64 * c, seq.k_row0 + n0,
                     tile.head_kv, seq.map_batch);
    ptx::tma_load_4d(smem.v() + c * Config::kKChunkBytes, &p.maps.v, smem.kv_full(), 64 * c, seq.k_row0 + n0,
                     tile.head_kv, seq.map_batch);
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
      ptx::mbarrier_arrive_expect_tx(smem.do_full(stage), Config::kQBytes);
#pragma unroll
      for (int c = 0; c < Config::kChunks; ++c) {
        ptx::tma_load_4d(smem.dout(stage) + c * Config::kQChunkBytes, &p.maps.dout, smem.do_full(stage),
                         64 * c, row, head, seq.map_batch);
      }
    }
  }
}

// 64 x kN (keys x query rows) = A (64 key rows, K-major) * B^T (kN query rows, K-major) over the head dim:
// S^T from K and Q, dP^T from V and dO (kN = 32: a d = 256 consumer's half of the query block). The operands'
// 64-column chunks lie kAChunkBytes / kBChunkBytes apart; the dQ pass swaps the roles (A = 64 query rows, B =
// the keys: S and dP).
template <class Config, int kN = 64, int kAChunkBytes = Config::kKChunkBytes,
          int kBChunkBytes = Config::kQChunkBytes>
__device__ __forceinline__ void backward_gemm_transposed_scores(float (&acc)[kN / 2], std::uint32_t a,
                                                                std::uint32_t b) {
  const std::uint64_t desc_a0 = ptx::make_smem_desc_sw128(a, 16, 1024);
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(b, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < Config::kHeadDim / 16; ++kk) {
    const int offset = (kk % 4) * 32;  // 16 elements = 32 bytes along the swizzled row
    ptx::wgmma_m64k16_ss<kN, typename Config::Element>(
        acc, ptx::smem_desc_moved(desc_a0, (kk / 4) * kAChunkBytes + offset, 0),
        ptx::smem_desc_moved(desc_b0, (kk / 4) * kBChunkBytes + offset, 0), kk > 0 ? 1 : 0);
  }
}

// acc (64 keys x d) += A (64 keys x 64 query rows, from registers) * B (64 query rows x d, N-major: the Q or
// dO stage, whose rows are the K steps): dV += P^T dO, dK += dS^T Q. The dQ pass: dQ (64 query rows x d) +=
// dS (64 rows x 64 keys) K (the K stage, 64-column chunks kBChunkBytes apart). d = 256 (OWN_FIRST): kN = 128
// columns over kKSteps = 2 (a consumer's 32 query rows).
template <class Config, int kBChunkBytes = Config::kQChunkBytes, int kN = Config::kHeadDim, int kKSteps = 4>
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

// d = 256: acc (64 keys x 128 columns) += A (64 keys x 64 query rows: P^T or dS^T staged in shared memory,
// K-major) * B (64 query rows x the columns: two 64-column chunks of the dO or Q stage, N-major): a
// consumer's half of dV += P^T dO and dK += dS^T Q. OWN_FIRST: the k-steps [first_step, + kKSteps) alone
// (the other consumer's 32 rows).
template <class Config, int kKSteps = Config::kBlockM / 16>
__device__ __forceinline__ void backward_gemm_key_gradient_staged(float (&acc)[64], std::uint32_t a,
                                                                  std::uint32_t b, int first_step = 0) {
  const std::uint64_t desc_a0 = ptx::make_smem_desc_sw128(a, 16, 1024);
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(b, Config::kQChunkBytes, 1024);
#pragma unroll
  for (int j = 0; j < kKSteps; ++j) {
    const int kk = first_step + j;
    ptx::wgmma_m64k16_ss_tb<128, typename Config::Element>(
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
// are not written): dK, dV (key rows) and the dQ pass's dQ (query rows).
template <class Config, int kCols>
__device__ __forceinline__ void backward_store_rows(typename Config::Element* head, std::int64_t row_stride,
                                                    int row0, int first, int rows,
                                                    const float (&acc)[kCols / 2], float scale, int thread,
                                                    int column0) {
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
                                                        float scale, int thread, int column0 = 0) {
  using Element = typename Config::Element;
  Element* head = static_cast<Element*>(base) + tile.batch * batch_stride + tile.head_kv * head_stride;
  backward_store_rows<Config, kCols>(head, row_stride, seq.k_row0, first_key, seq.k_allocated, acc, scale,
                                     thread, column0);
}

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

// Rows [first_row, end_row) of two tiles (K and V, or Q and dO: kChunks 64-column chunks kChunkBytes apart)
// set to zero by every consumer thread (thread_in_consumers of the Config's consumers), fenced for the async
// proxy and passed a barrier of the consumers, before any GEMM reads them.
template <class Config, int kChunkBytes>
__device__ __forceinline__ void backward_zero_tile_pair_rows(std::uint32_t a, std::uint32_t b, int first_row,
                                                             int end_row, int thread_in_consumers) {
  ptx::zero_rows_128b(a, kChunkBytes, Config::kChunks, first_row, end_row, thread_in_consumers,
                      128 * Config::kConsumers);
  ptx::zero_rows_128b(b, kChunkBytes, Config::kChunks, first_row, end_row, thread_in_consumers,
                      128 * Config::kConsumers);
  ptx::fence_proxy_async_shared_cta();
  // bar.sync is aligned: every warp must reach it converged (the __syncwarp: nothing else here promises it
  // after the mbarrier waits and the zeroing loops) and at the same instruction as the other warps it counts,
  // so each caller has one call site a step (session 63's SKIP_HIDDEN forms that called it from a second site
  // for the steps a consumer passed made compute-sanitizer's synccheck report divergent threads).
  __syncwarp();
  ptx::bar_sync(kBackwardConsumers, 128 * Config::kConsumers);
}

// Key rows past the sequence's (the next sequence's rows under varlen, unused rows past seqused_k, whatever
// they hold) become zeros: the dQ GEMM multiplies them by dS = 0, and 0 * NaN is NaN. All consumer threads.
template <class Config>
__device__ __forceinline__ void backward_zero_key_rows(const BackwardShared<Config>& smem,
                                                       const BackwardSequence& seq, int n0,
                                                       int thread_in_consumers) {
  if (n0 + Config::kBlockN > seq.k) {
    backward_zero_tile_pair_rows<Config, Config::kKChunkBytes>(smem.k(), smem.v(), max(seq.k - n0, 0),
                                                               Config::kBlockN, thread_in_consumers);
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
    backward_zero_tile_pair_rows<Config, Config::kQChunkBytes>(smem.q(stage), smem.dout(stage), seq.q - i0,
                                                               Config::kBlockM, thread_in_consumers);
  }
}

// kScoreMods: ALiBi's slope of query head `head` in base 2 (0: none).
template <class Config>
__device__ __forceinline__ float backward_alibi_slope_log2(const BackwardKernelParams& p, int batch,
                                                           int head) {
  return Config::kScoreMods && p.alibi_slopes != nullptr
             ? p.alibi_slopes[batch * p.alibi_batch_stride + head] * 1.4426950408889634f
             : 0.f;
}

// Whether key j is visible to the query row whose diagonal (bottom-right aligned) is key `diag`: below the
// sequence's `keys` and inside the window / causal band.
__device__ __forceinline__ bool backward_visible(const BackwardKernelParams& p, int j, int diag, int keys) {
  return j < keys && (p.window_left < 0 || j >= diag - p.window_left) &&
         (p.window_right < 0 || j <= diag + p.window_right);
}

// kScoreMods: one element's probability from its score (key j, query row whose diagonal key is `diag`), in
// base 2: x = S scale log2 e, or with softcap softcap log2 e tanh(S softcap_in); ALiBi subtracts
// slope_log2 |diag - j|; P = 2^(x - lse_log2), 0 where hidden. `dtanh`: the tanh's derivative (1 - tanh^2;
// 1 without softcap). tanh.approx, as the forward's, so that P is the forward's probabilities.
__device__ __forceinline__ float backward_modified_probability(const BackwardKernelParams& p, float score,
                                                               float lse_log2, int j, int diag, int keys,
                                                               bool masked, float slope_log2, float& dtanh) {
  float x;
  dtanh = 1.f;
  if (p.softcap_in != 0.f) {
    const float th = ptx::tanh_approx_f32(score * p.softcap_in);
    x = th * p.softcap_log2;
    dtanh = 1.f - th * th;
  } else {
    x = score * p.scale_log2;
  }
  if (slope_log2 != 0.f) x -= slope_log2 * static_cast<float>(abs(diag - j));
  const float prob = ptx::ex2_approx_ftz_f32(x - lse_log2);
  return masked && !backward_visible(p, j, diag, keys) ? 0.f : prob;
}

// kScoreMods: one step's P^T and dS^T in one pass over both score tiles (both GEMMs waited for), packed into
// the A fragments of dV's and dK's GEMMs. Element 4 c + r of an accumulator is query row
// i_first + 8 c + r % 2 (i_first = the block's first + 2 (lane % 4)), key `key` + 8 (r / 2). P as
// backward_modified_probability, dS = P (dP - D) (1 - tanh^2) (dK and dQ take softmax_scale at the end, as
// without softcap: d(softcap tanh(S scale / softcap)) / dS is scale (1 - tanh^2)).
template <class Config, int kColumnGroups = 8>
__device__ __forceinline__ void backward_modified_gradients(
    const BackwardKernelParams& p, const float (&st)[4 * kColumnGroups],
    const float (&dpt)[4 * kColumnGroups], std::uint32_t lse_at, std::uint32_t delta_at, int i_first, int key,
    int offset, int keys, bool masked, float slope_log2, std::uint32_t (&pf)[kColumnGroups / 2][4],
    std::uint32_t (&dsf)[kColumnGroups / 2][4]) {
  using Element = typename Config::Element;
#pragma unroll
  for (int c = 0; c < kColumnGroups; ++c) {
    const float2 lse = ptx::ld_shared_v2_f32(lse_at + 32 * c);
    const float2 delta = ptx::ld_shared_v2_f32(delta_at + 32 * c);
    float prob[4], ds[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      float dtanh;
      prob[r] =
          backward_modified_probability(p, st[4 * c + r], r % 2 == 0 ? lse.x : lse.y, key + 8 * (r / 2),
                                        i_first + 8 * c + (r % 2) + offset, keys, masked, slope_log2, dtanh);
      ds[r] = prob[r] * (dpt[4 * c + r] - (r % 2 == 0 ? delta.x : delta.y)) * dtanh;
    }
    const int kk = c / 2, r0 = 2 * (c % 2);  // columns 16 kk .. + 15: the A fragment of k-step kk
    pf[kk][r0] = pack_pair<Element>(prob[0], prob[1]);
    pf[kk][r0 + 1] = pack_pair<Element>(prob[2], prob[3]);
    dsf[kk][r0] = pack_pair<Element>(ds[0], ds[1]);
    dsf[kk][r0 + 1] = pack_pair<Element>(ds[2], ds[3]);
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

  float dk[Config::kHeadDim / 2], dv[Config::kHeadDim / 2];
#pragma unroll
  for (int i = 0; i < Config::kHeadDim / 2; ++i) dk[i] = dv[i] = 0.f;

  ptx::mbarrier_wait_parity(smem.kv_full(), kv_round & 1);
  backward_zero_key_rows<Config>(smem, seq, n0, thread_in_consumers);
  const std::uint32_t k_rows = smem.k() + 64 * consumer * Config::kRowBytes;
  const std::uint32_t v_rows = smem.v() + 64 * consumer * Config::kRowBytes;

  const int first_step = step;
  float* pending_dq = nullptr;       // the dQ accumulator rows of the previous step's staged tile (leader)
  int* pending_semaphore = nullptr;  // deterministic mode: its query block's semaphore and its turn there
  int pending_turn = 0;
  const auto reduce_pending = [&] {
    backward_reduce_dq<Config>(pending_dq, smem.dq((step - 1) % 2, consumer), pending_semaphore,
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
      if constexpr (Config::kScoreMods) {
        ptx::wgmma_wait_group<0>();
        ptx::wgmma_fence_operand(st);
        ptx::wgmma_fence_operand(dpt);
        backward_modified_gradients<Config>(p, st, dpt, smem.lse(stage) + 8 * (lane % 4),
                                            smem.delta(stage) + 8 * (lane % 4), i0 + 2 * (lane % 4),
                                            n0 + key_local, offset, seq.k, masked, slope_log2, pf, dsf);
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
        const std::uint32_t stage_at = smem.dq(step % 2, consumer);
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
    if (leader) reduce_pending();
  }
  // Every GEMM of the tile has completed (the last step waited for all): K / V may be overwritten.
  ptx::mbarrier_arrive(smem.kv_empty());
  const int first_key = n0 + 64 * consumer;
  backward_store_key_rows<Config>(p.dk, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride, tile, seq,
                                  first_key, dk, p.scale, thread);
  backward_store_key_rows<Config>(p.dv, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride, tile, seq,
                                  first_key, dv, 1.f, thread);
}

// SPLIT_HEAD_DIM (d = 256): consumer `consumer` over one tile (64 keys). Per query block of 64 rows:
//   S^T, dP^T for its 32 rows [32 w, + 32) over all 64 keys (m64n32, shared-memory operands),
//   P^T and dS^T (as backward_consumer's); under OWN_FIRST dV[:, 128 w ..] += P^T dO and dK[:, 128 w ..] +=
//   dS^T Q over those 32 rows from registers (m64n128); both staged in shared memory (buffers step % 2) for
//   the other consumer; one barrier of both, then the same GEMMs over the other's 32 rows (all 64 without
//   OWN_FIRST) from the staged tiles. dQ is the dQ pass's (backward_dq_kernel.h).
// A staged buffer is rewritten two steps later, after both consumers have passed the barrier of the step
// between, which each reaches only once its GEMMs of the step before have completed.
template <class Config>
__device__ void backward_consumer_split_head_dim(const BackwardKernelParams& p,
                                                 const BackwardShared<Config>& smem, const BackwardTile& tile,
                                                 const BackwardSequence& seq, int consumer, int& step,
                                                 int kv_round) {
  using Element = typename Config::Element;
  constexpr int kColumns = Config::kHeadDim / 2;  // dK / dV columns of each consumer
  constexpr bool kOwnFirst = FLASHATTN_SM90_BWD_D256_OWN_FIRST != 0;
  const int thread = static_cast<int>(threadIdx.x) % 128;
  const int warp = thread / 32, lane = thread % 32;
  const int thread_in_consumers = static_cast<int>(threadIdx.x) - 128;
  const int n0 = tile.n_block * Config::kBlockN;
  const int key_local = 16 * warp + lane / 4;  // this thread's two keys (and + 8) of the block's 64
  const int query0 = 32 * consumer;            // this consumer's query rows of each block
  const int offset = seq.k - seq.q;

  float dk[kColumns / 2], dv[kColumns / 2];
#pragma unroll
  for (int i = 0; i < kColumns / 2; ++i) dk[i] = dv[i] = 0.f;

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
        ptx::bar_sync(kBackwardScoreOrder, 128 * Config::kConsumers);
      }
      ptx::wgmma_fence();
      backward_gemm_transposed_scores<Config, 32>(st, smem.k(), smem.q(stage) + query0 * Config::kRowBytes);
      ptx::wgmma_commit_group();
      ptx::mbarrier_wait_parity(smem.do_full(stage), phase);
      ptx::wgmma_fence();
      backward_gemm_transposed_scores<Config, 32>(dpt, smem.v(),
                                                  smem.dout(stage) + query0 * Config::kRowBytes);
      ptx::wgmma_commit_group();
      if (FLASHATTN_SM90_BWD_D256_SCORE_ORDER != 0 && consumer == 0) {
        ptx::bar_arrive(kBackwardScoreOrder, 128 * Config::kConsumers);
      }

      const bool masked = n0 + Config::kBlockN > seq.k ||
                          (p.window_left >= 0 && i0 + Config::kBlockM - 1 + offset - p.window_left > n0) ||
                          (p.window_right >= 0 && i0 + offset + p.window_right < n0 + Config::kBlockN - 1);
      // Column 8 c + 2 (lane % 4) + e of the accumulators is query row i0 + query0 + that.
      const std::uint32_t lse_at = smem.lse(stage) + 4 * query0 + 8 * (lane % 4);
      const std::uint32_t delta_at = smem.delta(stage) + 4 * query0 + 8 * (lane % 4);
      const int i_first = i0 + query0 + 2 * (lane % 4);
      std::uint32_t pf[2][4], dsf[2][4];
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(st);
      ptx::wgmma_fence_operand(dpt);
      if constexpr (Config::kScoreMods) {
        backward_modified_gradients<Config, 4>(p, st, dpt, lse_at, delta_at, i_first, n0 + key_local, offset,
                                               seq.k, masked, slope_log2, pf, dsf);
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
        const std::uint32_t own_rows = 2 * consumer * Config::kQChunkBytes + query0 * Config::kRowBytes;
        ptx::wgmma_fence();
        backward_gemm_key_gradient<Config, Config::kQChunkBytes, kColumns, 2>(dv, pf,
                                                                              smem.dout(stage) + own_rows);
        backward_gemm_key_gradient<Config, Config::kQChunkBytes, kColumns, 2>(dk, dsf,
                                                                              smem.q(stage) + own_rows);
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
      ptx::bar_sync(kBackwardConsumers, 128 * Config::kConsumers);

      ptx::wgmma_fence();
      if constexpr (kOwnFirst) {
        const int other_rows = 2 * (1 - consumer);  // the other consumer's two k-steps
        backward_gemm_key_gradient_staged<Config, 2>(
            dv, smem.p(step % 2), smem.dout(stage) + 2 * consumer * Config::kQChunkBytes, other_rows);
        backward_gemm_key_gradient_staged<Config, 2>(
            dk, smem.ds(step % 2), smem.q(stage) + 2 * consumer * Config::kQChunkBytes, other_rows);
      } else {
        backward_gemm_key_gradient_staged<Config>(dv, smem.p(step % 2),
                                                  smem.dout(stage) + 2 * consumer * Config::kQChunkBytes);
        backward_gemm_key_gradient_staged<Config>(dk, smem.ds(step % 2),
                                                  smem.q(stage) + 2 * consumer * Config::kQChunkBytes);
      }
      ptx::wgmma_commit_group();
      // dV and dK done: the stage's Q and dO are no longer read.
      ptx::wgmma_wait_group<0>();
      ptx::mbarrier_arrive(smem.empty(stage));
    }
  }
  // Every GEMM of the tile has completed: K / V may be overwritten.
  ptx::mbarrier_arrive(smem.kv_empty());
  backward_store_key_rows<Config, kColumns>(p.dk, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride, tile,
                                            seq, n0, dk, p.scale, thread, kColumns * consumer);
  backward_store_key_rows<Config, kColumns>(p.dv, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride, tile,
                                            seq, n0, dv, 1.f, thread, kColumns * consumer);
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
    backward_for_each_tile<Config>(
        p, first_index, [&](const BackwardTile& tile, const BackwardSequence& seq, int kv_round) {
          if constexpr (Config::kSplitHeadDim) {
            backward_consumer_split_head_dim<Config>(p, smem, tile, seq, warpgroup - 1, step, kv_round);
          } else {
            backward_consumer<Config>(p, smem, tile, seq, warpgroup - 1, step, kv_round);
          }
        });
    // The last reductions' reads of shared memory complete before the CTA leaves.
    ptx::cp_async_bulk_wait_group_read<0>();
  }
}

}  // namespace flashattn::detail::cuda_sm90
