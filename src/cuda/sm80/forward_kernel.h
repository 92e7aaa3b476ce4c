// The FlashAttention-2 forward kernel for compute capability 8.0+.
//
// A CTA computes one query tile (kBlockM rows of one head of one sequence) and
// walks its visible key tiles from last to first, so the tiles that need
// per-element masks (the diagonal and the ragged end) come first and the rest
// run the unmasked path. Per key tile:
//   wait K/V_n, barrier | issue K/V_{n-1} | S = Q K_n^T | mask, online softmax | O += P V_n
// with K/V in a ring of kStages shared buffers, so each copy overlaps a whole
// iteration of the other stage's math, and one barrier per tile both publishes
// tile n and frees the stage of tile n + 1 for the next copy. With kStages == 1
// (single K and V buffers):
//   wait K_n, barrier | issue V_n | S = Q K_n^T | softmax | wait V_n, barrier | issue K_{n-1} | O += P V_n
// or, with early_k_copy (FlashAttention 2's order),
//   wait K_n, barrier | issue V_n | S = Q K_n^T | wait V_n, barrier | issue K_{n-1} | softmax | O += P V_n
//
// With prefetch_next (TileShape) the grid is persistent: in the last iteration of a tile
// every warp, after its S = Q K^T, issues the next tile's first K/V into the free ring stage and
// its own rows of the next Q, and O is stored from registers, so the next tile starts with its
// copies already in flight instead of one exposed Q + K + V copy.
//
// kGeneral adds the per-element score modifiers (softcap, ALiBi, a non-positive scale) and dropout;
// without it the scale is folded into the exponent. kBias (with kGeneral, dense K/V): options.bias too,
// in instances of its own, so that the other general kernels keep their registers (score_mask.h).
//
// kPagedLoads: paged K/V tiles through paged_kv.h's loaders (a tile inside one page as dense
// rows, one across pages row by row with the table reads of a batch in flight together); the
// backend launches it for every paged problem, kGeneral or not. The other kernels keep the generic
// loader's paged branch (one dependent table read and division per 16-byte copy, ~1.9x slower
// than dense), which they never take: compiling the paged loaders into the dense kernel cost d64
// dense 2-6% (H200, session 7), a register-allocation effect of a branch dense problems never
// take, so the dense kernels were left exactly as measured before.
#pragma once

#include <cstdint>

#include "common/params.h"
#include "cuda/ptx/ptx.h"
#include "cuda/sm80/clipped_indices.h"
#include "cuda/sm80/dropout.h"
#include "cuda/sm80/epilogue.h"
#include "cuda/sm80/forward_config.h"
#include "cuda/sm80/gmem_tile_loader.h"
#include "cuda/sm80/kernel_args.h"
#include "cuda/sm80/online_softmax.h"
#include "cuda/sm80/paged_kv.h"
#include "cuda/sm80/score_mask.h"
#include "cuda/sm80/smem_layout.h"
#include "cuda/sm80/tile_scheduler.h"
#include "cuda/sm80/warp_mma.h"

namespace flashattn::detail::cuda_sm80 {

// Key-tile range [begin, end) a query tile must visit, after the mask and the split.
struct KeyTileRange {
  int begin;
  int end;
};

template <class Cfg>
__device__ __forceinline__ KeyTileRange key_tile_range(const AttentionParams& p, int m0, std::int64_t sq,
                                                       std::int64_t sk, int split, int num_splits) {
  std::int64_t end = (sk + Cfg::kBlockN - 1) / Cfg::kBlockN;
  std::int64_t begin = 0;
  const std::int64_t last_row = (m0 + Cfg::kBlockM < sq ? m0 + Cfg::kBlockM : sq) - 1;
  if (p.mask.window_right >= 0) {
    const std::int64_t last_key = last_row + sk - sq + p.mask.window_right;
    const std::int64_t limit = last_key < 0 ? 0 : last_key / Cfg::kBlockN + 1;
    if (limit < end) end = limit;
  }
  if (p.mask.window_left >= 0) {
    const std::int64_t first_key = m0 + sk - sq - p.mask.window_left;
    if (first_key > 0) begin = first_key / Cfg::kBlockN;
  }
  if (begin > end) begin = end;
  if (num_splits > 1) {
    const std::int64_t per_split = (end - begin + num_splits - 1) / num_splits;
    const std::int64_t split_begin = begin + split * per_split;
    const std::int64_t split_end = split_begin + per_split;
    begin = split_begin < end ? split_begin : end;
    end = split_end < end ? split_end : end;
  }
  return KeyTileRange{static_cast<int>(begin), static_cast<int>(end)};
}

// The key tiles of a query tile [m0, m0 + kBlockM) that need no per-element mask (mask_bounds): every
// condition of tile_needs_mask is monotone in the tile's first key n0 (the ragged end and the right
// window mask tiles from some n0 on, the left window tiles up to some n0), so the unmasked tiles are
// those with first_n0 <= n0 <= last_n0; both bounds clamped to int (n0 is an int).
struct UnmaskedKeyTiles {
  int first_n0;
  int last_n0;
};

template <class Cfg>
__device__ __forceinline__ UnmaskedKeyTiles unmasked_key_tiles(const MaskParams& mask, int m0,
                                                               std::int64_t sq, std::int64_t sk,
                                                               bool enabled) {
  if (!enabled) return UnmaskedKeyTiles{0, 0};
  std::int64_t last = sk - Cfg::kBlockN;
  if (mask.window_right >= 0) {
    const std::int64_t right = m0 + sk - sq + mask.window_right - Cfg::kBlockN + 1;
    if (right < last) last = right;
  }
  std::int64_t first = 0;
  if (mask.window_left >= 0) {
    const std::int64_t left = m0 + Cfg::kBlockM - 1 + sk - sq - mask.window_left;
    if (left > first) first = left;
  }
  constexpr std::int64_t kIntMax = 0x7fffffff;
  return UnmaskedKeyTiles{static_cast<int>(first < kIntMax ? first : kIntMax),
                          static_cast<int>(last < -1 ? -1 : (last < kIntMax ? last : kIntMax))};
}

// Tile of round `round` of CTA `cta` among `ctas`: rounds alternate direction (a snake), so with a
// persistent grid and tiles that get cheaper along the order (causal, heads fastest) every CTA
// gets a heavy and a light one in turn. Round 0 is blockIdx.x, as in a one-tile-per-CTA grid.
__device__ __forceinline__ std::int64_t tile_of_round(std::int64_t round, std::int64_t cta,
                                                      std::int64_t ctas) {
  return round * ctas + ((round & 1) != 0 ? ctas - 1 - cta : cta);
}

template <class Cfg, bool kGeneral, bool kPagedLoads = false, bool kBias = false>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSm)
    forward_kernel(const __grid_constant__ ForwardKernelArgs args) {
  static_assert(!kBias || (kGeneral && !kPagedLoads), "a bias runs on the dense general kernel");
  using Element = typename Cfg::Element;
  using QTile = SwizzledTile<Cfg::kBlockM, Cfg::kHeadDim>;
  using KVTile = SwizzledTile<Cfg::kBlockN, Cfg::kHeadDim>;
  constexpr int kNTiles = Cfg::kBlockN / 8;
  constexpr int kOTiles = Cfg::kHeadDim / 8;
  constexpr float kLog2e = 1.4426950408889634f;
  // kStages == 1: one K and one V buffer, refilled alternately (FlashAttention 2's schedule); the
  // smaller footprint is what fits two d256 CTAs of 64 rows on an SM.
  constexpr bool kSingleBuffer = Cfg::kStages == 1;

  extern __shared__ __align__(128) unsigned char smem_bytes[];
  Element* q_smem = reinterpret_cast<Element*>(smem_bytes);
  Element* k_smem = q_smem + Cfg::kSmemQ;
  Element* v_smem = k_smem + Cfg::kStages * Cfg::kSmemK;

  const AttentionParams& p = args.p;
  const int thread = threadIdx.x;
  const int warp = thread / 32;
  const int lane = thread % 32;
  const int row0 = warp * Cfg::kRowsPerWarp;  // this warp's first row in the query tile
  const std::uint32_t q_smem_u32 = ptx::cvta_to_shared(q_smem);
  const std::uint32_t k_smem_u32 = ptx::cvta_to_shared(k_smem);
  const std::uint32_t v_smem_u32 = ptx::cvta_to_shared(v_smem);
  const LaneOffsets<QTile> q_offsets = q_lane_offsets<QTile>(row0, lane);
  const LaneOffsets<KVTile> k_offsets = k_lane_offsets<KVTile>(lane);
  const LaneOffsets<KVTile> v_offsets = v_lane_offsets<KVTile>(lane);

  const auto* q_base = static_cast<const Element*>(p.q.data);
  // whole_tile_loads: dense rows whose tile spans less than 2 GB take load_whole_strided_tile_async
  // for every whole tile (K/V, and Q in the prologue), in buckets whose chunks divide among the threads.
  constexpr bool kWholeKVLoads = Cfg::kWholeTileLoads && kWholeTileLoadable<Cfg, Cfg::kBlockN>;
  // panel_loads: dense K/V tiles with FlashAttention 2's copy layout (load_panel_tile_async).
  constexpr bool kPanelKVLoads = Cfg::kPanelLoads && kPanelTileLoadable<Cfg, KVTile, Cfg::kBlockN>;
  constexpr bool kWholeQLoads = Cfg::kWholeTileLoads && kWholeTileLoadable<Cfg, Cfg::kBlockM>;
  constexpr std::uint64_t kMaxWholeTileStride =
      0x7fffffffull / (static_cast<std::uint64_t>(Cfg::kBlockN) * sizeof(Element));
  constexpr std::uint64_t kMaxWholeQTileStride =
      0x7fffffffull / (static_cast<std::uint64_t>(Cfg::kBlockM) * sizeof(Element));
  // K/V tile n_block of a sequence into a stage.
  auto load_kv = [&](Element* smem, const KVRows<Element>& kv, const SequenceLengths& seq, int cols,
                     int n_block) {
    const int n0 = n_block * Cfg::kBlockN;
    const int rows = static_cast<int>(seq.k - n0 < Cfg::kBlockN ? seq.k - n0 : Cfg::kBlockN);
    if (kv.table == nullptr) {
      if constexpr (kPanelKVLoads) {
        load_panel_tile_async<Cfg, KVTile, Cfg::kBlockN>(smem, kv.row(n0), kv.row_stride,
                                                         rows == Cfg::kBlockN && cols == Cfg::kHeadDim, rows,
                                                         cols, thread);
      } else if constexpr (kWholeKVLoads) {
        // Uniform across the CTA: every tile but a sequence's ragged last one, when the head dim fills
        // the bucket (the benchmark grid's case).
        if (rows == Cfg::kBlockN && cols == Cfg::kHeadDim &&
            static_cast<std::uint64_t>(kv.row_stride) <= kMaxWholeTileStride) {
          load_whole_strided_tile_async<Cfg, KVTile, Cfg::kBlockN>(
              smem, kv.row(n0), static_cast<int>(kv.row_stride * static_cast<std::int64_t>(sizeof(Element))),
              thread);
        } else {
          load_strided_tile_async<Cfg, KVTile, Cfg::kBlockN>(smem, kv.row(n0), kv.row_stride, rows, cols,
                                                             thread);
        }
      } else {
        load_strided_tile_async<Cfg, KVTile, Cfg::kBlockN>(smem, kv.row(n0), kv.row_stride, rows, cols,
                                                           thread);
      }
    } else if constexpr (kPagedLoads) {
      // A tile inside one page as dense rows, else row by row through the block table (paged_kv.h).
      load_paged_tile_async<Cfg, KVTile, Cfg::kBlockN>(smem, kv, n0, rows, cols, thread);
    } else {
      load_tile_async<Cfg, KVTile, Cfg::kBlockN>(
          smem, [&](int row) { return kv.row_by_division(n0 + row); }, rows, cols, thread);
    }
  };
  // prefetch_next: issues tile `tile`'s first K/V into `kv_stage` (kv_stage >= 0), or this warp's
  // rows of its Q (kv_stage < 0); false (nothing issued) when there is no such tile or it has no key
  // tile to visit. Two calls, so that neither the K/V copy (issued at the start of the last
  // iteration, before S is live) nor the Q copy (after the last P V, when this warp is done with
  // its Q rows) keeps the other's indices alive across the iteration.
  // Index arithmetic in 32 bits only, and no split-KV: a 64-bit division is a runtime call, and a
  // call in the K/V loop made ptxas spill 600 B of accumulators around it.
  auto prefetch_tile = [&](std::int64_t tile, int kv_stage) {
    if (tile >= args.total_tiles || args.num_splits != 1 || args.total_tiles > 0x7fffffff) return false;
    const TileIndex index = decode_tile_as<std::uint32_t>(args, static_cast<std::uint32_t>(tile));
    const SequenceLengths seq = clipped_sequence_lengths(p, index.batch);
    const int m0 = index.m_block * Cfg::kBlockM;
    if (m0 >= seq.q) return false;
    const KeyTileRange range = key_tile_range<Cfg>(p, m0, seq.q, seq.k, 0, 1);
    if (range.begin >= range.end) return false;
    if (kv_stage >= 0) {
      // kv_head_of in 32 bits (heads <= total_tiles < 2^31).
      const int group = static_cast<int>(p.heads) / static_cast<int>(p.heads_kv);
      const std::int64_t head_kv = static_cast<int>(index.head) / group;
      // The generic (rolled) loader, for the same reason as load_warp_rows_async.
      const int n0 = (range.end - 1) * Cfg::kBlockN;
      const int rows = static_cast<int>(seq.k - n0 < Cfg::kBlockN ? seq.k - n0 : Cfg::kBlockN);
      const KVRows<Element> k_next(p, p.k, seq, index.batch, head_kv, args.page_divisor);
      const KVRows<Element> v_next(p, p.v, seq, index.batch, head_kv, args.page_divisor);
      load_tile_async<Cfg, KVTile, Cfg::kBlockN>(
          k_smem + kv_stage * Cfg::kSmemK, [&](int row) { return k_next.row(n0 + row); }, rows,
          static_cast<int>(p.head_dim), thread);
      load_tile_async<Cfg, KVTile, Cfg::kBlockN>(
          v_smem + kv_stage * Cfg::kSmemV, [&](int row) { return v_next.row(n0 + row); }, rows,
          static_cast<int>(p.head_dim_v), thread);
    } else {
      const Element* q_tile = q_base + query_offset(p.q, seq, index.batch, m0, index.head);
      load_warp_rows_async<Cfg, QTile>(q_smem, q_tile, p.q.row_stride, static_cast<int>(seq.q - m0),
                                       static_cast<int>(p.head_dim), row0, lane);
    }
    return true;
  };

  bool prefetched = false;  // prefetch_next: this tile's first copies were issued by the previous one
  int stage = 0;            // ring stage of the tile being computed
  for (std::int64_t round = 0;; ++round) {
    const std::int64_t tile = tile_of_round(round, blockIdx.x, gridDim.x);
    if (tile >= args.total_tiles) break;
    TileIndex index;
    SequenceLengths seq;
    // lean_setup: the host's divisors (every tile index < 2^31) and density test (backend.cu
    // resolve_lean_setup). Not in the kPagedLoads kernels (paged problems are never the plain case
    // it is for; with it the d128 paged kernel spilled 4 B where it spilled none).
    constexpr bool kLeanSetup = Cfg::kLeanSetup && !kPagedLoads;
    const bool fast_decode = kLeanSetup && args.total_tiles <= 0x7fffffff;
    if constexpr (kLeanSetup) {
      index = fast_decode ? decode_tile_fast(args, static_cast<int>(tile))
                          : decode_tile_as<std::int64_t>(args, tile);
      if (args.dense) {
        seq.q = p.seqlen_q;
        seq.k = p.seqlen_k;
        seq.k_batch = index.batch;
      } else {
        seq = clipped_sequence_lengths(p, index.batch);
      }
    } else {
      index = decode_tile(args, tile);
      seq = clipped_sequence_lengths(p, index.batch);
    }
    const int m0 = index.m_block * Cfg::kBlockM;
    if (m0 >= seq.q) continue;  // varlen: this sequence is shorter than the bound (never prefetched)
    const std::int64_t head_kv = fast_decode ? fast_divide(static_cast<int>(index.head), args.div_kv_group)
                                             : kv_head_of(p, index.head);
    const KeyTileRange range = key_tile_range<Cfg>(p, m0, seq.q, seq.k, index.split, args.num_splits);

    const KVRows<Element> k_rows(p, p.k, seq, index.batch, head_kv, args.page_divisor);
    const KVRows<Element> v_rows(p, p.v, seq, index.batch, head_kv, args.page_divisor);
    const int q_rows = static_cast<int>(seq.q - m0 < Cfg::kBlockM ? seq.q - m0 : Cfg::kBlockM);
    if constexpr (!Cfg::kPrefetchNext) stage = 0;
    bool prefetched_next = false;

    float o[Cfg::kMTiles][kOTiles][4];
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
#pragma unroll
      for (int d = 0; d < kOTiles; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
    }
    OnlineSoftmax<kNTiles, kOTiles, Cfg::kConditionalRescale> softmax[Cfg::kMTiles];
    QFragments<Cfg> q_fragments;

    const ScoreModifiers modifiers = ScoreModifiers::make(
        p.scale, p.softcap,
        p.alibi_slopes != nullptr ? p.alibi_slopes[index.batch * p.alibi_batch_stride + index.head] : 0.f);
    [[maybe_unused]] const ScoreBias bias = kBias ? ScoreBias::make(p, index.batch, index.head) : ScoreBias{};
    const float scale_log2 = kGeneral ? 1.f : args.scale_log2;
    const std::int64_t i0 = m0 + row0 + (lane >> 2);  // this lane's first row (m-tile mt: + 16 * mt)
    [[maybe_unused]] const UnmaskedKeyTiles unmasked =
        unmasked_key_tiles<Cfg>(p.mask, m0, seq.q, seq.k, Cfg::kMaskBounds);

    if (range.begin < range.end) {
      // cp.async groups: group g holds K/V of the g-th tile visited (and Q, with the first), and
      // every iteration commits one more (empty when no tile is left, so the waits below keep their
      // meaning). With a single buffer the first group is Q and K only.
      // (Waiting for the first tile's V separately in the ring too, so that the first S = Q K^T
      // starts earlier, cost d256 7% at every seqlen in v7b: the conditional barrier before P V
      // keeps the compiler from hoisting V's ldmatrix above the softmax.)
      if (!prefetched) {
        const Element* q_tile = q_base + query_offset(p.q, seq, index.batch, m0, index.head);
        if constexpr (kWholeQLoads) {
          if (q_rows == Cfg::kBlockM && p.head_dim == Cfg::kHeadDim &&
              static_cast<std::uint64_t>(p.q.row_stride) <= kMaxWholeQTileStride) {
            load_whole_strided_tile_async<Cfg, QTile, Cfg::kBlockM>(
                q_smem, q_tile, static_cast<int>(p.q.row_stride * static_cast<std::int64_t>(sizeof(Element))),
                thread);
          } else {
            load_strided_tile_async<Cfg, QTile, Cfg::kBlockM>(q_smem, q_tile, p.q.row_stride, q_rows,
                                                              static_cast<int>(p.head_dim), thread);
          }
        } else {
          load_strided_tile_async<Cfg, QTile, Cfg::kBlockM>(q_smem, q_tile, p.q.row_stride, q_rows,
                                                            static_cast<int>(p.head_dim), thread);
        }
        load_kv(k_smem + stage * Cfg::kSmemK, k_rows, seq, static_cast<int>(p.head_dim), range.end - 1);
        if constexpr (!kSingleBuffer) {
          load_kv(v_smem + stage * Cfg::kSmemV, v_rows, seq, static_cast<int>(p.head_dim_v), range.end - 1);
        }
        ptx::cp_async_commit_group();
      }
      if constexpr (!kSingleBuffer && !Cfg::kPrefetchNext) {
#pragma unroll
        for (int ring = 1; ring < Cfg::kStages - 1; ++ring) {
          const int n_block = range.end - 1 - ring;
          if (n_block >= range.begin) {
            load_kv(k_smem + ring * Cfg::kSmemK, k_rows, seq, static_cast<int>(p.head_dim), n_block);
            load_kv(v_smem + ring * Cfg::kSmemV, v_rows, seq, static_cast<int>(p.head_dim_v), n_block);
          }
          ptx::cp_async_commit_group();
        }
      }

      for (int n_block = range.end - 1; n_block >= range.begin; --n_block) {
        const int n0 = n_block * Cfg::kBlockN;
        // K/V of tile n (and Q) has landed for this thread (only K with a single buffer); the
        // barrier makes every thread's copies visible, and says that every warp has finished the
        // previous iteration, so the buffers it read are free for the copy issued next: one
        // barrier per tile in the ring (v7), two with a single buffer (FlashAttention 2's schedule).
        ptx::cp_async_wait_group<kSingleBuffer ? 0 : Cfg::kStages - 2>();
        __syncthreads();
        if constexpr (kSingleBuffer) {
          // V of tile n lands while S = Q K_n^T and the softmax run.
          load_kv(v_smem, v_rows, seq, static_cast<int>(p.head_dim_v), n_block);
          ptx::cp_async_commit_group();
        }
        // Ring: tile n - (kStages - 1) goes into the stage the previous iteration used; it has
        // kStages - 1 iterations of math to land. Issued here, or after S = Q K^T with late_copies.
        [[maybe_unused]] auto copy_ahead = [&] {
          const int ahead = n_block - (Cfg::kStages - 1);
          const int ahead_stage = (stage + Cfg::kStages - 1) % Cfg::kStages;
          if (ahead >= range.begin) {
            load_kv(k_smem + ahead_stage * Cfg::kSmemK, k_rows, seq, static_cast<int>(p.head_dim), ahead);
            load_kv(v_smem + ahead_stage * Cfg::kSmemV, v_rows, seq, static_cast<int>(p.head_dim_v), ahead);
          } else if constexpr (Cfg::kPrefetchNext) {
            // The last iteration: the free stage takes the next tile's first K/V.
            if (n_block == range.begin) {
              prefetched_next = prefetch_tile(tile_of_round(round + 1, blockIdx.x, gridDim.x), ahead_stage);
            }
          }
          ptx::cp_async_commit_group();
        };
        if constexpr (!kSingleBuffer && !Cfg::kLateCopies) copy_ahead();
        if constexpr (Cfg::kQInRegisters) {
          if (n_block == range.end - 1) {
#pragma unroll
            for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
#pragma unroll
              for (int k_step = 0; k_step < Cfg::kHeadDim / 16; ++k_step) {
                load_q_fragment(q_fragments[mt][k_step], q_smem_u32, q_offsets, mt, k_step);
              }
            }
          }
        }
        const std::uint32_t k_tile = k_smem_u32 + stage * Cfg::kSmemK * sizeof(Element);
        const std::uint32_t v_tile = v_smem_u32 + stage * Cfg::kSmemV * sizeof(Element);

        float s[Cfg::kMTiles][kNTiles][4];
        if constexpr (Cfg::kQKStepAhead) {
          gemm_qk_step_ahead<Cfg, QTile, KVTile>(s, q_fragments, q_smem_u32, q_offsets, k_tile, k_offsets);
        } else if constexpr (Cfg::kPrefetchFragments) {
          gemm_qk_prefetched<Cfg, QTile, KVTile>(s, q_fragments, q_smem_u32, q_offsets, k_tile, k_offsets);
        } else {
          gemm_qk<Cfg, QTile, KVTile>(s, q_fragments, q_smem_u32, q_offsets, k_tile, k_offsets);
        }
        if constexpr (Cfg::kLateCopies) copy_ahead();
        // Single buffer: V_n landed; every warp is past its S = Q K_n^T, so K of the next tile may
        // overwrite K_n while the softmax and P V_n run. With early_k_copy here (FlashAttention 2's
        // order: the softmax and P V_n stay one basic block), else after the softmax.
        [[maybe_unused]] auto copy_next_k = [&] {
          ptx::cp_async_wait_group<0>();
          __syncthreads();
          if (n_block - 1 >= range.begin) {
            load_kv(k_smem, k_rows, seq, static_cast<int>(p.head_dim), n_block - 1);
          }
          ptx::cp_async_commit_group();
        };
        if constexpr (kSingleBuffer && Cfg::kEarlyKCopy) copy_next_k();

        bool needs_mask;
        if constexpr (Cfg::kMaskBounds) {
          needs_mask = n0 > unmasked.last_n0 || n0 < unmasked.first_n0;
        } else {
          needs_mask = tile_needs_mask<Cfg>(p.mask, m0, n0, seq.q, seq.k);
        }
        if constexpr (Cfg::kJointSoftmax) {
          // One branch around every m-tile's mask, then one straight-line softmax of all rows.
          if (kGeneral || needs_mask) {
#pragma unroll
            for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
              score_tile<Cfg, kGeneral, kBias>(s[mt], modifiers, p.mask, needs_mask, i0 + 16 * mt, n0, seq.q,
                                               seq.k, lane, bias);
            }
          }
          update_all(softmax, s, o, scale_log2);
          if constexpr (kGeneral) {
            if (args.dropout_threshold > 0) {
#pragma unroll
              for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
                apply_dropout<kNTiles>(s[mt], args.dropout_keys, p.dropout_offset, args.dropout_threshold,
                                       index.batch * p.heads + index.head, i0 + 16 * mt, n0, lane);
              }
            }
          }
        } else {
#pragma unroll
          for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
            if (kGeneral || needs_mask) {
              score_tile<Cfg, kGeneral, kBias>(s[mt], modifiers, p.mask, needs_mask, i0 + 16 * mt, n0, seq.q,
                                               seq.k, lane, bias);
            }
            softmax[mt].update(s[mt], o[mt], scale_log2);
            if constexpr (kGeneral) {
              if (args.dropout_threshold > 0) {
                apply_dropout<kNTiles>(s[mt], args.dropout_keys, p.dropout_offset, args.dropout_threshold,
                                       index.batch * p.heads + index.head, i0 + 16 * mt, n0, lane);
              }
            }
          }
        }
        if constexpr (kSingleBuffer && !Cfg::kEarlyKCopy) copy_next_k();
        if constexpr (Cfg::kPrefetchFragments) {
          gemm_pv_prefetched<Cfg, KVTile>(o, s, v_tile, v_offsets);
        } else {
          gemm_pv<Cfg, KVTile>(o, s, v_tile, v_offsets);
        }
        stage = (stage + 1) % Cfg::kStages;
      }
      if (prefetched_next) {
        // This warp is done with its Q rows (no other warp reads them): the next tile's go there now,
        // once all of its lanes are past their last ldmatrix of them.
        __syncwarp();
        prefetch_tile(tile_of_round(round + 1, blockIdx.x, gridDim.x), -1);
        ptx::cp_async_commit_group();
      } else {
        // Only empty groups can be pending here; waiting keeps the invariant simple for the next tile.
        ptx::cp_async_wait_group<0>();
      }
    }

    const bool has_sink = p.sink != nullptr && index.split == 0;
    const float sink_log2 = has_sink ? p.sink[index.head] * kLog2e : 0.f;
    float lse[Cfg::kMTiles][2];
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
      finalize_rows<kOTiles, Cfg::kApproxEpilogue>(o[mt], lse[mt], softmax[mt].row_max, softmax[mt].row_sum,
                                                   scale_log2, sink_log2, has_sink,
                                                   kGeneral ? args.dropout_rescale : 1.f);
    }
    if (args.num_splits > 1) {
      store_partial<Cfg>(o, lse, args, seq, index.batch, index.head, index.split, m0, row0, lane);
    } else if constexpr (Cfg::kPrefetchNext || Cfg::kOFromRegisters) {
      store_output_from_registers<Cfg>(o, lse, args, seq, index.batch, index.head, m0, row0, lane);
    } else {
      store_output<Cfg, QTile>(o, lse, q_smem, args, seq, index.batch, index.head, m0, row0, lane, thread);
    }
    // The next tile's loads overwrite shared memory that this tile's epilogue (or, with
    // prefetch_next, its last iteration) reads; a prefetched tile's copies were ordered by the last
    // iteration's barrier and each warp's own progress instead.
    if (!prefetched_next) __syncthreads();
    prefetched = prefetched_next;
  }
}

}  // namespace flashattn::detail::cuda_sm80
