// The split tail's plan (src/cuda/sm90/split_tail_plan.h): which units of the sm90 static schedule form the
// tail and how their key blocks are shared among the clusters. Walks every cluster's pieces the way the
// kernels do (split_tail.h tail_piece / next_tail_item: the units from lo(c) / key_blocks on, each cut to
// [lo(c), lo(c + 1))) over shapes far beyond what the GPU suites run, and checks that every tail block is
// computed exactly once, the shares differ by at most a block, no unit has more pieces than the combine
// reads, and no CTA needs more than its two records (split pieces only at either end of its share).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/sm90/split_tail_plan.h"

namespace flashattn::test {
namespace {

using detail::cuda_sm90::kMaxTailPieces;
using detail::cuda_sm90::split_tail_plan;
using detail::cuda_sm90::SplitTail;
using detail::cuda_sm90::tail_share_begin;

void check_plan(int units, int key_blocks, int clusters) {
  SCOPED_TRACE(std::to_string(units) + " units of " + std::to_string(key_blocks) + " key blocks on " +
               std::to_string(clusters) + " clusters");
  constexpr int kClusterSize = 2;
  const SplitTail t = split_tail_plan(units, kClusterSize, key_blocks, clusters);
  const int num_tiles = units * kClusterSize;
  if (units % clusters == 0 || key_blocks < 2 || (units < clusters && 2 * units < clusters)) {
    EXPECT_EQ(t.start_tile, num_tiles)
        << "no tail where the rounds are whole, blocks single or no round full";
    return;
  }
  ASSERT_LT(t.start_tile, num_tiles);
  // The tiles before the tail are whole rounds of the grid, and the tail at least half a round.
  EXPECT_EQ(t.start_tile % (kClusterSize * clusters), 0);
  EXPECT_EQ(t.start_tile, t.start_unit * kClusterSize);
  EXPECT_EQ(t.start_unit + t.units, units);
  EXPECT_GE(2 * t.units, clusters);
  EXPECT_LT(t.units, 2 * clusters);
  const int blocks = t.units * key_blocks;
  EXPECT_EQ(tail_share_begin(t, 0), 0);
  EXPECT_EQ(tail_share_begin(t, clusters), blocks);
  std::vector<int> owner(static_cast<std::size_t>(blocks), -1);
  std::vector<int> pieces(static_cast<std::size_t>(t.units), 0);
  for (int c = 0; c < clusters; ++c) {
    const int lo = tail_share_begin(t, c), hi = tail_share_begin(t, c + 1);
    ASSERT_GE(hi - lo, blocks / clusters);
    ASSERT_LE(hi - lo, blocks / clusters + 1);
    ASSERT_GE(2 * (hi - lo), key_blocks - 1) << "a share of at least half a unit";
    int split_pieces = 0;
    for (int unit = lo / key_blocks; unit * key_blocks < hi; ++unit) {
      const int unit_lo = unit * key_blocks;
      const int begin = std::max(lo, unit_lo) - unit_lo, end = std::min(hi, unit_lo + key_blocks) - unit_lo;
      ASSERT_LT(begin, end);
      ++pieces[static_cast<std::size_t>(unit)];
      if (begin > 0 || end < key_blocks) {
        // Its record: the first piece's (the share starts in the unit) or the last's.
        const bool first_piece = lo >= unit_lo;
        const bool last_piece = (unit + 1) * key_blocks >= hi;
        EXPECT_TRUE(first_piece || last_piece) << "a split piece inside cluster " << c << "'s share";
        ++split_pieces;
      }
      for (int n = begin; n < end; ++n) {
        int& o = owner[static_cast<std::size_t>(unit_lo + n)];
        ASSERT_EQ(o, -1) << "block " << n << " of tail unit " << unit << " twice";
        o = c;
      }
    }
    EXPECT_LE(split_pieces, 2);
  }
  for (int b = 0; b < blocks; ++b) ASSERT_NE(owner[static_cast<std::size_t>(b)], -1) << "tail block " << b;
  for (int u = 0; u < t.units; ++u) {
    ASSERT_GE(pieces[static_cast<std::size_t>(u)], 1);
    ASSERT_LE(pieces[static_cast<std::size_t>(u)], kMaxTailPieces) << "unit " << u;
  }
}

TEST(SplitTail, EveryTailBlockOnceInBalancedShares) {
  // The standard grid on 66 / 64 / 57 clusters (H200 / H100 SXM cluster counts of two, an H100 PCIe), its
  // d128 rows (1024 units, 4 to 128 key blocks), and small and ragged shapes.
  for (int clusters : {2, 3, 57, 64, 66, 71}) {
    for (int units : {1, 2, 35, 70, 100, 133, 1024, 1031}) {
      for (int key_blocks : {1, 2, 3, 5, 16, 17, 32, 128}) check_plan(units, key_blocks, clusters);
    }
  }
}

TEST(SplitTail, NoTailOnWholeRounds) {
  EXPECT_EQ(split_tail_plan(132, 2, 32, 66).start_tile, 264);
  EXPECT_EQ(split_tail_plan(1024, 2, 32, 64).start_tile, 2048);
}

}  // namespace
}  // namespace flashattn::test
