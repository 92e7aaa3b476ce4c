// Split-KV decoding on cuda_sm90 (forward_config.h SPLIT_KV; the kernel side in split_kv.h): the launch's
// parameters and the host's choice of the split count. Host and device, without CUDA headers
// (tests/split_kv_plan_test.cpp checks the choice).
//
// Why: a decode step has one query row per sequence and head, so the one-consumer kernel's tiles are one per
// (sequence, K/V head) under packed GQA, 8-64 of them at batch 1-8. Without a split each is one CTA that
// streams its whole cache alone, bound by its own latency (~56 GB/s on an H200 against ~36 GB/s per SM of
// the card's bandwidth: 132 such CTAs would saturate it, 8 cannot). Cutting every tile's key blocks into
// `splits` pieces gives tiles * splits work items of the usual persistent schedule.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/fast_division.h"
#include "common/host_device.h"

namespace flashattn::detail::cuda_sm90 {

// Work item i is piece i % splits (its key-block share, split_key_blocks below) of tile i / splits; or,
// where the launch splits only the tiles past its whole rounds (whole_tiles > 0, split_kv_tail below), items
// below whole_tiles are those tiles whole and item whole_tiles + i is piece i % splits of tile whole_tiles +
// i / splits (item_piece). Each piece records its rows' O (normalised by its own row sums) and LSE in fp32;
// the piece that finishes its tile last (the arrival counter) combines the records in key order and stores
// the tile.
struct SplitKV {
  int splits = 1;           // pieces per split tile; 1: no split (the kernel stores every tile itself)
  FastDivisor splits_div;   // work item / splits: its tile
  int whole_tiles = 0;      // the leading tiles that are not split (0: every tile when splits > 1)
  int rows = 0;             // rows of a tile that a record holds: min(kBlockM, the longest packed q rows)
  int* arrivals = nullptr;  // workspace: per tile, its pieces done, or its row owners' (zeroed by the launch)
  float* partials = nullptr;  // workspace: per piece of a split tile a record (split_kv_record_floats: O
                              // rows, LSEs), the tile's `splits` in order (split_kv.h piece_records)
  // The narrow tile's pieces of a tile in clusters (forward_config.h CLUSTER_COMBINE; one item per CTA): each
  // row's values of every piece of the cluster in its owner's shared memory (decode_consumer.h row_owner: the
  // CTA of the row's rank where the cluster has a CTA per row, else the first). cluster_size CTAs a cluster
  // (0: no clusters, the arrival counter's combine), `groups` clusters a tile (splits = groups x
  // cluster_size, clusters of 8): with more than one, each owner records its rows' sums in the cluster's one
  // of the tile's `groups` records (arrivals as above, per owner; partials as above, the first `groups`
  // records of the tile's) and the last of an owner's rank to arrive sums those rows through L2.
  int cluster_size = 0;
  int groups = 1;
  FLASHATTN_HD bool clustered() const { return cluster_size > 0; }
  // O itself, element strides (the owners store their rows straight into it, decode_consumer.h
  // PieceSum::store_row: no CTA holds a box of maps.o); here beside the fields that path reads anyway.
  void* out = nullptr;
  std::int64_t out_batch_stride = 0, out_head_stride = 0, out_row_stride = 0;
  int out_cols =
      0;  // O's columns (dv): a padded head dim's kernel holds more (forward_config.h kernel_head_dims)
};

// Work item `item`'s tile, and its piece among the tile's `splits` (split: false for a whole tile, whose
// CTA stores it).
struct ItemPiece {
  int tile, piece;
  bool split;
};
FLASHATTN_HD ItemPiece item_piece(const SplitKV& s, int item) {
  const int rest = item - s.whole_tiles;
  if (rest < 0) return {item, 0, false};
  const int tile = fast_divide(rest, s.splits_div);
  return {s.whole_tiles + tile, rest - tile * s.splits, s.splits > 1};
}

// The pieces of a split tile that one cluster holds (forward_config.h CLUSTER_COMBINE): 16, the largest
// cluster an H100 / H200 launches, where the tile's records fit a CTA's slots (ForwardConfig
// cluster_slots). Above the portable size the launch allows the kernel a non-portable cluster size
// (forward_launch.h).
inline constexpr int kMaxClusterPieces = 16;
inline constexpr int kPortableClusterSize = 8;
// The cluster counts whose records a CTA's slots hold (ForwardConfig cluster_slots): up to `gathered` pieces
// of whole records, which the first CTA receives where the cluster has fewer CTAs than the tile has rows; and
// from `rows` pieces (a CTA per row: each receives its row alone, decode_consumer.h row_owner) up to
// `spread`. Counts between the two are not held. (An int converts to whole records alone: the counts of
// sessions 50-52.)
struct ClusterSlots {
  int gathered = 0;
  int rows = 0;
  int spread = 0;
  constexpr ClusterSlots() = default;
  constexpr ClusterSlots(int pieces) : gathered(pieces) {}  // NOLINT(google-explicit-constructor)
  constexpr ClusterSlots(int gathered_pieces, int tile_rows, int spread_pieces)
      : gathered(gathered_pieces), rows(tile_rows), spread(spread_pieces) {}
  constexpr bool spreads() const { return spread >= rows && spread > gathered; }
  constexpr int most() const { return spreads() ? spread : gathered; }
  constexpr bool holds(int pieces) const {
    return pieces <= gathered || (spreads() && pieces >= rows && pieces <= spread);
  }
  // The largest count up to `pieces` that the slots hold.
  constexpr int at_most(int pieces) const {
    if (holds(pieces)) return pieces;
    return spreads() && pieces > spread ? spread : std::min(pieces, gathered);
  }
};
// A tile's arrival counters in the workspace: one, or where clusters of the narrow tile combine in two levels
// one per row owner (decode_consumer.h: row j of the tile is summed by its cluster's CTA j, and each owner's
// row completes on a counter of its own); owners are at most the narrow tile's 8 rows.
inline constexpr int kArrivalCountersPerTile = 8;

// More pieces than this per tile gain nothing (a wave of an H100 / H200 is 132 CTAs) and lengthen the
// combine; FlashAttention 2 caps its splits at 128 too.
inline constexpr int kMaxSplitKV = 128;

// Floats of one piece's record: `rows` rows of dv O values, then `rows` LSEs padded to a multiple of four, so
// that every record (and its O, written as float2: dv is a multiple of 8) stays 16-byte aligned whatever
// `rows`.
constexpr FLASHATTN_HD std::size_t split_kv_record_floats(int rows, int head_dim_v) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(head_dim_v) +
         (static_cast<std::size_t>(rows) + 3) / 4 * 4;
}

// A chosen piece keeps at least kMinSplitKVBlocks key blocks, or a tile of few blocks makes up to
// kShortTileSplits pieces of one. A piece has a fixed cost beside its blocks' (its Q, the first loads'
// latency, its record and arrival): on an H200 (GQA 32/8, batch 1, s45_final.sh, the combine reading four
// records at a time) 4096 keys read 15.0 us in 8 pieces of four blocks against 16.1 in 16 of two, while 1024
// keys read 11.4 in 8 pieces of one against 14.3 in 2 of four.
inline constexpr int kMinSplitKVBlocks = 4;
inline constexpr int kShortTileSplits = 8;

// The narrow decode tile's counts (session 48, with its combine of one round trip: decode_consumer.h) follow
// two more rules, measured there alone (split_kv_shape passes the narrow tile's record rows x dv as
// narrow_piece_floats; the 64-row tile's counts are session 45's). First, a tile's records stay within
// kMaxTileRecordFloats (O's floats of every piece): the piece that completes the tile reads them all, so the
// combine grows with pieces x rows x dv. On an H200 (s48_trace.sh, s48_combine.sh: d256 decode steps of 8
// rows per tile, graphed) 16384 keys over 1 tile read 27.5 us in 16 pieces against 42.3 in the 64 that one
// wave holds, over 4 tiles 33.5 in 16 against 43.6 in 33; 16 x 8 x 256 floats was the cap. Session 52's
// combine (sum_pieces: several units a thread, 16 loads in flight) made records cheaper to read: one K/V head
// of 8 rows at d256 over 16100 keys (s52_d256sweep.sh) read 19.4 us in 32 pieces against 23.3 in 16, 20.6 in
// 24 and 48, 26.4 in 12; so the cap is 32 x 8 x 256 floats (at 8 rows of d128, 64 pieces: where the cluster
// combine does not apply, the dynamic schedule, not measured). Second, pieces shorter than kMinSplitKVBlocks
// only where the tiles are few enough that kShortTileSplits pieces of each fit in one wave: at 32 tiles of 8
// blocks (1024 keys, GQA 32/8, batch 4; s48_rule.sh) d128 read 11.8 us in 2 pieces against 12.6 in 4 (d64
// 10.6 in 2 and 10.1 unsplit against 11.1), while at 8 tiles 8 pieces of one block stay the fastest (9.75 us
// against 10.5 in 4).
inline constexpr std::int64_t kMaxTileRecordFloats = 32 * 8 * 256;

// Host: pieces per tile for `tiles` tiles of `key_blocks` key blocks (the longest sequence's) on `sms` SMs.
// requested: the caller's num_splits (0: choose; 1: no split; n > 1: n, at most one piece per key block and
// kMaxSplitKV). Chosen: as many pieces as one wave of CTAs holds (sms / tiles), so that every SM streams a
// share of the cache at once and no CTA takes a second piece, within the piece sizes above; none where the
// tiles alone fill half the SMs. On that H200 (s45_final.sh, batch 1-8 over 1024-65536 keys, counts 1-32,
// CUDA graphs) the rule picks the fastest count measured, or one within 2% of it, on all 15 rows (the rule
// was fitted to those rows: a later run checks it, s45_rule.sh). narrow_piece_floats: on the narrow tile,
// rows x dv of a piece's record (the narrow tile's rules above); 0 on the 64-row tile.
//
// cluster_pieces (the narrow tile's cluster combine, forward_config.h CLUSTER_COMBINE: the counts, up to
// kMaxClusterPieces, whose records a CTA's slots hold, ClusterSlots; none without it; a count they do not
// hold is lowered to one they do) replaces both narrow rules: the combine then costs no round trip through
// L2, so pieces of one block pay up to the portable cluster size and pieces of kMinClusterPieceBlocks blocks
// beyond it, as many as one wave holds (sms / tiles). On an H200 (s50_cluster2.sh, graphed, GQA 32/8) batch 4
// at 1000 keys read d128 8.5 us in 3 pieces against 9.5 in 2 (d64 7.4 against 8.0), batch 1 at 16100
// keys 23.3 in 8 against 24.3-25.0 in the counter's 16. Where the counter's count leaves pieces more than
// kClusterExtraBlocks blocks shorter, the counter's count instead (s51_cluster16.sh: one K/V head at 65000
// keys, the counter's 32 at 24.1-25.1 us against 36.0 in 15 and 54 in 8). The launch takes the largest
// count whose clusters all fit at once where the chosen one's do not (forward_launch.h; on the H200 clusters
// of 9 CTAs fit 9 times, of 10-16 CTAs 7 times, of 4 CTAs 30 times, of 8 about 15). key_block_bytes: K's and
// V's bytes of one key block, which the choice between the cluster forms weighs (0: none of them is chosen).
//
// Which of one cluster, one larger than the portable size or several of the portable size (two levels):
// the form whose fixed cost plus its longest piece's loads is least. Session 54's requested counts
// (s54_counts.sh: one to four tiles of 8 rows, d128 and d64, 3000-32000 keys, two passes; session 53's
// combine by the rows' owners) fit a call's time as F + c x (the longest piece's key blocks): c ~0.7 us per
// 64 KB block of K and V (d128's 128 keys), ~0.35 us per d64 block of 32 KB; F ~5.6 us in one cluster of the
// portable size, ~6.3 above it, ~8.1 in two levels of 2-8 clusters. So the fixed costs below are counted in
// the bytes a piece loads meanwhile (0.7 us ~ 64 KB); a tie keeps the simpler form. Two levels take as
// many clusters as give pieces of one block, up to kGroupedCTAs CTAs over all tiles (a cluster of 8 a GPC:
// one K/V head of d128 read 64 pieces at 9.75 / 10.52 / 11.10 us over 16100 / 24000 / 32000 keys against 56
// pieces' 10.33 / 11.07 / 11.75, while two tiles read 32 pieces at 9.84 / 11.07 over 8000 / 16100 keys
// against 48's 10.38 / 11.27), or a wave's pieces of kMinSplitKVBlocks blocks where that is more (65000
// keys: 120 pieces, s51_groups.sh 17.5 us against the counter's 25.4). A tie keeps 8 where session 51 read a
// cluster of 9 slower by 1.1 us for pieces one block shorter (final51.sh: d256 16/8 at 3999 keys). Against
// session 53's rule in one call (s54_rule3.sh): one K/V head of d128 at 6000 / 8000 / 11000 / 16100 keys in
// 15 / 64 / 64 / 64 pieces 8.65 / 8.79 / 9.66 / 9.82 us where 24 / 15 / 15 / 56 read 9.40 / 9.70 / 10.58 /
// 10.24 (cuDNN 9.19 / 9.45 / 10.40 / 10.47).
inline constexpr int kMinClusterPieceBlocks = 2;
inline constexpr std::int64_t kNonPortableClusterCost = 64 * 1024;
inline constexpr std::int64_t kTwoLevelCost = 224 * 1024;
inline constexpr int kGroupedCTAs = 64;
inline constexpr int kClusterExtraBlocks = 8;
// The key blocks of the longest of `pieces` shares of `key_blocks` (split_key_blocks below).
constexpr std::int64_t longest_share(std::int64_t key_blocks, std::int64_t pieces) {
  return (key_blocks + pieces - 1) / pieces;
}
// `pieces` in one cluster, or the portable size where the larger cluster's fixed cost outweighs what it
// saves its pieces (key_block_bytes: K's and V's bytes of one key block).
inline int cluster_count_worth(std::int64_t key_blocks, int pieces, std::int64_t key_block_bytes) {
  return pieces <= kPortableClusterSize ||
                 kNonPortableClusterCost + longest_share(key_blocks, pieces) * key_block_bytes <
                     longest_share(key_blocks, kPortableClusterSize) * key_block_bytes
             ? pieces
             : kPortableClusterSize;
}
inline int split_kv_count(std::int64_t tiles, std::int64_t key_blocks, int sms, int requested,
                          std::int64_t narrow_piece_floats = 0, ClusterSlots cluster_pieces = {},
                          std::int64_t key_block_bytes = 0) {
  if (tiles <= 0 || key_blocks < 2 || requested == 1) return 1;
  const bool narrow = narrow_piece_floats > 0;
  const bool short_pieces = !narrow || tiles * kShortTileSplits <= sms;
  const std::int64_t sizes =
      std::max<std::int64_t>(key_blocks / kMinSplitKVBlocks,
                             short_pieces ? std::min<std::int64_t>(key_blocks, kShortTileSplits) : 1);
  const std::int64_t records =
      narrow ? std::max<std::int64_t>(1, kMaxTileRecordFloats / narrow_piece_floats) : key_blocks;
  std::int64_t splits = requested > 1 ? requested : std::min<std::int64_t>({sms / tiles, sizes, records});
  splits = std::min<std::int64_t>({splits, key_blocks, kMaxSplitKV});
  // Work items (tile * splits + split) stay below 2^30, as the tile indices do (backend.cu).
  splits = std::min<std::int64_t>(splits, ((std::int64_t{1} << 30) - 1) / tiles);
  if (narrow && cluster_pieces.most() > 1 && requested < 1 && key_block_bytes > 0) {
    const std::int64_t lengths = std::max<std::int64_t>(
        std::min<std::int64_t>(key_blocks, kPortableClusterSize), key_blocks / kMinClusterPieceBlocks);
    const std::int64_t cluster = cluster_count_worth(
        key_blocks,
        cluster_pieces.at_most(
            static_cast<int>(std::min<std::int64_t>({cluster_pieces.most(), sms / tiles, lengths}))),
        key_block_bytes);
    const auto blocks = [&](std::int64_t pieces) { return longest_share(key_blocks, pieces); };
    // Two levels (the launch's: a cluster's pieces combined in shared memory, the tile's clusters through L2)
    // where their cost is less than one cluster's: clusters of the portable size, enough for pieces of one
    // block within kGroupedCTAs CTAs, or pieces of at most kMinSplitKVBlocks blocks (the clusters rounded up:
    // two tiles over 24000 keys read 12.35 us in 56 pieces against 13.19 in 40, s54_rule.sh), within a wave.
    if (cluster_pieces.holds(kPortableClusterSize)) {
      constexpr std::int64_t kSize = kPortableClusterSize;
      const std::int64_t grouped =
          std::min<std::int64_t>(
              {sms / tiles, kMaxSplitKV,
               std::max<std::int64_t>((key_blocks / kMinSplitKVBlocks + kSize - 1) / kSize * kSize,
                                      std::min<std::int64_t>(key_blocks, kGroupedCTAs / tiles))}) /
          kSize * kSize;
      // (No cluster where the wave or the slots hold fewer than one piece a tile.)
      const auto cluster_cost = [&] {
        return (cluster > kPortableClusterSize ? kNonPortableClusterCost : 0) +
               blocks(cluster) * key_block_bytes;
      };
      if (grouped >= 2 * kPortableClusterSize &&
          (cluster < 1 || kTwoLevelCost + blocks(grouped) * key_block_bytes < cluster_cost()))
        return static_cast<int>(grouped);
    }
    if (cluster > 1 && blocks(cluster) <= blocks(splits) + kClusterExtraBlocks)
      return static_cast<int>(cluster);
  }
  return static_cast<int>(std::max<std::int64_t>(1, splits));
}

// More tiles than SMs, where split_kv_count splits none (a wave holds less than one piece a tile): the tiles
// of the launch's whole rounds stay whole, and the last round's `tail` (tiles % sms) split, so that their
// loads spread over every SM instead of `tail` of them (SplitKV whole_tiles). On an H200 (s55_batches.sh:
// GQA 32/8 d128 decodes of 17-40 sequences over 16384 keys, a KV cache's lengths, the dynamic schedule) the
// last round of `tail` tiles took 0.38 / 0.44 / 0.68 / 0.82 / 0.91 of a full round's time at 4 / 28 / 60 /
// 92 / 124 tiles: a CTA's key block costs kTailLoneRate + (1 - kTailLoneRate) x active / sms of its time in
// a full wave (per mille). So the tail's cost for `pieces` pieces a tile, in those units: ceil(tail x pieces
// / sms) rounds of pieces of the longest share's blocks at min(sms, tail x pieces) CTAs, each piece also
// paying its record and arrival, kTailPieceCost bytes of loads (~1 us: uniform splits of 32 sequences over
// 1024 keys read 1.3 us a piece more). The least-cost count, the fewest pieces on a tie; none where
// requested (n > 0: every tile split n ways, split_kv_count). Past two or more whole rounds the split must
// model kTailRoundMargin percent cheaper per round beyond the first: the dynamic schedule's CTAs then start
// the last tiles staggered, which the model does not see (s55_sweep.sh, 4096 keys: 42 / 44 sequences,
// modelled 0.971 / 0.956 of the tail's cost, read 1.010-1.014 of the time; one round's 25-27, modelled
// 0.95-1.0, read 0.90-0.95).
inline constexpr int kTailLoneRate = 400;
inline constexpr std::int64_t kTailPieceCost = 64 * 1024;
inline constexpr int kTailRoundMargin = 5;
struct SplitKVTail {
  int whole_tiles = 0;
  int splits = 1;  // of each tile from whole_tiles on; 1: none split
};
inline SplitKVTail split_kv_tail(std::int64_t tiles, std::int64_t key_blocks, int sms, int requested,
                                 std::int64_t narrow_piece_floats, std::int64_t key_block_bytes) {
  SplitKVTail plan;
  if (requested > 0 || sms <= 0 || tiles <= sms || key_blocks < 2 || key_block_bytes <= 0) return plan;
  const std::int64_t tail = tiles % sms;
  if (tail == 0) return plan;
  std::int64_t most = std::min<std::int64_t>(key_blocks, kMaxSplitKV);
  if (narrow_piece_floats > 0)
    most = std::min(most, std::max<std::int64_t>(1, kMaxTileRecordFloats / narrow_piece_floats));
  // Work items (whole tiles, then the tail's pieces) stay below 2^30, as the tile indices do (backend.cu).
  most = std::min<std::int64_t>(most, ((std::int64_t{1} << 30) - 1 - (tiles - tail)) / tail);
  const std::int64_t piece_permille = kTailPieceCost * 1000 / key_block_bytes;
  const auto cost = [&](std::int64_t pieces) {
    const std::int64_t items = tail * pieces;
    const std::int64_t active = std::min<std::int64_t>(items, sms);
    const std::int64_t rate = kTailLoneRate + (1000 - kTailLoneRate) * active / sms;
    return (items + sms - 1) / sms *
           (longest_share(key_blocks, pieces) * rate + (pieces > 1 ? piece_permille : 0));
  };
  std::int64_t best = 1;
  for (std::int64_t pieces = 2; pieces <= most; ++pieces) {
    if (cost(pieces) < cost(best)) best = pieces;
  }
  const std::int64_t margin = std::min<std::int64_t>(kTailRoundMargin * (tiles / sms - 1), 50);
  if (best > 1 && cost(best) * 100 < cost(1) * (100 - margin)) {
    plan.whole_tiles = static_cast<int>(tiles - tail);
    plan.splits = static_cast<int>(best);
  }
  return plan;
}

// Piece `split` of `splits` of the key blocks [begin, end): [begin + split * n / splits, begin + (split + 1)
// * n / splits), n = end - begin (empty when n < splits for some pieces; n * splits < 2^31: n < 2^23 blocks
// of 128 keys, splits <= kMaxSplitKV), through the launch's divisor of `splits` (SplitKV::splits_div: a
// multiply-high instead of an integer division on the way to a piece's first K load).
struct KeyBlockShare {
  int begin, end;
};
FLASHATTN_HD KeyBlockShare split_key_blocks(int begin, int end, int split, FastDivisor splits) {
  const int n = end > begin ? end - begin : 0;
  return {begin + fast_divide(split * n, splits), begin + fast_divide((split + 1) * n, splits)};
}

}  // namespace flashattn::detail::cuda_sm90
