// The stream-K tail of the static schedule (forward_config.h SPLIT_TAIL, Config::kSplitTail).
//
// With equal tiles a static schedule of N units on G clusters runs N / G rounds; when G does not divide N
// the last round leaves clusters idle (the d128 grid rows: 1024 units on 66 clusters, 15.5 rounds). Here
// the units of the last partial round (and of the full round before it when the partial one is under half
// a round) are laid end to end as key blocks, and cluster c takes the blocks [lo(c), lo(c + 1)) of that
// line (split_tail_plan.h SplitTail): every cluster ends within a key block of the others.
//
// A cluster's share is a run of pieces, one per unit it touches, a piece being a key-block range of the
// unit's tiles (both CTAs of a cluster walk the same ranges: their K/V loads are multicast). A piece that
// covers a whole unit is stored as usual. The others are split pieces: each consumer warpgroup writes its
// rows' O (normalised by the piece's own row sums) and LSE in fp32 to a record in the workspace, then
// counts itself on the unit's arrival counter; the warpgroup that arrives last reads every piece's record
// (its own included) and stores the combined rows (O = sum_i exp(lse_i - lse) O_i, lse = log sum_i
// exp(lse_i), the sink counted once). Nobody waits for anybody. The sum runs over the pieces in key order
// whoever combines, with each piece's values exactly as its record holds them, so the result is
// deterministic.
//
// Work items (what the producer hands the consumers, tile_scheduler.h): a tile index below num_tiles,
// kTailItem + k for the k-th piece of this CTA's tail share, or num_tiles (the end).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/split_tail_plan.h"
#if defined(__CUDACC__)
#include "cuda/sm90/piece_arrival.h"
#include "cuda/sm90/score_mask.h"
#include "cuda/sm90/softmax.h"
#include "cuda/sm90/tile_scheduler.h"
#endif

namespace flashattn::detail::cuda_sm90 {

#if defined(__CUDACC__)

inline constexpr int kTailItem = 1 << 30;

__device__ __forceinline__ bool is_tail_item(int item) { return item >= kTailItem; }

// The first work item past the tiles before the tail: this CTA's first piece, or the end.
__device__ __forceinline__ int first_tail_item(const ForwardKernelParams& p) {
  return p.tail.start_tile < p.num_tiles ? kTailItem : p.num_tiles;
}

// The work item after tail item `item`: this CTA's next piece, or the end.
template <int kClusterM>
__device__ __forceinline__ int next_tail_item(const ForwardKernelParams& p, int item) {
  const SplitTail& t = p.tail;
  const int cluster = static_cast<int>(blockIdx.x) / kClusterM;
  const int next_unit = tail_share_begin(t, cluster) / t.key_blocks + (item - kTailItem) + 1;
  return next_unit * t.key_blocks < tail_share_begin(t, cluster + 1) ? item + 1 : p.num_tiles;
}

// The producer's work items (tile_scheduler.h first_tile / claim_next_tile, with the tail where
// kSplitTail: the static schedule's tiles up to the tail's first, then this CTA's pieces).
template <class Config>
__device__ __forceinline__ int first_work(const ForwardKernelParams& p) {
  const int tile = first_tile<Config::kClusterM>(p);
  if constexpr (Config::kSplitTail) return tile < p.tail.start_tile ? tile : first_tail_item(p);
  return tile;
}
template <class Config>
__device__ __forceinline__ int claim_next_work(const ForwardKernelParams& p, int item) {
  if constexpr (Config::kSplitTail) {
    if (is_tail_item(item)) return next_tail_item<Config::kClusterM>(p, item);
    const int tile = claim_next_tile<Config::kClusterM>(p, item);
    return tile < p.tail.start_tile ? tile : first_tail_item(p);
  }
  return claim_next_tile<Config::kClusterM>(p, item);
}
// Whether item is work (a tile or a tail piece) rather than the end marker.
template <class Config>
__device__ __forceinline__ bool is_work(const ForwardKernelParams& p, int item) {
  return item < p.num_tiles || (Config::kSplitTail && is_tail_item(item));
}

struct TailPiece {
  int tile;             // this CTA's tile of the unit
  int unit;             // the unit, counted from the tail's first
  KeyBlockRange range;  // its key blocks, within [0, key_blocks)
};

template <int kClusterM>
__device__ __forceinline__ TailPiece tail_piece(const ForwardKernelParams& p, int item) {
  const SplitTail& t = p.tail;
  const int cta = static_cast<int>(blockIdx.x);
  const int cluster = cta / kClusterM;
  const int lo = tail_share_begin(t, cluster), hi = tail_share_begin(t, cluster + 1);
  TailPiece piece;
  piece.unit = lo / t.key_blocks + (item - kTailItem);
  const int unit_lo = piece.unit * t.key_blocks;
  piece.range = KeyBlockRange{max(lo, unit_lo) - unit_lo, min(hi, unit_lo + t.key_blocks) - unit_lo};
  piece.tile = (t.start_unit + piece.unit) * kClusterM + cta % kClusterM;
  return piece;
}

// Tail item `item`'s tile (tile_work) and key blocks, as a tile index gives them through tile_work and
// key_block_range (the producer's and the consumers' decoding).
template <int kClusterM>
__device__ __forceinline__ void tail_piece_work(const ForwardKernelParams& p, int item, WorkTile& w,
                                                KeyBlockRange& range) {
  const TailPiece piece = tail_piece<kClusterM>(p, item);
  w = tile_work<kClusterM>(p, piece.tile);
  range = piece.range;
}

// A piece that is not its whole unit (its rows go through split_tail_combine).
__device__ __forceinline__ bool split_piece(const ForwardKernelParams& p, const KeyBlockRange& range) {
  return range.begin > 0 || range.end < p.tail.key_blocks;
}

// Split piece `item` of this CTA, consumer warpgroup `consumer` (barrier `barrier`, its 128 threads), whose
// rows hold o (the P V accumulator, its first kGemmDimV / 2 values O's) and final_rows (computed without the
// sink): records the piece and counts it; true when this warpgroup completed the unit, o and final_rows then
// holding the combined rows for store_output; false when another piece's warpgroup will store them.
template <class Config, int kO>
__device__ bool split_tail_combine(const ForwardKernelParams& p, int head, int item, int consumer,
                                   int barrier, float (&o)[kO], RowFinal& final_rows) {
  constexpr int kQuads = Config::kGemmDimV / 8;
  constexpr int kClusterM = Config::kClusterM;
  // (Narrowed GEMMs: records of 96 columns, within the workspace the host sizes for the kernel's 128.)
  constexpr std::size_t kRecord = split_tail_record_floats<Config::kGemmDimV>();
  const SplitTail& t = p.tail;
  const int thread = threadIdx.x % 128;
  const int cta = static_cast<int>(blockIdx.x);
  const int cluster = cta / kClusterM, rank = cta % kClusterM;
  const int unit = tail_piece<kClusterM>(p, item).unit;
  const int unit_lo = unit * t.key_blocks, unit_hi = unit_lo + t.key_blocks;
  // The record of cluster c's piece of this unit: its first piece's (0) when its share starts in the unit,
  // else its last piece's (1).
  auto record = [&](int c) {
    const int which = tail_share_begin(t, c) < unit_lo ? 1 : 0;
    return t.partials +
           ((static_cast<std::size_t>(c * kClusterM + rank) * 2 + which) * Config::kConsumerWarpgroups +
            consumer) *
               kRecord;
  };
  float* mine = record(cluster);
#pragma unroll
  for (int q = 0; q < kQuads; ++q) {
    __stcg(reinterpret_cast<float4*>(mine) + q * 128 + thread,
           make_float4(o[4 * q] * final_rows.scale[0], o[4 * q + 1] * final_rows.scale[0],
                       o[4 * q + 2] * final_rows.scale[1], o[4 * q + 3] * final_rows.scale[1]));
  }
  __stcg(reinterpret_cast<float2*>(mine + kQuads * 128 * 4) + thread,
         make_float2(final_rows.lse[0], final_rows.lse[1]));
  int first = cluster, last = cluster;
  while (tail_share_begin(t, first) > unit_lo) --first;
  while (tail_share_begin(t, last + 1) < unit_hi) ++last;
  auto counter = [&] {
    return t.arrivals + (unit * kClusterM + rank) * Config::kConsumerWarpgroups + consumer;
  };
  if (!completes_pieces(counter, last - first + 1, barrier)) return false;

  constexpr float kLog2e = 1.4426950408889634f;
  constexpr float kLn2 = 0.6931471805599453f;
  // Every piece from its record, this one's too (the same values as in o), so that whichever warpgroup
  // combines runs the same arithmetic on the same values, in key order: the result is deterministic. Slots
  // past the unit's pieces repeat its first piece with weight 0 (a branch-free sum that adds +0).
  const int pieces = last - first + 1;
  const float* source[kMaxTailPieces];
  float lse[kMaxTailPieces][2];
  float reference[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int i = 0; i < kMaxTailPieces; ++i) {
    source[i] = record(first + (i < pieces ? i : 0));
    const float2 l = __ldcg(reinterpret_cast<const float2*>(source[i] + kQuads * 128 * 4) + thread);
    lse[i][0] = l.x, lse[i][1] = l.y;
    reference[0] = fmaxf(reference[0], l.x), reference[1] = fmaxf(reference[1], l.y);
  }
  const float sink = p.sink != nullptr ? p.sink[head] : -INFINITY;
  float weight[kMaxTailPieces][2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    reference[r] = fmaxf(reference[r], sink);
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kMaxTailPieces; ++i) {
      if (i < pieces) sum += exp2f((lse[i][r] - reference[r]) * kLog2e);
    }
    if (p.sink != nullptr) sum += exp2f((sink - reference[r]) * kLog2e);
    const bool empty = !(sum > 0.f);
    const float total = empty ? -INFINITY : reference[r] + log2f(sum) * kLn2;
#pragma unroll
    for (int i = 0; i < kMaxTailPieces; ++i) {
      weight[i][r] = empty || i >= pieces ? 0.f : exp2f((lse[i][r] - total) * kLog2e);
    }
    final_rows.lse[r] = total;
  }
  // Unrolled whole: o is indexed by q.
#pragma unroll
  for (int q = 0; q < kQuads; ++q) {
    float4 x[kMaxTailPieces];
#pragma unroll
    for (int i = 0; i < kMaxTailPieces; ++i)
      x[i] = __ldcg(reinterpret_cast<const float4*>(source[i]) + q * 128 + thread);
    float4 sum = make_float4(weight[0][0] * x[0].x, weight[0][0] * x[0].y, weight[0][1] * x[0].z,
                             weight[0][1] * x[0].w);
#pragma unroll
    for (int i = 1; i < kMaxTailPieces; ++i) {
      sum.x = fmaf(weight[i][0], x[i].x, sum.x);
      sum.y = fmaf(weight[i][0], x[i].y, sum.y);
      sum.z = fmaf(weight[i][1], x[i].z, sum.z);
      sum.w = fmaf(weight[i][1], x[i].w, sum.w);
    }
    o[4 * q] = sum.x, o[4 * q + 1] = sum.y, o[4 * q + 2] = sum.z, o[4 * q + 3] = sum.w;
  }
  final_rows.scale[0] = final_rows.scale[1] = 1.f;
  return true;
}

#endif  // __CUDACC__

}  // namespace flashattn::detail::cuda_sm90
