// The Hopper backward main kernel's configuration (BackwardConfig: tiles, consumers, shared-memory layout,
// registers), its parameters and tensor maps, the CTA's tile (backward_tile, the persistent walk's order,
// deterministic mode's dQ turns), the shared-memory views and barriers (BackwardShared) and the named
// barriers' ids. The kernel: backward_kernel.h.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/philox.h"  // PhiloxKeys
#include "cuda/ptx/mbarrier.h"
#include "cuda/sm80/backward_config.h"  // kBackwardBlockM: deterministic mode's semaphores count its blocks
#include "cuda/sm90/backward_walk.h"    // BackwardSequence, backward_last_block_reaching, kBackwardQueryRows

// STAGES3 (default 1): three stages of the Q / dO ring in the d = 64 kernels of two consumers. Measured
// (s63_d64_stages.sh, H200, against two stages in one call): 0.962-0.993x the time at 512-2k tokens.
#ifndef FLASHATTN_SM90_BWD_D64_STAGES3
#define FLASHATTN_SM90_BWD_D64_STAGES3 1
#endif
// STAGED_KEY_STORE (default 1; measured in session 64): the d = 64 / 128 consumers write their dK and dV rows
// into shared memory that the tile's last steps are done with, and one thread a consumer stores them by TMA,
// instead of 4-byte stores from registers, which took 6.8 us of a d128 tile's ~74 at 2k tokens (the session's
// trace, s64_bwd_trace.patch: a tenth of the time at 2k, a quarter at 512).
#ifndef FLASHATTN_SM90_BWD_STAGED_KEY_STORE
#define FLASHATTN_SM90_BWD_STAGED_KEY_STORE 1
#endif
// SKIP_HIDDEN (default 1; session 65): the d = 64 calls with a causal or window band below D64_THREE_FROM
// keys run a kernel of their own (BackwardConfig::kSkipHidden, units backward_hdim64_{dtype}_masked.cu) whose
// consumers pass the steps that see none of their keys. 0: those calls run the plain two-consumer kernel.
// Measured (s65_skip_masked.sh, H200, against 0 in one call): causal 512 / 1k / 1.5k 0.912 / 0.915 / 0.923x
// the time, 0.98x cuDNN's where it read 0.89x.
#ifndef FLASHATTN_SM90_BWD_SKIP_HIDDEN
#define FLASHATTN_SM90_BWD_SKIP_HIDDEN 1
#endif
// D64_THREE_FROM (default 2048): the d = 64 default-mode calls without softcap / ALiBi take the
// three-consumer kernel from this many keys (run_backward). Chosen in session 59 (+7-12% at 2k-8k keys
// against two consumers); measured again in session 66 (s66_first.sh), after the two-consumer kernel became
// persistent and three-staged and took the masked kernel: two consumers at every length ran 0.99-1.01x the
// time at 2k and 1.03-1.06x at 4k-16k, so the threshold stays.
#ifndef FLASHATTN_SM90_BWD_D64_THREE_FROM
#define FLASHATTN_SM90_BWD_D64_THREE_FROM 2048
#endif

namespace flashattn::detail::cuda_sm90 {

// kGemmDim_: 0, or 96 for the d = dv = 128 kernels of two consumers (every mode) narrowed to head dims of at
// most 96 (forward_config.h narrowed_gemm_dim): their layout, loads and dQ GEMM are d = 128's (TMA zero-fills
// the columns past the problem's, whose dQ is then 0 in the accumulator and clipped by the postprocess), S^T
// and dP^T run 6 k-steps, dV and dK have N = 96 (their accumulators and stores kGemmDim columns).
template <int kHeadDim_, typename Element_, int kConsumers_ = 2, bool kDeterministic_ = false,
          bool kGeneral_ = false, bool kSkipHidden_ = false, int kHeadDimV_ = kHeadDim_, int kGemmDim_ = 0>
struct BackwardConfig {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;    // of Q and K (dQ, dK)
  static constexpr int kHeadDimV = kHeadDimV_;  // of V and dO (dV)
  // The head-dim columns of S^T's and dP^T's k-steps and of dK's and dV's (d = dv where narrowed).
  static constexpr int kGemmDim = kGemmDim_ != 0 ? kGemmDim_ : kHeadDim;
  static_assert(kGemmDim_ == 0 || (kGemmDim_ == 96 && kHeadDim_ == 128 && kHeadDimV_ == 128 &&
                                   kConsumers_ == 2 && !kSkipHidden_),
                "the narrowed GEMMs: 96 columns of the d = dv = 128 kernels");
  static_assert((kHeadDim == kHeadDimV &&
                 (kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 192 || kHeadDim == 256)) ||
                    (kHeadDim == 192 && kHeadDimV == 128),
                "the backward kernel's layouts are for d = dv = 64, 128, 192, 256 and (d, dv) = (192, 128)");
  // SPLIT_HEAD_DIM (d >= 192; backward_consumer_split_head_dim): 64 keys a CTA, whose dK and dV (64 x 256
  // each at d = 256, 256 registers a thread for one warpgroup) the two consumers split by 64-column chunks
  // (key_chunk_begin / value_chunk_begin: at d = 256 128 columns of each, at d = 192 two chunks of dK and
  // one of dV against one and two, at (192, 128) two and one against one and one). Each
  // consumer computes the scores of its 32 query rows of a block over all 64 keys, adds their share of dV and
  // dK from its registers (OWN_FIRST) and stages P^T and dS^T in shared memory for the other. No dQ: the dQ
  // pass computes it (backward_dq_kernel.h). Adding it here, to an fp32 accumulator from registers by atomics
  // (session 61), took half this kernel's time (64 KB into L2 per 64 x 64 step); the dQ pass, which computes
  // S and dP a second time, ran 1.12-1.35x its speed (s62_dqpass.sh). Both kernels write each output once, in
  // a fixed order: deterministic mode is the default mode. One CTA per tile. (Measured and not kept, session
  // 62: one consumer's dV and the other's dK, clusters sharing Q / dO by multicast, the next scores issued
  // early; session 63: the next scores issued before the dV / dK GEMMs are waited for, EARLY_SCORES.)
  static constexpr bool kSplitHeadDim = kHeadDim >= 192;
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
  // (Three at d = 192, where they fit, measured 0.97-1.02x the time of two: s66_d192b.sh.)
  static constexpr int kStages =
      FLASHATTN_SM90_BWD_D64_STAGES3 != 0 && kHeadDim == 64 && kConsumers_ == 2 ? 3 : 2;
  static constexpr int kRowBytes = 128;
  static constexpr int kChunks = kHeadDim / 64;    // 64-column 128B-swizzled chunks of a Q / K row
  static constexpr int kChunksV = kHeadDimV / 64;  // of a dO / V row
  static_assert(kSplitHeadDim || kChunksV == kChunks, "d != dv only with the split columns");
  // kSplitHeadDim: consumer c's dK columns are chunks [key_chunk_begin(c), key_chunk_begin(c + 1)), its dV
  // columns [value_chunk_begin(c), value_chunk_begin(c + 1)): consumer 0 takes dK's larger half, consumer 1
  // dV's, so that odd chunk counts balance (d = 192: 2 + 1 chunks against 1 + 2; at (192, 128) 2 + 1 against
  // 1 + 1: balancing those with a 32-column piece, 96 + 64 columns against 32 + 64 + 64, measured 1.00-1.06x
  // the time, s66_balanced.sh / s66_balanced.patch).
  static constexpr int kKeySplit = (kChunks + 1) / 2,
                       kValueSplit = kChunksV / 2;  // consumer 1's first chunks
  __host__ __device__ static constexpr int key_chunk_begin(int consumer) {
    return consumer == 0 ? 0 : consumer == 1 ? kKeySplit : kChunks;
  }
  __host__ __device__ static constexpr int value_chunk_begin(int consumer) {
    return consumer == 0 ? 0 : consumer == 1 ? kValueSplit : kChunksV;
  }
  // Deterministic mode: one CTA per tile, claimed from a counter in increasing order (backward_kernel), and
  // each dQ reduction in its turn (backward_reduce_dq).
  static constexpr bool kDeterministic = kDeterministic_;
  // Whether the consumers' column counts differ (d = 192, (192, 128)): each consumer is then an instance of
  // its own (its accumulators' sizes constants), and the barriers both consumers meet at are the unaligned
  // form (backward_bar_sync), since they reach them from different instructions.
  static constexpr bool kConsumerInstances =
      kSplitHeadDim && (2 * kKeySplit != kChunks || 2 * kValueSplit != kChunksV);
  static_assert(!kSplitHeadDim || (kConsumers == 2 && !kDeterministic),
                "d >= 192: two consumers splitting the columns; deterministic without a mode of its own");
  // GENERAL: softcap and / or ALiBi modify the scores before the softmax (a tanh and its derivative, a
  // distance bias per element), dropout scales P and dP by the forward's keep mask: the probabilities wait
  // for dP^T's GEMM too, so that each element's P^T and dS^T come from one pass and the tanh's derivative
  // needs no registers of its own (backward_consumer). Kernels of their own: the plain ones keep the exp2
  // overlapped with dP^T's GEMM.
  static constexpr bool kGeneral = kGeneral_;
  // PERSISTENT (backward_tile_index): at most one CTA a SM walking the tiles. Not with three consumers, where
  // it measured 0.94-1.10x the time of one CTA per tile (s60_persistent.sh: 1.10 at d64 non-causal 2k, 1.07
  // causal 8k) against 0.92-1.00x with two; not in deterministic mode (tiles claimed in order). The launch
  // makes it persistent only where all tiles have the same work (launch_backward).
  static constexpr bool kPersistent = kConsumers == 2 && !kDeterministic && !kSplitHeadDim;
  static constexpr int kKChunkBytes = kBlockN * kRowBytes;
  static constexpr int kQChunkBytes = kBlockM * kRowBytes;
  static constexpr int kKBytes = kChunks * kKChunkBytes;
  static constexpr int kVBytes = kChunksV * kKChunkBytes;
  static constexpr int kQBytes = kChunks * kQChunkBytes;
  static constexpr int kDoBytes = kChunksV * kQChunkBytes;
  static constexpr int kDsBytes = kBlockN * kBlockM * 2;   // dS^T: kBlockN key rows of 64 query columns
  static constexpr int kDqBytes = kBlockM * kHeadDim * 4;  // the fp32 dQ tile
  // kSplitDq (d = 128): each consumer computes dQ's columns [64 w, + 64) over all 128 keys, from both
  // consumers' dS^T (a barrier of both a step), into one staged tile that one thread reduces. Otherwise
  // (d = 64) each consumer computes the whole tile over its own 64 keys (32 accumulator registers either
  // way), stages it apart and reduces it itself: no barrier between the consumers, twice the reductions.
  static constexpr bool kSplitDq = kHeadDim == 128;
  static_assert(!kSplitDq || kConsumers == 2, "kSplitDq splits dQ's 128 columns between two consumers");
  // Two steps' staged dQ tiles (per consumer); none at d >= 192 (the dQ pass's).
  static constexpr int kDqBuffers = kSplitHeadDim ? 0 : 2 * (kSplitDq ? 1 : kConsumers);
  // d >= 192: P^T staged for dV's GEMM as dS^T is for dK's (two buffers each, steps alternate).
  static constexpr int kPBuffers = kSplitHeadDim ? 2 : 0;
  // DQ_WRITER: the reductions issued by a thread of the producer warpgroup (backward_dq_writer), the staging
  // buffers handed over through mbarriers; in deterministic mode at d = 128 only, where the consumers'
  // waits for the reductions' turns and completion cost 20-26% of the time (s60_writer.sh: 0.81-0.84x the
  // time with the writer). Measured and not kept: the default mode at d = 128 (0.94-1.05x the time, slower
  // from 8k), the default and deterministic modes at d = 64 (0.97-1.12x), in two forms.
  static constexpr bool kDqWriter = kDeterministic && kSplitDq;
  // STAGED_KEY_STORE: each consumer's 64 rows of dK and dV (kChunks boxes of 64 rows x 64 columns each) go
  // through shared memory that the tile's last steps are done with (key_staging): at d = 64 the consumer's
  // staged dQ tile of the parity after the last step (the tile's last reduction reads the other); at d = 128
  // (64 KB for both) consumer 0's the two dS^T buffers, consumer 1's that dQ tile. The next tile's consumers
  // start once the stores have read them (a wait of each storing thread, a barrier). At d >= 192 (one tile a
  // CTA) K's and V's own buffers, which no GEMM reads after the tile's last barrier of both consumers. Not
  // under kDqWriter (its writer may still be reducing from that dQ tile).
  static constexpr bool kStagedKeyStore = FLASHATTN_SM90_BWD_STAGED_KEY_STORE != 0 && !kDqWriter;
  // SKIP_HIDDEN (the masked d = 64 kernel): each consumer works only on the query blocks that see its own 64
  // keys (backward_sequence of those keys) and passes the others with no GEMM, after the step's zeroing,
  // whose aligned barrier both consumers reach from one instruction: under a causal mask a tile's first step
  // for its second consumer, a tenth of the consumer steps at 512 tokens. Only where the consumers' steps are
  // independent (each its own dQ), no dQ turn counts every key block and the registers allow (three
  // consumers' 160 spilled 120 bytes with it). In the plain kernel, four forms measured 1.02-1.09x the time
  // without a mask for 0.91-0.94x with one (sessions 63-64: s63_skip_hidden.patch, s63_skip2.patch,
  // s63_skip3.patch, s64_skip_uniform.patch); a kernel of its own keeps the gain alone.
  static constexpr bool kSkipHidden = kSkipHidden_;
  static_assert(!kSkipHidden || (kHeadDim == 64 && kConsumers == 2 && !kDeterministic && !kGeneral),
                "SKIP_HIDDEN: the d = 64 two-consumer default-mode kernel without score mods");
  static constexpr int kStatsBytes = kBlockM * 4;  // one float per query row

  static constexpr int kKOffset = 0;
  static constexpr int kVOffset = kKOffset + kKBytes;
  static constexpr int kQOffset = kVOffset + kVBytes;
  static constexpr int kDoOffset = kQOffset + kStages * kQBytes;
  static constexpr int kDsOffset = kDoOffset + kStages * kDoBytes;   // two buffers (steps alternate)
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
  CUtensorMap dk, dv;         // kStagedKeyStore: boxes of one consumer's 64 rows
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
  // kGeneral: softcap's tanh(q.k * softcap_in) scaled by softcap_log2 = softcap * log2(e) (softcap_in = 0:
  // none), as the forward's (kernel_params.h); ALiBi's slopes (null: none), subtracted as
  // slope * log2(e) * |i + seqlen_k - seqlen_q - j| in base 2.
  float softcap_in = 0.f, softcap_log2 = 0.f;
  const float* alibi_slopes = nullptr;
  std::int64_t alibi_batch_stride = 0;
  // The dQ pass (d >= 192; backward_dq_kernel.h): dQ itself, and the blocks of
  // BackwardDqConfig::kBlockM query rows per (sequence, head) of the longest sequence. (Last, so that the
  // other kernels' parameter offsets stay as they were.)
  void* dq = nullptr;
  std::int64_t dq_batch_stride = 0, dq_row_stride = 0, dq_head_stride = 0;
  int q_blocks = 0;
  // kGeneral: dropout (cuda_sm80's dropout.h) with the forward's Philox stream; an element is dropped where
  // its 16-bit draw is below dropout_threshold (0: no dropout), a kept one scaled by dropout_rescale (1 / (1
  // - p)).
  PhiloxKeys dropout_keys{};  // dropout_keys(seed, offset): the key schedule, read as constant operands
  std::uint64_t dropout_offset = 0;
  std::uint32_t dropout_threshold = 0;
  float dropout_rescale = 1.f;
  // The tensors' head dims d (Q, K, dQ, dK) and dv (V, dO, dV): fewer than the kernel's where it runs a
  // padded head dim (forward_config.h kernel_head_dims; the tensor maps zero-fill the operands' columns past
  // them and clip the TMA stores); the stores from registers (backward_store_rows) skip the columns past
  // them.
  int qk_cols = 0, v_cols = 0;
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
    return base + Config::kDoOffset + stage * Config::kDoBytes;
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
  // kStagedKeyStore: consumer `consumer`'s staged dK (kChunks boxes of 64 x 64, 8 KB each) and dV (the next
  // kChunks boxes) at the end of a tile, `step` past its last step (BackwardConfig::kStagedKeyStore).
  __device__ std::uint32_t key_staging(int step, int consumer) const {
    static_assert(!Config::kSplitHeadDim, "d >= 192 stages dK / dV in K's and V's buffers");
    static_assert(2 * Config::kChunks * 8192 <= Config::kDqBytes &&
                      (!Config::kSplitDq || 2 * Config::kChunks * 8192 <= 2 * Config::kDsBytes),
                  "a consumer's staged dK / dV fit its buffer");
    if constexpr (Config::kSplitDq) return consumer == 0 ? ds(0) : dq(step % 2, 0);
    return dq(step % 2, consumer);  // (kSkipHidden: `step` counts the tile's staged dQ tiles)
  }

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
// d >= 192 (SCORE_ORDER): consumer 0 arrives once its score GEMMs of a step are issued, consumer 1 waits for
// that before issuing its own.
inline constexpr int kBackwardScoreOrder = 4;
// kStagedKeyStore: kBackwardKeysStaged + w, warpgroup w's dK / dV rows written to shared memory (before its
// first thread stores them); kBackwardStagingFree, all consumers at a tile's start, the previous tile's
// stores have read them.
inline constexpr int kBackwardKeysStaged = 5;  // 5, 6, 7
inline constexpr int kBackwardStagingFree = 8;

}  // namespace flashattn::detail::cuda_sm90
