// Split-KV decoding in the one-consumer decode kernel (forward_config.h SPLIT_KV, Config::kSplitKV; the
// launch's parameters and the split count in split_kv_plan.h).
//
// Work item i is piece i % splits of tile i / splits (or, past a launch's whole tiles, the same of the tiles
// after them: split_kv_plan.h item_piece): the tile's key blocks (score_mask.h key_block_range, per
// sequence) cut into `splits` near-equal shares (split_kv_plan.h split_key_blocks), so a sequence shorter
// than the longest still splits evenly and a share may be empty. Producer and consumers decode items through
// work_tile and work_key_blocks, so the pieces run through the usual schedule (static for a plain batch,
// dynamic with per-sequence lengths), each loading the tile's Q and its share of K/V.
//
// A piece's warpgroup writes its rows' O (normalised by its own row sums, without the sink) and LSE to its
// record in the workspace, then counts itself on the tile's arrival counter; the one that arrives last reads
// every record, its own included, and stores the combined rows through the normal epilogue (O = sum_i
// exp(lse_i - lse) O_i, lse = log(sum_i exp(lse_i) + exp(sink))). Nobody waits for anybody, and the sum runs
// over the pieces in key order whoever combines, on the values as the records hold them: the result is
// deterministic. (split_tail.h does the same for the stream-K tail of the two-consumer cluster kernel, whose
// records are per CTA; here they are per piece and compact: only the `rows` rows a tile can hold, 4 for a
// decode step over a GQA group of 4 instead of 64.)
#pragma once

#include <cstddef>

#include "cuda/ptx/grid_dependency.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/piece_arrival.h"
#include "cuda/sm90/score_mask.h"
#include "cuda/sm90/softmax.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

// Work item `item`'s tile (its own index without kSplitKV).
template <class Config>
__device__ __forceinline__ WorkTile work_tile(const ForwardKernelParams& p, int item) {
  if constexpr (Config::kSplitKV) item = item_piece(p.split_kv, item).tile;
  return tile_work<Config::kClusterM, Config::kCacheLengths>(p, item);
}

// The key blocks work item `item` (of tile w) visits: its tile's, or for a piece of a split tile its share.
template <class Config>
__device__ __forceinline__ KeyBlockRange work_key_blocks(const ForwardKernelParams& p, int item,
                                                         const WorkTile& w) {
  const KeyBlockRange range = key_block_range<Config>(p, w);
  if constexpr (Config::kSplitKV) {
    const SplitKV& s = p.split_kv;
    if (const ItemPiece piece = item_piece(s, item); piece.split) {
      const KeyBlockShare share = split_key_blocks(range.begin, range.end, piece.piece, s.splits_div);
      return {share.begin, share.end};
    }
  }
  return range;
}

// Whether work item `item` is a piece of a split tile (its consumer then finalises without the sink and
// goes through split_kv_combine) rather than a whole tile.
template <class Config>
__device__ __forceinline__ bool splits_keys(const ForwardKernelParams& p, int item) {
  if constexpr (Config::kSplitKV) {
    return item_piece(p.split_kv, item).split;
  } else {
    return false;
  }
}

// A piece's place in the workspace (records of kDv columns): its tile, its place among the tile's pieces,
// the tile's first record, its own. (The records are the split tiles', from whole_tiles on.)
struct PieceRecords {
  int tile;
  int piece;
  float* tile_records;
  float* mine;
};
template <int kDv>
__device__ __forceinline__ PieceRecords piece_records(const SplitKV& s, int item) {
  const ItemPiece piece = item_piece(s, item);
  const std::size_t record_floats = split_kv_record_floats(s.rows, kDv);
  float* const tile_records =
      s.partials + static_cast<std::size_t>(piece.tile - s.whole_tiles) * s.splits * record_floats;
  return {piece.tile, piece.piece, tile_records,
          tile_records + static_cast<std::size_t>(piece.piece) * record_floats};
}

// The tile's arrival counter, evaluated by the arriving thread alone (piece_arrival.h). A prepare kernel
// zeroes the counters: under CacheLengths the producer waited for it before the piece's loads, which come
// before this; this thread's own wait (passed at once by then, and at once in a launch without a programmatic
// dependency) puts the zeroing before its atomic without relying on that chain.
__device__ __forceinline__ int* tile_arrivals(const SplitKV& s, int tile) {
  ptx::griddepcontrol_wait();
  return s.arrivals + tile;
}

// The combine of split_kv_combine, by the warpgroup that completed the tile (tile_records: its `pieces`
// records, every one stored and acquired): o and final_rows (layout as there) become the tile's rows.
template <class Config, int kO>
__device__ __forceinline__ void combine_split_pieces(const ForwardKernelParams& p, int head,
                                                     const float* tile_records, int pieces, float (&o)[kO],
                                                     RowFinal& final_rows) {
  constexpr int kDv = Config::kHeadDimV;
  constexpr int kChunks = kDv / 8;
  const SplitKV& s = p.split_kv;
  const int thread = threadIdx.x % 128;
  const int lane = thread % 32;
  const std::size_t record_floats = split_kv_record_floats(s.rows, kDv);
  const int row[2] = {(thread / 32) * 16 + lane / 4, (thread / 32) * 16 + lane / 4 + 8};
  const int column = 2 * (lane % 4);
  constexpr float kLog2e = 1.4426950408889634f;
  // One pass over the pieces in key order, kBatch pieces' loads in flight at once (no piece's values wait for
  // another's): the running reference moves as pieces come, rescaling what was summed so far. (Against a
  // first pass for the largest LSE and a second for the sums at one piece per L2 round trip, the decode call
  // reads 0.92-0.97 of the time at 8-16 pieces a tile; s45_final.sh.)
  // COMBINE_BATCH pieces at dv = 128; as many records' floats in flight at other dv (d256: 2 pieces, d64: 8).
  constexpr int kBatch = FLASHATTN_SM90_SPLIT_KV_COMBINE_BATCH * 128 / kDv > 0
                             ? FLASHATTN_SM90_SPLIT_KV_COMBINE_BATCH * 128 / kDv
                             : 1;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    // Rows past the records' are not the tile's (store_output clips them): zero, never read.
    const bool held = row[r] < s.rows;
    float reference = -INFINITY, sum = 0.f;
    float acc[2 * kChunks];
#pragma unroll
    for (int j = 0; j < 2 * kChunks; ++j) acc[j] = 0.f;
    for (int first = 0; held && first < pieces; first += kBatch) {
      float lse[kBatch];
      float2 x[kBatch][kChunks];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        // Past the last piece: the last one again, weighed 0 below (a branch-free batch).
        const float* record = tile_records + min(first + b, pieces - 1) * record_floats;
        lse[b] = first + b < pieces ? __ldcg(record + s.rows * kDv + row[r]) : -INFINITY;
#pragma unroll
        for (int q = 0; q < kChunks; ++q)
          x[b][q] = __ldcg(reinterpret_cast<const float2*>(record + row[r] * kDv + 8 * q + column));
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        // Both -inf: nothing seen yet and this piece saw no key (keep the zeros).
        const float next = fmaxf(reference, lse[b]);
        const bool none = next == -INFINITY;
        const float keep = none ? 1.f : exp2f((reference - next) * kLog2e);
        const float weight = none ? 0.f : exp2f((lse[b] - next) * kLog2e);
        sum = fmaf(sum, keep, weight);
#pragma unroll
        for (int q = 0; q < kChunks; ++q) {
          acc[2 * q] = fmaf(weight, x[b][q].x, acc[2 * q] * keep);
          acc[2 * q + 1] = fmaf(weight, x[b][q].y, acc[2 * q + 1] * keep);
        }
        reference = next;
      }
    }
    if (held && p.sink != nullptr) {
      const float sink = p.sink[head];
      const float next = fmaxf(reference, sink);
      const float keep = exp2f((reference - next) * kLog2e);  // 0 when no piece saw a key
      sum = fmaf(sum, keep, exp2f((sink - next) * kLog2e));
#pragma unroll
      for (int j = 0; j < 2 * kChunks; ++j) acc[j] *= keep;
      reference = next;
    }
    const bool empty = !(sum > 0.f);
    final_rows.scale[r] = empty ? 0.f : 1.f / sum;
    final_rows.lse[r] = empty ? -INFINITY : reference + logf(sum);
#pragma unroll
    for (int q = 0; q < kChunks; ++q) {
      o[4 * q + 2 * r] = acc[2 * q];
      o[4 * q + 2 * r + 1] = acc[2 * q + 1];
    }
  }
}

// Work item `item` of a split launch, the consumer warpgroup's 128 threads (named barrier `barrier`), whose
// rows hold o (the P V accumulator, its first kHeadDimV / 2 values O's: per n8 column chunk q, o[4q], o[4q +
// 1] of row warp * 16 + lane / 4 and o[4q + 2], o[4q + 3] of that row + 8, columns 8q + 2 (lane % 4) + {0,
// 1}) and final_rows (computed without the sink): records the piece and counts it; true when this warpgroup
// completed the tile, o and final_rows then holding the combined rows for store_output; false when another
// piece's warpgroup will store them.
template <class Config, int kO>
__device__ bool split_kv_combine(const ForwardKernelParams& p, int head, int item, int barrier,
                                 float (&o)[kO], RowFinal& final_rows) {
  static_assert(Config::kConsumerWarpgroups == 1, "one warpgroup's rows per tile");
  constexpr int kDv = Config::kHeadDimV;
  constexpr int kChunks = kDv / 8;
  const SplitKV& s = p.split_kv;
  const int thread = threadIdx.x % 128;
  const int lane = thread % 32;
  const PieceRecords records = piece_records<kDv>(s, item);
  const int row[2] = {(thread / 32) * 16 + lane / 4, (thread / 32) * 16 + lane / 4 + 8};
  const int column = 2 * (lane % 4);
  {
    float* mine = records.mine;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (row[r] >= s.rows) continue;
#pragma unroll
      for (int q = 0; q < kChunks; ++q) {
        __stcg(
            reinterpret_cast<float2*>(mine + row[r] * kDv + 8 * q + column),
            make_float2(o[4 * q + 2 * r] * final_rows.scale[r], o[4 * q + 2 * r + 1] * final_rows.scale[r]));
      }
      if (lane % 4 == 0) __stcg(mine + s.rows * kDv + row[r], final_rows.lse[r]);
    }
  }
  if (!completes_pieces([&] { return tile_arrivals(s, records.tile); }, s.splits, barrier)) return false;
  combine_split_pieces<Config>(p, head, records.tile_records, s.splits, o, final_rows);
  return true;
}

}  // namespace flashattn::detail::cuda_sm90
