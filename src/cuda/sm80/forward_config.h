// The forward kernel's configuration as data.
//
// TileShape holds every choice the tuning tool may vary (tools/kernels/
// tune_forward.py); ForwardConfig derives every tile size, thread count and
// shared-memory size from (head-dim bucket, element type, TileShape) in one
// place. Which TileShape runs for a (bucket, dtype, causal) is read from the
// checked-in table src/cuda/sm80/forward_tuning.json by the generator
// (src/cuda/generate_kernels.py), which instantiates exactly those shapes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace flashattn::detail::cuda_sm80 {

// A structural type, so it can be a template argument (C++20).
struct TileShape {
  // 16-row MMA tiles per warp. Two (FlashAttention 2's 32 rows per warp) reuse
  // every K/V fragment read from shared memory for two MMAs, halving the
  // ldmatrix traffic per FLOP; one leaves more registers for wide head dims.
  int m_tiles_per_warp = 1;
  int warps = 4;
  int block_n = 64;  // keys per K/V tile
  // K/V ring depth: tile n - (stages - 1) is copied while tile n is used. 1: single K and V
  // buffers, V_n copied during S = Q K_n^T and K_{n-1} during P V_n (two barriers per tile).
  int stages = 2;
  // Q fragments kept in registers across the KV loop instead of re-read from
  // shared memory per tile.
  bool q_in_registers = false;
  int min_blocks_per_sm = 1;  // __launch_bounds__ occupancy hint (caps registers per thread)
  // Persistent grid (one CTA per resident slot, tiles dealt out in a snake order) in which a CTA
  // issues the next tile's Q and first K/V tile during the current tile's last K/V iteration, and
  // stores O from registers (shared memory stays free for those copies). Hides the per-tile
  // prologue copy that short sequences pay once per few K/V tiles. Needs stages == 2.
  bool prefetch_next = false;
  // Online softmax of all m-tiles in one pass (masks first, then every row's max reduction, then the
  // exponentials) instead of mask + softmax per m-tile: the per-m-tile mask branch split the two
  // m-tiles' dependent max/shuffle/exp chains into separate basic blocks, so neither could hide the
  // other's latency (the top stall at s = 512 was "fixed latency execution dependency").
  bool joint_softmax = false;
  // Final O stored straight from registers (16-byte stores after a quad transpose) instead of
  // staged through shared memory: one block barrier and a shared-memory round trip less per tile.
  bool o_from_registers = false;
  // S = Q K^T and O += P V with each shared-memory fragment read one step ahead of its MMAs
  // (warp_mma.h: gemm_qk_prefetched / gemm_pv_prefetched).
  bool prefetch_fragments = false;
  // Dense K/V tiles that are whole (every row present, head dim == bucket) are copied without per-copy
  // bounds tests or zero-fill selects (gmem_tile_loader.h: load_whole_strided_tile_async), and so are
  // whole paged tiles inside one page in the kPagedLoads kernel (paged_kv.h); the ragged last tile,
  // tiles across pages and narrower head dims keep the checked loaders.
  bool whole_tile_loads = false;
  // Ring only: the copy of the tile ahead is issued after S = Q K^T (before the mask and softmax)
  // instead of right after the loop-head barrier, so the GEMM's first ldmatrix do not queue behind
  // the copies, and the copies overlap the softmax, which reads no shared memory.
  bool late_copies = false;
  // The epilogue's per-row 1/sum and log2(sum) with the approximate instructions (rcp.approx,
  // lg2.approx, as the sm90 kernels) and selects instead of libm's log2f and the division's slow-path
  // branches: ~45 dependent instructions per row, paid once per query tile (3% of the samples at
  // d128 s = 512, session 7's ncu).
  bool approx_epilogue = false;
  // Single buffer only (stages == 1): the wait for V_n, the second barrier and the copy of K_{n-1} move
  // from after the softmax to right after S = Q K_n^T, FlashAttention 2's order. The softmax and P V_n
  // then form one basic block (the copy's branch and the barrier had split them, so the softmax's
  // exponentials and O rescale could not overlap P V's MMAs), and K_{n-1} has the softmax and P V to
  // land instead of P V alone.
  bool early_k_copy = false;
  // K/V copies with one thread per (row, 16-byte chunk of a 64-column panel) and the thread's rows
  // kThreads / 8 apart in every panel: the row step is a multiple of the swizzle period, so each
  // thread's shared addresses are one base plus immediates, and its global ones one pointer per row
  // pass plus immediates (FlashAttention 2's copy layout). Whole tiles (every row present, head dim ==
  // bucket; uniform per tile) copy without bounds tests; the ragged last tile checks each copy.
  bool panel_loads = false;
  // S = Q K^T with the next k-step's Q and K fragments read before the current k-step's MMAs
  // (warp_mma.h: gemm_qk_step_ahead), instead of one K fragment ahead (prefetch_fragments) or none.
  bool qk_step_ahead = false;
  // Whether a key tile needs per-element masks is decided from two bounds computed once per query
  // tile (the unmasked key tiles form one interval) instead of re-deriving it from the mask
  // parameters per key tile (score_mask.h tile_needs_mask: constant loads and a chain of branches
  // between S = Q K^T and the softmax).
  bool mask_bounds = false;
  // ldmatrix addresses of Q, K and V from one per-lane register per operand (phase 0 XORed with the
  // chunk pair, smem_layout.h LaneOffsets::address) instead of kPhases per-lane phase registers kept
  // live across the K/V loop. Frees 6 registers at 128-byte panels (d64's plain kernels reloaded
  // the spilled phases every K/V tile); it made the kGeneral and d128 kernels spill more (local SASS,
  // docs/kernel-notes.md v14), hence an option.
  bool xor_lane_offsets = false;
  // The per-CTA setup before the first copies without the generic arithmetic a plain problem does not
  // need: the tile decode by multiply-high with the host's divisors (tile_scheduler.h
  // decode_tile_fast; the GQA head too) instead of 32-bit divisions by kernel arguments, and the
  // sequence bounds straight from seqlen_q / seqlen_k when the host found the batch dense
  // (ForwardKernelArgs::dense) instead of clipped_sequence_lengths' chain of tests and loads. Paid once
  // per query tile: 2048 times in a d256 s = 512 launch of one CTA per tile.
  bool lean_setup = false;
  // The O rescale and the corrections' exponentials only on tiles that raise one of the warp's row maxima by
  // more than 2^8 (one vote per warp; online_softmax.h), instead of on every tile as FlashAttention 2 does.
  // At d256 the rescale is 128 multiplications per thread and tile, ~13% of a warp's instructions.
  bool conditional_rescale = false;
};

template <int kHeadDim_, typename Element_, TileShape kShape_>
struct ForwardConfig {
  using Element = Element_;
  static constexpr TileShape kShape = kShape_;
  static constexpr int kHeadDim = kHeadDim_;
  static_assert(kHeadDim % 32 == 0 && kHeadDim <= 256, "buckets are multiples of 32 up to 256");
  static_assert(kShape.m_tiles_per_warp >= 1 && kShape.m_tiles_per_warp <= 2);
  static_assert(kShape.block_n % 16 == 0 && kShape.stages >= 1 && kShape.warps >= 1);

  // Warp w owns rows [w * kRowsPerWarp, (w + 1) * kRowsPerWarp) of the query
  // tile for the whole KV loop, so the online-softmax row statistics never
  // leave a quad of lanes.
  static constexpr int kMTiles = kShape.m_tiles_per_warp;
  static constexpr int kRowsPerWarp = 16 * kMTiles;
  static constexpr int kWarps = kShape.warps;
  static constexpr int kBlockM = kWarps * kRowsPerWarp;
  static constexpr int kBlockN = kShape.block_n;
  static constexpr int kStages = kShape.stages;
  static constexpr bool kQInRegisters = kShape.q_in_registers;
  static constexpr int kMinBlocksPerSm = kShape.min_blocks_per_sm;
  static constexpr bool kPrefetchNext = kShape.prefetch_next;
  static_assert(!kPrefetchNext || kShape.stages == 2, "prefetch_next runs on the two-stage ring");
  static constexpr bool kJointSoftmax = kShape.joint_softmax;
  static constexpr bool kOFromRegisters = kShape.o_from_registers;
  static constexpr bool kPrefetchFragments = kShape.prefetch_fragments;
  static constexpr bool kWholeTileLoads = kShape.whole_tile_loads;
  static constexpr bool kLateCopies = kShape.late_copies;
  static constexpr bool kApproxEpilogue = kShape.approx_epilogue;
  static_assert(!kLateCopies || (kStages >= 2 && !kPrefetchNext), "late_copies moves the ring's copy");
  static constexpr bool kEarlyKCopy = kShape.early_k_copy;
  static_assert(!kEarlyKCopy || kStages == 1, "early_k_copy moves the single buffer's K copy");
  static constexpr bool kPanelLoads = kShape.panel_loads;
  static_assert(!kPanelLoads || !kShape.whole_tile_loads, "panel_loads replaces whole_tile_loads");
  static constexpr bool kQKStepAhead = kShape.qk_step_ahead;
  static_assert(!kQKStepAhead || !kShape.prefetch_fragments, "qk_step_ahead replaces prefetch_fragments");
  static constexpr bool kMaskBounds = kShape.mask_bounds;
  static constexpr bool kXorLaneOffsets = kShape.xor_lane_offsets;
  static constexpr bool kLeanSetup = kShape.lean_setup;
  static constexpr bool kConditionalRescale = kShape.conditional_rescale;
  static constexpr int kThreads = kWarps * 32;

  static constexpr int kChunk = 8;  // elements per 16-byte cp.async / ldmatrix row
  static constexpr int kChunksPerRow = kHeadDim / kChunk;

  static constexpr int kSmemQ = kBlockM * kHeadDim;  // elements
  static constexpr int kSmemK = kBlockN * kHeadDim;
  static constexpr int kSmemV = kBlockN * kHeadDim;
  static constexpr int kSmemBytes =
      (kSmemQ + kStages * (kSmemK + kSmemV)) * static_cast<int>(sizeof(Element));
  // LaneOffsets::address's XOR needs every Q/K/V tile base 128-byte aligned (the block's base is).
  static_assert(!kXorLaneOffsets ||
                    (kSmemQ * sizeof(Element) % 128 == 0 && kSmemK * sizeof(Element) % 128 == 0),
                "xor_lane_offsets needs 128-byte aligned tiles");
};

// Tile sizes a host needs for grid sizing and the split heuristic, from the
// same TileShape the kernel was instantiated with.
constexpr int block_m_of(const TileShape& s) { return s.warps * 16 * s.m_tiles_per_warp; }

}  // namespace flashattn::detail::cuda_sm80
