// Split-KV decoding's plan (src/cuda/sm90/split_kv_plan.h): the split count the host chooses for the decode
// kernel, and the key-block shares the kernel's pieces take (split_kv.h work_key_blocks). The GPU suites
// (kvcache_test.cpp) check the results; these pin the rules over far more shapes than those run.
#include "cuda/sm90/split_kv_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace flashattn::test {
namespace {

using detail::cuda_sm90::cluster_count_worth;
using detail::cuda_sm90::ClusterSlots;
using detail::cuda_sm90::item_piece;
using detail::cuda_sm90::ItemPiece;
using detail::cuda_sm90::KeyBlockShare;
using detail::cuda_sm90::kMaxSplitKV;
using detail::cuda_sm90::split_key_blocks;
using detail::cuda_sm90::split_kv_count;
using detail::cuda_sm90::split_kv_tail;
using detail::cuda_sm90::SplitKV;
using detail::cuda_sm90::SplitKVTail;

// K's and V's bytes of one key block of the narrow decode tile (16-bit elements): d128 and d64 take 128 keys,
// d256 64.
constexpr std::int64_t kD128Block = 128 * (128 + 128) * 2;
constexpr std::int64_t kD64Block = 128 * (64 + 64) * 2;
constexpr std::int64_t kD256Block = 64 * (256 + 256) * 2;

TEST(SplitKVPlan, ChosenCountFillsOneWave) {
  // GQA 32/8 decode on 132 SMs: batch 1 / 4 / 8 / 16 are 8 / 32 / 64 / 128 tiles.
  EXPECT_EQ(split_kv_count(8, 128, 132, 0), 16);
  EXPECT_EQ(split_kv_count(32, 128, 132, 0), 4);
  EXPECT_EQ(split_kv_count(64, 128, 132, 0), 2);
  EXPECT_EQ(split_kv_count(128, 128, 132, 0), 1) << "tiles that fill the SMs are not split";
  EXPECT_EQ(split_kv_count(1000, 128, 132, 0), 1);
  EXPECT_EQ(split_kv_count(8, 64, 132, 0), 16) << "pieces of at least four key blocks";
  EXPECT_EQ(split_kv_count(1, 64, 132, 0), 16);
  EXPECT_EQ(split_kv_count(8, 20, 132, 0), 8) << "a short tile: up to eight pieces";
  EXPECT_EQ(split_kv_count(8, 7, 132, 0), 7) << "at most one piece per key block";
  EXPECT_EQ(split_kv_count(32, 8, 132, 0), 4);
  EXPECT_EQ(split_kv_count(1, 4096, 132, 0), kMaxSplitKV);
  EXPECT_EQ(split_kv_count(8, 1, 132, 0), 1) << "one key block cannot be split";
  for (int tiles = 1; tiles <= 300; ++tiles) {
    const int splits = split_kv_count(tiles, 1 << 20, 132, 0);
    EXPECT_LE(tiles * splits, std::max(132, tiles)) << tiles << " tiles: more pieces than a wave";
    EXPECT_GE(splits, 1);
  }
}

TEST(SplitKVPlan, ChosenCountBoundsTheCombine) {
  // A tile's records (pieces x rows x dv floats) stay within kMaxTileRecordFloats: a d256 decode of 8 rows
  // per tile over 16384 keys (256 key blocks) takes 32 pieces on one tile, not the 64 of a wave.
  using detail::cuda_sm90::kMaxTileRecordFloats;
  EXPECT_EQ(split_kv_count(1, 256, 132, 0, 8 * 256), 32);
  EXPECT_EQ(split_kv_count(4, 256, 132, 0, 8 * 256), 32);
  EXPECT_EQ(split_kv_count(8, 256, 132, 0, 2 * 256), 16) << "two rows: the wave's count";
  EXPECT_EQ(split_kv_count(8, 128, 132, 0, 8 * 128), 16) << "d128: no decode of 8 rows reaches the cap";
  EXPECT_EQ(split_kv_count(1, 256, 132, 0, 64 * 256), 4) << "64 rows of d256";
  EXPECT_EQ(split_kv_count(1, 256, 132, 0, kMaxTileRecordFloats * 2), 1) << "no piece fits: no split";
  EXPECT_EQ(split_kv_count(1, 256, 132, 64, 8 * 256), 64) << "a request is not capped";
  // Pieces of fewer than four key blocks only where 8 pieces of every tile fit in a wave (narrow tile).
  EXPECT_EQ(split_kv_count(32, 8, 132, 0, 4 * 128), 2) << "batch 4 at 1024 keys: pieces of 4 blocks";
  EXPECT_EQ(split_kv_count(32, 8, 132, 0), 4) << "the 64-row tile: pieces of 2 blocks";
  EXPECT_EQ(split_kv_count(8, 8, 132, 0, 4 * 128), 8) << "batch 1 at 1024 keys: 8 pieces of one block";
  EXPECT_EQ(split_kv_count(32, 3, 132, 0, 4 * 128), 1) << "3 blocks, 32 tiles: no split";
  for (std::int64_t floats : {64, 512, 2048, 8192, 32768}) {
    const int splits = split_kv_count(1, 1 << 20, 132, 0, floats);
    EXPECT_LE(splits * floats, std::max<std::int64_t>(kMaxTileRecordFloats, floats)) << floats;
  }
}

TEST(SplitKVPlan, ClusterSlots) {
  const ClusterSlots whole(15);  // whole records alone (d128, 8 rows)
  EXPECT_EQ(whole.most(), 15);
  EXPECT_TRUE(whole.holds(2) && whole.holds(15) && !whole.holds(16));
  EXPECT_EQ(whole.at_most(20), 15);
  const ClusterSlots gap{3, 8, 16};  // d256, 8 rows
  EXPECT_EQ(gap.most(), 16);
  EXPECT_TRUE(gap.holds(3) && !gap.holds(4) && !gap.holds(7) && gap.holds(8) && gap.holds(16) &&
              !gap.holds(17));
  EXPECT_EQ(gap.at_most(2), 2);
  EXPECT_EQ(gap.at_most(5), 3) << "a count in the gap: what whole records hold";
  EXPECT_EQ(gap.at_most(12), 12);
  EXPECT_EQ(gap.at_most(40), 16);
  const ClusterSlots no_spread{3, 8, 7};  // single rows would not reach a CTA per row
  EXPECT_EQ(no_spread.most(), 3);
  EXPECT_FALSE(no_spread.holds(7));
  EXPECT_EQ(no_spread.at_most(12), 3);
  EXPECT_EQ(ClusterSlots{}.most(), 0) << "no cluster combine";
}

TEST(SplitKVPlan, ClusterCombineCount) {
  // The narrow tile's cluster combine (up to 16 pieces a cluster, as the slots hold): a wave's pieces up to
  // the cluster's, pieces of at least kMinClusterPieceBlocks blocks beyond the portable 8 where that pays
  // (cluster_count_worth), unless the counter's count leaves its pieces more than kClusterExtraBlocks blocks
  // shorter; the other rules where it does not apply (cluster_pieces 0) or a count was requested.
  EXPECT_EQ(split_kv_count(8, 126, 132, 0, 4 * 128, 16, kD128Block), 16) << "batch 1 of GQA 32/8 at 16k keys";
  EXPECT_EQ(split_kv_count(8, 126, 132, 0, 4 * 128), 16) << "the counter's count there";
  EXPECT_EQ(split_kv_count(8, 126, 132, 0, 4 * 128, 8, kD128Block), 16)
      << "slots of 8: two levels (the H200 holds one)";
  EXPECT_EQ(split_kv_count(1, 126, 132, 0, 8 * 128, 15, kD128Block), 64) << "one K/V head at 16k keys: 8 x 8";
  EXPECT_EQ(split_kv_count(1, 126, 132, 0, 8 * 128, 7, kD128Block), 31)
      << "slots of 7: the counter (13 blocks shorter)";
  EXPECT_EQ(split_kv_count(1, 126, 132, 0, 8 * 128), 31);
  EXPECT_EQ(split_kv_count(1, 32, 132, 0, 8 * 128, 15, kD128Block), 8)
      << "one K/V head at 4k keys: 8 of 4 blocks";
  EXPECT_EQ(split_kv_count(1, 34, 132, 0, 8 * 128, 15, kD128Block), 15) << "15 of 3 blocks, not 8 of 5";
  EXPECT_EQ(split_kv_count(1, 26, 132, 0, 8 * 128, 15, kD128Block), 13)
      << "3k keys: 13 of 2 blocks, not 8 of 4";
  EXPECT_EQ(split_kv_count(1, 65, 132, 0, 8 * 128, 15, kD128Block), 64)
      << "8k keys: 8 x 8 of 2 blocks, not 15 of 5";
  EXPECT_EQ(split_kv_count(1, 49, 132, 0, 8 * 128, 15, kD128Block), 15)
      << "6k keys: 15 of 4 blocks, not 48 of 2";
  EXPECT_EQ(split_kv_count(2, 65, 132, 0, 8 * 128, 15, kD128Block), 15)
      << "two tiles: 32 pieces of 3 cost more";
  EXPECT_EQ(split_kv_count(2, 128, 132, 0, 8 * 128, 15, kD128Block), 32)
      << "two tiles at 16k keys: 4 x 8 each";
  EXPECT_EQ(split_kv_count(1, 65, 132, 0, 8 * 64, 16, kD64Block), 16) << "d64 blocks cost half: one cluster";
  EXPECT_EQ(split_kv_count(1, 128, 132, 0, 8 * 64, 16, kD64Block), 64) << "d64 at 16k keys: 8 x 8";
  EXPECT_EQ(split_kv_count(1, 65, 132, 0, 8 * 128, 15), 16) << "no block bytes: the counter's rules";
  // Where the counter's count would leave pieces more than kClusterExtraBlocks blocks shorter: clusters of 8,
  // several a tile (the launch's two levels), a wave's pieces of at least kMinSplitKVBlocks blocks.
  EXPECT_EQ(split_kv_count(1, 508, 132, 0, 8 * 128, 15, kD128Block), 128)
      << "one K/V head at 64k keys: 16 clusters of 8 (the launch takes as many as fit at once)";
  EXPECT_EQ(split_kv_count(1, 508, 132, 0, 8 * 128), 64) << "the counter's count there (the records' cap)";
  EXPECT_EQ(split_kv_count(2, 508, 132, 0, 8 * 128, 15, kD128Block), 64);
  EXPECT_EQ(split_kv_count(1, 252, 132, 0, 8 * 256, 3, kD256Block), 32)
      << "d256 8-row slots hold 3: the counter";
  // Session 53: where whole records hold fewer pieces than the tile has rows (d256, 8 rows: 3), slots of one
  // row from 8 pieces up (a CTA per row) let the cluster combine take the tile; counts between (4-7) are
  // lowered to what whole records hold.
  const ClusterSlots d256_rows8{3, 8, 16};
  EXPECT_EQ(split_kv_count(1, 252, 132, 0, 8 * 256, d256_rows8, kD256Block), 64)
      << "one K/V head at 16k keys: 8 x 8";
  EXPECT_EQ(split_kv_count(1, 40, 132, 0, 8 * 256, d256_rows8, kD256Block), 16)
      << "2.5k keys: one cluster of 16";
  EXPECT_EQ(split_kv_count(32, 63, 132, 0, 8 * 256, d256_rows8, kD256Block), 3)
      << "32 tiles: 4 is not held, 3 is";
  EXPECT_EQ(split_kv_count(8, 508, 132, 0, 4 * 128, 16, kD128Block), 16)
      << "8 tiles: 16 pieces in one cluster or two";
  EXPECT_EQ(split_kv_count(8, 8, 132, 0, 4 * 128, 16, kD128Block), 8)
      << "1k keys: pieces of one block up to 8";
  EXPECT_EQ(split_kv_count(32, 8, 132, 0, 4 * 128, 16, kD128Block), 4)
      << "batch 4 at 1k keys (the launch may take 3)";
  EXPECT_EQ(split_kv_count(64, 8, 132, 0, 4 * 128, 16, kD128Block), 2);
  EXPECT_EQ(split_kv_count(128, 8, 132, 0, 4 * 128, 16, kD128Block), 1)
      << "tiles that fill the SMs are not split";
  EXPECT_EQ(split_kv_count(8, 3, 132, 0, 4 * 128, 16, kD128Block), 3) << "at most one piece per key block";
  EXPECT_EQ(split_kv_count(8, 1, 132, 0, 4 * 128, 16, kD128Block), 1);
  EXPECT_EQ(split_kv_count(8, 126, 132, 12, 4 * 128, 16, kD128Block), 12) << "a request holds";
  EXPECT_EQ(split_kv_count(8, 126, 132, 1, 4 * 128, 16, kD128Block), 1);
  EXPECT_EQ(split_kv_count(32, 8, 132, 0, 0, 16, kD128Block), 4) << "the 64-row tile: its own rule";
  EXPECT_EQ(split_kv_count(8, 63, 132, 0, 2 * 256, 7, kD256Block), 7) << "d256 at 4k keys, slots of 7";
  EXPECT_EQ(split_kv_count(8, 63, 132, 0, 2 * 256, 15, kD256Block), 15)
      << "one cluster of 15 (the launch may lower it)";
  EXPECT_EQ(split_kv_count(1, 250, 132, 0, 8 * 128, 15, kD128Block), 64)
      << "32k keys: 64 of 4 blocks, not 120 of 2";
  // Above the portable size only where every piece's loads shrink by more than kNonPortableClusterCost
  // against 8 (the launch's bisection lands on a count the same way): 9 of 126 blocks is 14 against 16, 9 of
  // 67 is 8 against 9 (a tie keeps 8).
  EXPECT_EQ(cluster_count_worth(126, 9, kD128Block), 9);
  EXPECT_EQ(cluster_count_worth(67, 9, kD256Block), 8);
  EXPECT_EQ(cluster_count_worth(126, 9, kD64Block), 8) << "d64: two blocks of 32 KB tie";
  EXPECT_EQ(cluster_count_worth(126, 15, kD128Block), 15);
  EXPECT_EQ(cluster_count_worth(32, 15, kD128Block), 8);
  EXPECT_EQ(cluster_count_worth(8, 5, kD128Block), 5);
  EXPECT_EQ(cluster_count_worth(1 << 20, 9, kD128Block), 9);
  for (int tiles = 1; tiles <= 300; ++tiles) {
    for (const int key_blocks : {2, 8, 32, 126, 508, 1 << 20}) {
      const int splits = split_kv_count(tiles, key_blocks, 132, 0, 8 * 128, 15, kD128Block);
      EXPECT_LE(tiles * splits, std::max(132, tiles)) << tiles << " tiles: more pieces than a wave";
      EXPECT_GE(splits, 1);
      EXPECT_LE(splits, key_blocks);
    }
  }
}

TEST(SplitKVPlan, RequestedCount) {
  EXPECT_EQ(split_kv_count(8, 128, 132, 1), 1) << "num_splits 1 asks for no split";
  EXPECT_EQ(split_kv_count(8, 128, 132, 3), 3);
  EXPECT_EQ(split_kv_count(512, 128, 132, 3), 3) << "a request holds beyond one wave";
  EXPECT_EQ(split_kv_count(8, 8, 132, 200), 8) << "capped by the key blocks";
  EXPECT_EQ(split_kv_count(8, 4096, 132, 256), kMaxSplitKV);
  // Work items (tile * splits + split) stay below 2^30.
  const int tiles = (1 << 30) / 100;
  EXPECT_LT(static_cast<long long>(tiles) * split_kv_count(tiles, 4096, 132, 128), 1LL << 30);
}

TEST(SplitKVPlan, RecordsStayAligned) {
  // Records are written as float2 from any work item's offset (item * record floats): an odd count (one row
  // of 128 + 1 LSE) misaligned every other record (session 45's first GPU run).
  for (int rows = 1; rows <= 64; ++rows) {
    const std::size_t floats = detail::cuda_sm90::split_kv_record_floats(rows, 128);
    EXPECT_EQ(floats % 4, 0u) << rows << " rows";
    EXPECT_GE(floats, static_cast<std::size_t>(rows) * 129) << rows << " rows: O and the LSEs fit";
  }
}

// split_key_blocks's shares in plain integer division (its comment's formula), which the launch divisor's
// form must match.
KeyBlockShare plain_share(int begin, int end, int split, int splits) {
  const int n = end > begin ? end - begin : 0;
  return {begin + split * n / splits, begin + (split + 1) * n / splits};
}

TEST(SplitKVPlan, SharesCoverEveryBlockOnce) {
  for (int splits = 1; splits <= kMaxSplitKV; ++splits) {
    const detail::FastDivisor divisor = detail::make_fast_divisor(splits);
    for (int begin : {0, 3}) {
      for (int n = 0; n <= 300; n += (n < 40 ? 1 : 37)) {
        SCOPED_TRACE(std::to_string(n) + " blocks from " + std::to_string(begin) + " in " +
                     std::to_string(splits) + " pieces");
        int next = begin;
        int smallest = n, largest = 0;
        for (int split = 0; split < splits; ++split) {
          const KeyBlockShare share = split_key_blocks(begin, begin + n, split, divisor);
          ASSERT_EQ(share.begin, next) << "pieces in key order, end to end";
          ASSERT_LE(share.begin, share.end);
          next = share.end;
          smallest = std::min(smallest, share.end - share.begin);
          largest = std::max(largest, share.end - share.begin);
        }
        EXPECT_EQ(next, begin + n) << "every block in some piece";
        EXPECT_LE(largest - smallest, 1) << "shares differ by at most a block";
      }
    }
  }
  // An empty range (a row that sees no key) gives empty pieces.
  const KeyBlockShare none = split_key_blocks(5, 2, 1, detail::make_fast_divisor(4));
  EXPECT_GE(none.begin, none.end);
}

TEST(SplitKVPlan, SharesThroughTheLaunchDivisorMatch) {
  // The kernels' form (SplitKV::splits_div) gives the same shares, up to the bound n * splits < 2^31.
  for (int splits = 1; splits <= kMaxSplitKV; ++splits) {
    const detail::FastDivisor divisor = detail::make_fast_divisor(splits);
    for (const int n : {0, 1, 7, 63, 126, 1000, 65537, (1 << 23) - 1}) {
      for (int split = 0; split < splits; ++split) {
        const KeyBlockShare plain = plain_share(3, 3 + n, split, splits);
        const KeyBlockShare fast = split_key_blocks(3, 3 + n, split, divisor);
        ASSERT_EQ(fast.begin, plain.begin) << n << " blocks, piece " << split << " of " << splits;
        ASSERT_EQ(fast.end, plain.end) << n << " blocks, piece " << split << " of " << splits;
      }
    }
  }
}

TEST(SplitKVPlan, TailSplitsOnlyThePartialRound) {
  // GQA 32/8 d128 (4 rows of 128 columns a record) on 132 SMs.
  auto tail = [](std::int64_t tiles, std::int64_t key_blocks, int requested = 0) {
    return split_kv_tail(tiles, key_blocks, 132, requested, 4 * 128, kD128Block);
  };
  // Batch 17 / 20 / 24 over 16384 keys (128 blocks): one whole round, the rest split.
  for (const std::int64_t tiles : {136, 160, 192}) {
    const SplitKVTail plan = tail(tiles, 128);
    EXPECT_EQ(plan.whole_tiles, 132) << tiles;
    EXPECT_GT(plan.splits, 1) << tiles;
    // The split tiles' pieces spread over more SMs than the tiles alone.
    EXPECT_GT((tiles - 132) * plan.splits, tiles - 132) << tiles;
  }
  EXPECT_EQ(tail(136, 128).splits, 32);  // 4 tiles over 128 of the SMs
  EXPECT_EQ(tail(192, 128).splits, 2);   // 60 tiles: 120 pieces, one round
  EXPECT_EQ(tail(136, 8).splits, 8);     // 1024 keys: pieces of one block
  // Batch 41 (328 tiles): two whole rounds.
  EXPECT_EQ(tail(328, 128).whole_tiles, 264);
  // Nothing to split: whole rounds, a wave or less (split_kv_count's), one block, a requested count.
  for (const SplitKVTail plan :
       {tail(264, 128), tail(132, 128), tail(100, 128), tail(136, 1), tail(136, 128, 2), tail(136, 128, 1)}) {
    EXPECT_EQ(plan.whole_tiles, 0);
    EXPECT_EQ(plan.splits, 1);
  }
  // Past two whole rounds a split must model more than a few percent cheaper (batch 42 / 44 over 4352 keys of
  // a cache, 34 blocks: 72 / 88 tail tiles), while the same tails after one round split (batch 25 / 26).
  EXPECT_EQ(tail(336, 34).splits, 1);
  EXPECT_EQ(tail(352, 34).splits, 1);
  EXPECT_GT(tail(200, 34).splits, 1);
  EXPECT_GT(tail(208, 34).splits, 1);
  EXPECT_GT(tail(272, 34).splits, 1);  // batch 34: 8 tail tiles after two rounds
  // A tail of nearly a round (batch 32: 124 tiles) gains nothing from pieces that take a second round.
  EXPECT_EQ(tail(256, 8).splits, 1);
  // The narrow tile's records bound the pieces (at most kMaxTileRecordFloats of a tile's): 8 rows of d256.
  EXPECT_LE(split_kv_tail(136, 512, 132, 0, 8 * 256, kD256Block).splits, 32);
  EXPECT_LE(tail(136, 100000).splits, kMaxSplitKV);
}

TEST(SplitKVPlan, ItemsMapToTilesAndPieces) {
  // Every tile of a launch is one whole item or exactly its `splits` pieces, in order.
  for (const int whole : {0, 3, 132}) {
    for (const int splits : {1, 2, 5, 32}) {
      SplitKV s;
      s.splits = splits;
      s.splits_div = detail::make_fast_divisor(splits);
      s.whole_tiles = splits > 1 ? whole : 0;
      const int tiles = s.whole_tiles + 7;
      const int items = s.whole_tiles + (tiles - s.whole_tiles) * splits;
      std::vector<int> pieces(tiles, 0);
      int last_tile = -1;
      for (int item = 0; item < items; ++item) {
        const ItemPiece piece = item_piece(s, item);
        ASSERT_GE(piece.tile, last_tile);
        last_tile = piece.tile;
        ASSERT_LT(piece.tile, tiles);
        EXPECT_EQ(piece.split, splits > 1 && piece.tile >= s.whole_tiles) << item;
        EXPECT_EQ(piece.piece, piece.split ? pieces[piece.tile] : 0) << item;
        ++pieces[piece.tile];
      }
      for (int t = 0; t < tiles; ++t)
        EXPECT_EQ(pieces[t], t < s.whole_tiles || splits == 1 ? 1 : splits) << t;
    }
  }
}

}  // namespace
}  // namespace flashattn::test
