// The backward kernels' configuration as data, one struct per (head-dim
// bucket, element type), plus what a backward launch hands its kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/host_device.h"
#include "common/params.h"
#include "common/philox.h"  // PhiloxKeys

namespace flashattn::detail::cuda_sm80 {

// Rows of the fp32 scratch arrays (LSE in base 2, D = rowsum(dO * O), dQ
// accumulator) are padded per (sequence, head) to a multiple of this, which is
// >= every config's kBlockM, so a query tile never needs a bounds check there.
// Query tile at d <= 64 (BackwardConfig::kBlockM; 64 elsewhere): 64 or 128, a build-time knob
// (128: +2..+7% over 64 on an H200, performance-backward.md version 4).
#ifndef FLASHATTN_SM80_BWD_D64_BLOCK_M
#define FLASHATTN_SM80_BWD_D64_BLOCK_M 128
#endif
constexpr int kBackwardRowPad = FLASHATTN_SM80_BWD_D64_BLOCK_M > 64 ? 128 : 64;

// The backward workspace, shared by both CUDA backends (cuda_sm90's main kernel runs between cuda_sm80's
// preprocess and postprocess): per (sequence, head) rows_padded rows of LSE in base 2, of D and of the
// fp32 dQ accumulator, then in deterministic mode the dQ semaphores and the tile counter. Every part
// 256-byte aligned.
// The smallest query tile of any config (BackwardConfig::kBlockM is 64, or 128 at d <= 64 in the plain
// kernel): the deterministic semaphores are counted per 64 rows, enough for either tile (128-row
// tiles use the first half). The key tile is sized by launch_backward.
constexpr int kBackwardBlockM = 64;

struct BackwardLayout {
  std::int64_t rows_padded = 0;
  std::size_t lse = 0, delta = 0, dq_accum = 0, semaphore = 0, tile_counter = 0, total = 0;
};

// accum_cols: the dQ accumulator's row width, p.head_dim but where cuda_sm90 runs a padded head dim on a
// wider kernel, whose rows it is (cuda_sm90 backend.cu).
inline BackwardLayout backward_layout(const BackwardParams& p, std::int64_t accum_cols = 0) {
  constexpr std::size_t kAlignment = 256;
  auto align_up = [](std::size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; };
  BackwardLayout w;
  w.rows_padded = (p.seqlen_q + kBackwardRowPad - 1) / kBackwardRowPad * kBackwardRowPad;
  const auto rows = static_cast<std::size_t>(p.batch * p.heads * w.rows_padded);
  std::size_t offset = 0;
  w.lse = offset;
  offset += align_up(rows * sizeof(float));
  w.delta = offset;
  offset += align_up(rows * sizeof(float));
  w.dq_accum = offset;
  offset +=
      align_up(rows * static_cast<std::size_t>(accum_cols > 0 ? accum_cols : p.head_dim) * sizeof(float));
  if (p.deterministic) {
    w.semaphore = offset;
    offset += align_up(static_cast<std::size_t>(p.batch * p.heads) *
                       static_cast<std::size_t>(w.rows_padded / kBackwardBlockM) * sizeof(int));
    w.tile_counter = offset;
    offset += align_up(sizeof(unsigned long long));
  }
  w.total = offset;
  return w;
}

// m-tiles of 16 keys per warp at d <= 128 (BackwardConfig::kKeyTiles); 1 or 2. A build-time knob for
// measuring the two shapes side by side; the default is the faster one measured on an H200.
#ifndef FLASHATTN_SM80_BWD_KEY_TILES
#define FLASHATTN_SM80_BWD_KEY_TILES 2
#endif
// The same for d <= 64 alone (1: 64-key CTAs, 128 registers, two CTAs per SM).
#ifndef FLASHATTN_SM80_BWD_D64_KEY_TILES
#define FLASHATTN_SM80_BWD_D64_KEY_TILES FLASHATTN_SM80_BWD_KEY_TILES
#endif
// 1: above d = 64, two-m-tile warps form S^T / dP^T one m-tile at a time (BackwardConfig::kScoreTiles).
#ifndef FLASHATTN_SM80_BWD_SCORES_ONE_TILE
#define FLASHATTN_SM80_BWD_SCORES_ONE_TILE 0
#endif
// 1: d 192 / 256 split the dK / dV columns over 4 warps (16-warp CTAs of 128 registers); 0: over 2
// (8-warp CTAs, up to 255 registers; +33% at d 256 on an H200).
#ifndef FLASHATTN_SM80_BWD_SPLIT4
#define FLASHATTN_SM80_BWD_SPLIT4 0
#endif
// D256_KEY_GROUPS (bwd7): warps along the keys at d 256 (8-warp CTAs of 64 keys either way). 4 (version
// 6): warp = one 16-key m-tile x 128 dK / dV columns; 2: two 16-key m-tiles x 64 columns (4 column
// slices). Same 128 accumulator registers and the same S^T / dP^T ldmatrix count (K rows for two m-tiles,
// Q / dO rows for 16 queries: 3 per 4 MMAs), but every dO / Q B fragment of dV / dK feeds two MMAs: 6
// ldmatrix per 16 MMAs instead of 9, i.e. 176 instead of 200 ldmatrix.x4 per warp per query tile.
// H200: +5..+8% at d 256 over 4 (performance-backward.md version 7).
#ifndef FLASHATTN_SM80_BWD_D256_KEY_GROUPS
#define FLASHATTN_SM80_BWD_D256_KEY_GROUPS 2
#endif

// Scheduling knobs of the main loop (version 5; each kept so the alternatives can be measured side by
// side in one device call):
// DQ_BEFORE_DK 1: the dQ product and its reductions run between dV and dK (FA2's order), so the
// red.global adds drain while dK's MMAs issue; 2: before dV; 0: after dK (version 4).
#ifndef FLASHATTN_SM80_BWD_DQ_BEFORE_DK
#define FLASHATTN_SM80_BWD_DQ_BEFORE_DK 0
#endif
// DQ_ROWS32 1: a warp's dQ task covers two 16-row m-tiles (32 query rows) and half the columns, so each
// K fragment read from shared memory feeds two MMAs (4 ldmatrix per 8 MMAs instead of 5); 0: 16 rows.
#ifndef FLASHATTN_SM80_BWD_DQ_ROWS32
#define FLASHATTN_SM80_BWD_DQ_ROWS32 1
#endif

// DQ_RED_V2 1 (sm_90): each lane adds its accumulator pairs with 8-byte red.global.add.v2.f32, no lane
// shuffles (the shuffles' results and the registers the reductions still read made the dQ adds ~19% of
// the stall samples of version 4's d128 kernel); 0: one 16-byte v4 per lane after a lane-pair shuffle.
#ifndef FLASHATTN_SM80_BWD_DQ_RED_V2
#define FLASHATTN_SM80_BWD_DQ_RED_V2 1
#endif
// DQ_BULK 1 (sm_90, default mode, head_dim == the bucket): the warps stage the whole dQ tile of a
// query tile in shared memory (row-major, 16-byte units XOR-swizzled by row % 8 within each 32-float
// group, so the accumulator stores are conflict-free) and one thread hands it to the copy engine as
// ONE asynchronous bulk reduction (cp.reduce.async.bulk .add.f32) into the dQ accumulator, which then
// holds the same swizzled layout (the postprocess undoes it; BackwardKernelArgs::dq_bulk). No
// register or LSU waits on the reductions. Deterministic mode keeps the reductions. (A first version
// with one bulk reduction per task row measured 6% slower than the reductions: the per-lane
// addresses made the compiler issue them one lane at a time.)
#ifndef FLASHATTN_SM80_BWD_DQ_BULK
#define FLASHATTN_SM80_BWD_DQ_BULK 1
#endif
// DQ_CHUNK_REGS (bwd7): accumulator registers of one dQ chunk (32: version 5; 64: a d 256 task of 32
// rows x 64 columns in one chunk, so its dS fragments are read once instead of twice; 200 B of stack,
// -8..-12% at d 256 on an H200).
#ifndef FLASHATTN_SM80_BWD_DQ_CHUNK_REGS
#define FLASHATTN_SM80_BWD_DQ_CHUNK_REGS 32
#endif
// DQ_BULK_IN_OPERANDS 1 (bwd7; sm_90, where the DQ_BULK staging tile does not fit beside the operands,
// i.e. d 256): the dQ tile is staged in the Q and dO tiles of the query tile just used, after a third
// barrier per query tile (every warp done with dV and dK), and reduced in bulk as two halves; the next
// query tile's copies, which overwrite that ring stage, are issued after the mid barrier, once thread 0
// has seen the bulk reads finish. Replaces d 256's 64 red.global.add.v2 per lane and query tile (10% of
// the stall samples, plus LG-throttle stalls, in ncu of the d 256 kernel). 0: reductions at d 256.
// H200: +10..+24% at d 256 (version 7); deterministic mode, which keeps the reductions, loses 3-4% there
// to the later copy issue.
#ifndef FLASHATTN_SM80_BWD_DQ_BULK_IN_OPERANDS
#define FLASHATTN_SM80_BWD_DQ_BULK_IN_OPERANDS 1
#endif
// Per-CTA fixed costs (bwd8; they decide the short rows, where a CTA walks few query tiles). H200, all
// three on: +5..+12% at 512 tokens, +1% at 16k (performance-backward.md version 8).
// DKV_VIA_SMEM 1: the dK / dV epilogue stages the 16-bit tiles in shared memory (rows padded by 16
// bytes) and stores whole rows with 16-byte stores; 0: each lane stores its accumulator pairs (4 bytes)
// straight to global memory, with 64-bit row offsets that cost the d 128 kernel 80 B of stack.
// Alone: +3..+10% at 512 tokens (most of version 8's gain).
#ifndef FLASHATTN_SM80_BWD_DKV_VIA_SMEM
#define FLASHATTN_SM80_BWD_DKV_VIA_SMEM 1
#endif
// PROLOGUE_SPLIT 1 (plain kernel): a key tile's first copies form two groups, K + Q + LSE2 and
// V + dO + D; the first query tile's S^T and P wait for the first only, dP^T (after one more barrier)
// for the second; 0: one group, everything landed before the first S^T; 2 (default): 1 except at the
// d 96 / 128 buckets (two-m-tile warps of d > 64). H200 with DKV_VIA_SMEM and LAST_BULK_WAIT_READ on
// (run 2): d 64 +1.6..+2.3% at 512 tokens, +0.6..+1.5% at 2k; d 256 +1% at 512, 0 at 2k; d 128 0 at
// 512, -0.7..-1.2% at 2k (16 B more stack there).
#ifndef FLASHATTN_SM80_BWD_PROLOGUE_SPLIT
#define FLASHATTN_SM80_BWD_PROLOGUE_SPLIT 2
#endif
// LAST_BULK_WAIT_READ 1: after a key tile's last bulk dQ reduction (DQ_BULK) thread 0 waits only until
// the copy engine has read the staging tile, not until the global adds are done (the postprocess, a
// later kernel, is what reads them); 0: waits for completion. Alone: within +-0.5%.
#ifndef FLASHATTN_SM80_BWD_LAST_BULK_WAIT_READ
#define FLASHATTN_SM80_BWD_LAST_BULK_WAIT_READ 1
#endif
// MASK_BRANCH 1: the plain kernel forms P in two versions, with and without the per-element mask,
// chosen per tile; 0: one version whose mask test is per element (version 4).
#ifndef FLASHATTN_SM80_BWD_MASK_BRANCH
#define FLASHATTN_SM80_BWD_MASK_BRANCH 1
#endif

// STEP_POINTERS 1 (version 6, default): the walk over (head, query tile) steps the Q / dO tile
// pointers and the scratch row index by one tile (or by one head at a wrap) instead of forming them
// again from the 64-bit parameters every iteration, and needs_mask is two int compares against
// thresholds formed once per key tile (version 5's profile: ~20% of the stall samples at the loop top,
// address set-up and parameter reloads); 0: version 5. Measured on an H200 (performance-backward.md
// version 6): +1..+4% alone, +1..+2% (d 64) / +3..+6% (d 128) on top of COPY_AFTER_ST, neutral at d 256.
#ifndef FLASHATTN_SM80_BWD_STEP_POINTERS
#define FLASHATTN_SM80_BWD_STEP_POINTERS 1
#endif

// COPY_AFTER_ST (version 6): where the next query tile's copies are issued. The version 5 SASS issues
// them (9 cp.async and ~190 address instructions) at the loop top, right before the spilled Q-phase
// reloads (LDL) and ldmatrix of the first S^T product, which then queue behind them (the loop top's
// long-scoreboard stalls). 1: after this tile's first S^T product at every d; 2 (default): so at
// d <= 128 only (H200: +3..+9% there; -1..-2% at d 256, which has one key m-tile per warp and a
// shorter S^T product); 0: at the loop top (version 5).
#ifndef FLASHATTN_SM80_BWD_COPY_AFTER_ST
#define FLASHATTN_SM80_BWD_COPY_AFTER_ST 2
#endif

// Version 10 (bwd10; performance-backward.md, "Version 10"). Per-bucket switches as bit masks over
// head-dim buckets: bit d / 32 for bucket d (so 1 << 2 = d 64, 1 << 4 = d 128); the defaults are the
// buckets measured on an H200 and tested. (The device runs named them STATIC_BULK_MAX_D / STATIC_NOMASK /
// DEFER_BULK_WAIT_MAX_D; same code.)
// STATIC_BULK_BUCKETS: calls with the bulk dQ reduction (args.dq_bulk: sm_90+, not deterministic,
// head_dim == the bucket) launch a second instance of the plain kernel that knows this at compile time:
// the walk's run-time tests of dq_bulk, the deterministic semaphores and head_dim, and the register
// reductions and address arithmetic they guard, are compiled out (ncu, d 64 s 2k: executed instructions
// -6%, branch instructions -47%, no stack; version 9's profile had 1.5% of the samples in branch
// resolution, FA2 0). H200: d 64 +1..+3%, d 128 +0..+2%.
#ifndef FLASHATTN_SM80_BWD_STATIC_BULK_BUCKETS
#define FLASHATTN_SM80_BWD_STATIC_BULK_BUCKETS ((1 << (64 / 32)) | (1 << (128 / 32)))
#endif
// STATIC_NOMASK_BUCKETS: with the static-bulk instance, calls whose tiles never need the per-element
// mask and are all full (no causal / window, no varlen / seqused, sequence lengths multiples of the
// tiles, head_dim_v == head_dim) launch a third instance without the masked version of the P loop, the
// per-tile mask test and the copies' bounds. H200: d 64 non-causal +1.7..+1.9% on top of the static bulk.
#ifndef FLASHATTN_SM80_BWD_STATIC_NOMASK_BUCKETS
#define FLASHATTN_SM80_BWD_STATIC_NOMASK_BUCKETS (1 << (64 / 32))
#endif
// DEFER_BULK_WAIT_BUCKETS: where the dQ staging tile has its own shared memory, a key tile's last bulk
// dQ reduction is not waited for before the dK / dV epilogue (the next key tile's first mid barrier and
// the kernel's end wait for it): a per-CTA fixed cost off the critical path. H200: +1..+2% at 512-1k
// tokens (d 64, d 128 causal), neutral at long rows.
#ifndef FLASHATTN_SM80_BWD_DEFER_BULK_WAIT_BUCKETS
#define FLASHATTN_SM80_BWD_DEFER_BULK_WAIT_BUCKETS ((1 << (64 / 32)) | (1 << (128 / 32)))
#endif

// Version 11 (bwd11; performance-backward.md, "Version 11"). KV_REGS_BUCKETS (bit d / 32, as above):
// in the static-bulk instances of the plain kernel (version 10's STATIC_BULK / STATIC_NOMASK, one pass of
// S^T / dP^T over both key m-tiles), the warp's A fragments of S^T = K Q^T and dP^T = V dO^T (its keys x
// the whole head dim) are read from shared memory once per key tile and kept in registers across the walk,
// instead of once per query tile: at d 64, 64 of the 576 ldmatrix wavefronts per warp and query tile (the
// shared-memory queue is d 64's limit since version 10), for 16 (K) + 16 (V) registers per key m-tile.
// H200 (d 64, bf16): +1.7..+4.0% non-causal, +1.1..+3.4% causal over version 10; ptxas sm_90: no-mask
// instance 0 B stack (255 registers), static instance 8 B. KV_REGS_WHICH: 1 K only, 2 V only, 3 both (the
// measured best).
#ifndef FLASHATTN_SM80_BWD_KV_REGS_BUCKETS
#define FLASHATTN_SM80_BWD_KV_REGS_BUCKETS (1 << (64 / 32))
#endif
#ifndef FLASHATTN_SM80_BWD_KV_REGS_WHICH
#define FLASHATTN_SM80_BWD_KV_REGS_WHICH 3
#endif

// kGeneral_: the variant for softcap / ALiBi / dropout, whose per-element state does not fit a
// 128-row query tile at d <= 64 (it keeps the 64-row tile there).
template <int kHeadDim_, typename Element_, bool kGeneral_ = false>
struct BackwardConfig {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;
  static_assert(kHeadDim % 32 == 0 && kHeadDim <= 256, "buckets are multiples of 32 up to 256");

  // A CTA owns one key tile of kBlockN keys and walks every query tile of kBlockM
  // queries that sees it. Its warps form kKeyGroups x kSplit: warp (g, h) owns keys
  // [16 T g, 16 T (g + 1)) (T = kKeyTiles m-tiles of 16) and the head-dim columns
  // [h W, h W + W) of their dK and dV (W = kHeadDim / kSplit), so the fp32 accumulators
  // of a key row are split over kSplit warps (d fp32 registers per lane for dK + dV
  // without the split). The
  // scores are computed transposed (S^T = K Q^T, keys x queries); warp (g, h) forms
  // the queries [h M / kSplit, +M / kSplit) of its keys' rows, writes P~^T and dS^T
  // to shared memory, and after one barrier reads the full rows back as the A
  // operands of dV += P~^T dO and dK += dS^T Q (dS^T also feeds dQ = dS K).
  //
  // Each warp owns kKeyTiles m-tiles of 16 keys: with 2 (d <= 128), every B fragment read from shared
  // memory feeds two MMAs, and the CTA's 128 keys halve the dQ reductions into global memory per FLOP
  // (version 3 measured this shape slower only because it spilled; version 4 fits it, see
  // performance-backward.md); above d = 128 the accumulators of two m-tiles of the full column
  // half do not fit (d 256 halves the columns instead: D256_KEY_GROUPS).
  // d 256 with D256_KEY_GROUPS 2: two m-tiles of 64 columns each (same accumulators as one of 128).
  static constexpr bool kD256TwoGroups =
      kHeadDim == 256 && FLASHATTN_SM80_BWD_D256_KEY_GROUPS == 2 && !FLASHATTN_SM80_BWD_SPLIT4;
  static constexpr int kKeyTiles = kHeadDim <= 64    ? FLASHATTN_SM80_BWD_D64_KEY_TILES
                                   : kHeadDim <= 128 ? FLASHATTN_SM80_BWD_KEY_TILES
                                   : kD256TwoGroups  ? 2
                                                     : 1;
  // m-tiles whose S^T and dP^T are live at once (one at a time: fewer live registers at d 96 / 128).
  static constexpr int kScoreTiles =
      kKeyTiles == 2 && kHeadDim > 64 && FLASHATTN_SM80_BWD_SCORES_ONE_TILE ? 1 : kKeyTiles;
  static constexpr int kKeyGroups = kD256TwoGroups ? 2 : 4;  // warps along the keys
  static constexpr int kBlockN = kKeyGroups * 16 * kKeyTiles;
  // 4 column slices where a quarter of d is still a multiple of 16 (d 192, 256) and SPLIT4, else 2.
  static constexpr int kSplit =
      kD256TwoGroups || (FLASHATTN_SM80_BWD_SPLIT4 && kHeadDim > 128 && (kHeadDim / 4) % 16 == 0) ? 4 : 2;
  static constexpr int kWarps = kKeyGroups * kSplit;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockM = kHeadDim <= 64 && !kGeneral_ ? FLASHATTN_SM80_BWD_D64_BLOCK_M : 64;
  static constexpr int kQueriesPerWarp = kBlockM / kSplit;  // S^T columns of one warp
  static constexpr int kColsPerWarp = kHeadDim / kSplit;    // dK / dV columns of one warp
  static_assert(kQueriesPerWarp % 16 == 0 && kColsPerWarp % 16 == 0);
  static constexpr int kStages = 2;  // Q / dO / LSE / D ring over query tiles

  static constexpr int kChunk = 8;  // elements per 16-byte cp.async / ldmatrix row
  static constexpr int kChunksPerRow = kHeadDim / kChunk;
  // dQ = dS K: the (kBlockM x kHeadDim) tile splits into one (16 x kDqCols) task per warp.
  static constexpr int kDqRowTiles = kBlockM / 16;
  static constexpr int kDqCols = kHeadDim * kDqRowTiles / kWarps;
  static_assert(kDqCols % 16 == 0 && kDqCols * kWarps == kHeadDim * kDqRowTiles);
  // m-tiles of one dQ task (DQ_ROWS32: 2 where the row tiles pair up and half the columns are still a
  // multiple of 16), its columns, and the task grid: kDqRowGroups along the rows x the rest along d.
  static constexpr int kDqMTiles =
      FLASHATTN_SM80_BWD_DQ_ROWS32 && kDqRowTiles % 2 == 0 && (kDqCols / 2) % 16 == 0 ? 2 : 1;
  static constexpr int kDqTaskCols = kDqCols / kDqMTiles;
  static constexpr int kDqRowGroups = kDqRowTiles / kDqMTiles;
  // Columns per accumulator chunk: 64 fp32 per lane-row pair at most (32 registers; DQ_CHUNK_REGS).
  static constexpr int kDqChunkLimit = 2 * FLASHATTN_SM80_BWD_DQ_CHUNK_REGS / kDqMTiles;
  static constexpr int kDqChunkCols = kDqTaskCols % kDqChunkLimit == 0 ? kDqChunkLimit : kDqTaskCols;
  static_assert(kDqTaskCols % kDqChunkCols == 0 && kDqChunkCols % 16 == 0);

  static constexpr int kSmemQ = kBlockM * kHeadDim;  // elements, one stage (dO alike)
  static constexpr int kSmemK = kBlockN * kHeadDim;  // K alike, V alike
  static constexpr int kSmemDs = kBlockN * kBlockM;  // P~^T alike
  static constexpr int kSmemBytes =
      (2 * kSmemK + kStages * 2 * kSmemQ + 2 * kSmemDs) * static_cast<int>(sizeof(Element)) +
      kStages * 2 * kBlockM * static_cast<int>(sizeof(float));
  // Two CTAs per SM where the registers allow it (256 threads x 128 registers each).
  // DQ_BULK staging: the kBlockM x kHeadDim fp32 tile after the LSE / D ring, where it fits (227 KB).
  static constexpr int kDqStageBytes = kBlockM * kHeadDim * 4;
  static constexpr bool kDqStageFits = kSmemBytes + kDqStageBytes <= 227 * 1024;
  // DQ_BULK_IN_OPERANDS: where the staging tile does not fit (d 256), it goes into the Q and dO tiles of
  // the query tile just used (kBlockM x d fp32 = exactly the two 16-bit tiles of one ring stage: rows
  // [0, kBlockM / 2) over Q, the rest over dO), free once every warp is done with dV and dK.
  // (16-bit elements only: the fp32 tile is then exactly twice one 16-bit tile; DQ_BEFORE_DK would
  // read Q after the dQ stores.)
  // Only d 256 for now: d 224 qualifies too (its staging tile does not fit either) but was neither tested
  // nor timed with it, so it keeps the reductions.
  static constexpr bool kDqStageInOperands =
      FLASHATTN_SM80_BWD_DQ_BULK_IN_OPERANDS && kHeadDim == 256 && !kDqStageFits && sizeof(Element) == 2 &&
      (kBlockM / 2) % (16 * kDqMTiles) == 0 && !FLASHATTN_SM80_BWD_DQ_BEFORE_DK;
  static constexpr bool kDqBulk =
      FLASHATTN_SM80_BWD_DQ_BULK && kHeadDim % 32 == 0 && (kDqStageFits || kDqStageInOperands);
  // Dynamic shared memory the bulk path adds to kSmemBytes (none when staged in the operand tiles).
  static constexpr int kDqStageExtraBytes = kDqBulk && !kDqStageInOperands ? kDqStageBytes : 0;
  static constexpr int kMinBlocksPerSm = kHeadDim <= 96 && kKeyTiles == 1 ? 2 : 1;
  // COPY_AFTER_ST: the next query tile's copies after the first S^T product (else at the loop top).
  static constexpr bool kCopyAfterSt =
      FLASHATTN_SM80_BWD_COPY_AFTER_ST == 1 || (FLASHATTN_SM80_BWD_COPY_AFTER_ST == 2 && kHeadDim <= 128);
  static_assert(kBlockM <= kBackwardRowPad && kBackwardRowPad % kBlockM == 0);
  // Version 10's per-bucket switches (above).
  static constexpr bool kStaticBulk =
      ((FLASHATTN_SM80_BWD_STATIC_BULK_BUCKETS >> (kHeadDim / 32)) & 1) != 0 && !kGeneral_ && kDqBulk;
  static constexpr bool kStaticNoMask =
      kStaticBulk && ((FLASHATTN_SM80_BWD_STATIC_NOMASK_BUCKETS >> (kHeadDim / 32)) & 1) != 0;
  static constexpr bool kDeferBulkWait =
      ((FLASHATTN_SM80_BWD_DEFER_BULK_WAIT_BUCKETS >> (kHeadDim / 32)) & 1) != 0 && kDqBulk &&
      !kDqStageInOperands;
  // Version 11's switch (above): which of K / V keep their S^T / dP^T fragments in registers.
  static constexpr bool kKvRegsBucket = ((FLASHATTN_SM80_BWD_KV_REGS_BUCKETS >> (kHeadDim / 32)) & 1) != 0 &&
                                        kStaticBulk && kScoreTiles == kKeyTiles;
  static constexpr bool kKRegs = kKvRegsBucket && (FLASHATTN_SM80_BWD_KV_REGS_WHICH & 1) != 0;
  static constexpr bool kVRegs = kKvRegsBucket && (FLASHATTN_SM80_BWD_KV_REGS_WHICH & 2) != 0;
};

struct BackwardKernelArgs {
  BackwardParams p;
  std::int64_t rows_padded =
      0;                      // per (sequence, head) rows of the scratch arrays (multiple of kBackwardRowPad)
  float* lse_log2 = nullptr;  // (batch, heads, rows_padded): LSE * log2(e); +inf where P must be 0
  float* delta = nullptr;     // (batch, heads, rows_padded): D = rowsum(dO * O)
  float* dq_accum = nullptr;  // (batch, heads, rows_padded, accum_cols()) fp32
  // The accumulator's row width: 0 for p.head_dim; cuda_sm90's kernel head dim where it runs a padded head
  // dim (its columns past p.head_dim are zeros the postprocess does not read).
  int dq_accum_cols = 0;
  FLASHATTN_HD std::int64_t accum_cols() const { return dq_accum_cols > 0 ? dq_accum_cols : p.head_dim; }
  int* dq_semaphore = nullptr;  // deterministic: (batch, heads, m_blocks) counters
  // Deterministic: CTAs claim tiles from this counter in increasing order (zeroed by the preprocess).
  unsigned long long* tile_counter = nullptr;
  int m_blocks = 0;              // rows_padded / 64: deterministic semaphores per (b, h)
  int n_blocks = 0;              // key tiles per sequence (seqlen_k bound); set by launch_backward
  std::int64_t total_tiles = 0;  // n_blocks * batch * heads_kv; set by launch_backward
  float scale_log2 = 0.f;
  std::uint32_t dropout_threshold = 0;
  float dropout_rescale = 1.f;
  PhiloxKeys dropout_keys{};  // dropout_keys(seed, offset): the key schedule, read as constant operands
  // DQ_BULK in use for this call (set by run(): sm_90+ device, not deterministic, head_dim == the
  // bucket, config kDqBulk): the kernel stages dQ and reduces it in bulk, and the dQ accumulator rows
  // have their 16-byte units swizzled (dq_bulk_unit); the launch adds the staging shared memory.
  bool dq_bulk = false;
};

// The preprocess (which 0), dsink (1) and postprocess (2) kernels (backward_aux_kernels.h), instantiated
// for __half and __nv_bfloat16 in the generated backward_sm80_aux.cu; cuda_sm90's backward launches them too.
template <typename Element>
cudaError_t launch_backward_aux(const BackwardKernelArgs& args, int which, cudaStream_t stream);

// DQ_SWIZZLE_HALF 1 (version 6, default): dq_bulk_unit XORs with 2 (row % 4) instead of row % 8 (0,
// version 5). ncu on version 5 shows the staging stores at 2x their ideal wavefronts: an 8-byte store
// is served per half-warp (rows r..r+3 of the lane pattern), and XOR with row % 8 sends the two unit
// halves h of those 4 rows into the same 4 units; 2 (row % 4) spreads them over all 8. H200: +1..+3%
// at d 64 / d 128 on top of COPY_AFTER_ST (d 256: measured with its version 7 bulk path only).
#ifndef FLASHATTN_SM80_BWD_DQ_SWIZZLE_HALF
#define FLASHATTN_SM80_BWD_DQ_SWIZZLE_HALF 1
#endif

// Physical 16-byte unit of logical unit `unit` (4 floats) of dQ accumulator row `row` under DQ_BULK:
// an XOR inside each group of 8 units (the row length is a multiple of 32 floats there), so that the
// accumulator stores into the staging tile spread over the banks. The main kernel's stores and the
// postprocess's loads both go through this function.
__host__ __device__ __forceinline__ int dq_bulk_unit(int unit, int row) {
#if FLASHATTN_SM80_BWD_DQ_SWIZZLE_HALF
  return unit ^ ((row & 3) << 1);
#else
  return (unit & ~7) | ((unit ^ row) & 7);
#endif
}

}  // namespace flashattn::detail::cuda_sm80
