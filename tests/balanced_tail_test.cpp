// The balanced tail of the static couples (src/cuda/sm90/balanced_tail.h): the host's plan and the walk the
// kernels run (balanced_first_tile / balanced_next_tile / balanced_tail_unit, compiled here for the host with
// the same multiply-high arithmetic). Every plan must hand each (pair, query unit) to exactly one CTA, keep
// the whole rounds' couples as tile_sections.h orders them, hand out the tail longest first in a snake, and
// balance the model's loads where plain couples cannot. The GPU suites check the kernels' outputs.
#include "cuda/sm90/balanced_tail.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace flashattn::test {
namespace {

using detail::cuda_sm90::balanced_first_tile;
using detail::cuda_sm90::balanced_next_tile;
using detail::cuda_sm90::balanced_tail_unit;
using detail::cuda_sm90::balanced_tail_with;
using detail::cuda_sm90::BalancedTail;
using detail::cuda_sm90::plan_balanced_tail;
using detail::cuda_sm90::plan_tile_sections;
using detail::cuda_sm90::section_unit;
using detail::cuda_sm90::SectionUnit;
using detail::cuda_sm90::TailCostModel;
using detail::cuda_sm90::TileSections;

std::string shape(int pairs, int units, int grid) {
  return std::to_string(pairs) + " pairs, " + std::to_string(units) + " units, " + std::to_string(grid) +
         " CTAs";
}

// The unit a tile names: the couples' decode (the launch's paired, couples-by-pair sections of `sec_heads`
// pairs) below the tail, the tail's above.
SectionUnit unit_of(const BalancedTail& t, const TileSections& s, int tile) {
  return tile < t.start_tile ? section_unit(s, tile) : balanced_tail_unit(t, tile);
}

// Walks every CTA's tiles: each (pair, unit) exactly once; the couples below the tail on the static couples'
// strides (CTA b the couples b, b + grid, ...), the tail's tile j on CTA j mod grid (even rounds) or grid - 1
// - j mod grid (odd ones), and the tail's units longest first with the pairs in order within a length.
void check_walk(const BalancedTail& t, int pairs, int units, int grid, int sec_heads) {
  const int num_tiles = pairs * units;
  const TileSections s = plan_tile_sections(pairs, sec_heads, units, grid, 0, true, true);
  ASSERT_TRUE(s.couples_by_pair);
  std::vector<int> seen(static_cast<std::size_t>(num_tiles), 0);
  std::vector<int> owner(static_cast<std::size_t>(num_tiles), -1);
  for (int b = 0; b < grid; ++b) {
    int steps = 0;
    for (int tile = balanced_first_tile(t, b); tile < num_tiles;
         tile = balanced_next_tile(t, tile, grid, b)) {
      ASSERT_GE(tile, 0);
      ASSERT_LT(++steps, num_tiles + 2) << "CTA " << b << " does not end";
      ASSERT_EQ(owner[static_cast<std::size_t>(tile)], -1) << "tile " << tile << " twice";
      owner[static_cast<std::size_t>(tile)] = b;
      const SectionUnit u = unit_of(t, s, tile);
      ASSERT_GE(u.bh, 0);
      ASSERT_LT(u.bh, pairs);
      ASSERT_GE(u.m_rank, 0);
      ASSERT_LT(u.m_rank, units);
      ++seen[static_cast<std::size_t>(u.bh) * units + u.m_rank];
      if (tile < t.start_tile) {
        ASSERT_EQ(tile / 2 % grid, b) << "couple " << tile / 2;
        ASSERT_EQ(u.m_rank, detail::cuda_sm90::couple_tile_rank(units, tile)) << tile;
      } else {
        const int j = tile - t.start_tile, round = j / grid, at = j % grid;
        ASSERT_EQ(b, round % 2 == 0 ? at : grid - 1 - at) << "tail tile " << j;
      }
    }
  }
  for (int tile = 0; tile < num_tiles; ++tile) ASSERT_NE(owner[static_cast<std::size_t>(tile)], -1) << tile;
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "pair/unit " << i;
  for (int tile = t.start_tile + 1; tile < num_tiles; ++tile) {
    const SectionUnit a = balanced_tail_unit(t, tile - 1), c = balanced_tail_unit(t, tile);
    ASSERT_TRUE(a.m_rank < c.m_rank || (a.m_rank == c.m_rank && a.bh < c.bh)) << "tail tile " << tile;
  }
}

// The first and last numbers of whole rounds on shapes around the standard grid's (32 heads of 32 units on
// 132 CTAs) and odd ones (a grid larger than the couples, one pair, sections that split nothing).
TEST(BalancedTail, EveryTileOnceForEveryNumberOfWholeRounds) {
  for (int pairs : {1, 2, 3, 7, 32, 33, 64, 257}) {
    for (int units : {2, 4, 6, 8, 16, 32, 64}) {
      for (int grid : {2, 3, 66, 132, 133}) {
        const int couples = pairs * units / 2, whole = (couples - 1) / grid;
        // The first and the last whole-round counts (every count on the small shapes).
        std::vector<int> counts{0, 1, 2, whole - 1, whole};
        std::sort(counts.begin(), counts.end());
        counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
        for (int rounds : counts) {
          if (rounds < 0 || rounds > whole) continue;
          SCOPED_TRACE(shape(pairs, units, grid) + ", " + std::to_string(rounds) + " whole rounds");
          const BalancedTail t = balanced_tail_with(pairs, units, grid, rounds);
          ASSERT_EQ(t.start_tile, 2 * rounds * grid);
          for (int sec : {1, 3, 1000}) check_walk(t, pairs, units, grid, sec);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// The loads the model gives each CTA under plan t.
std::vector<double> model_loads(const BalancedTail& t, int pairs, int units, int grid,
                                const TailCostModel& m) {
  std::vector<double> load(static_cast<std::size_t>(grid), 0.0);
  const int num_tiles = pairs * units;
  for (int b = 0; b < grid; ++b) {
    for (int tile = balanced_first_tile(t, b); tile < num_tiles;
         tile = balanced_next_tile(t, tile, grid, b)) {
      const int rank = tile < t.start_tile ? detail::cuda_sm90::couple_tile_rank(units, tile)
                                           : balanced_tail_unit(t, tile).m_rank;
      load[static_cast<std::size_t>(b)] += m.tile(units, rank);
    }
  }
  return load;
}

// The plans of the standard grid's short causal d256 rows (16k tokens, 8 heads: 512 couples on 132 CTAs,
// 64-key blocks of 128-row tiles): plain couples end 3.1% over the mean load; the plan within 0.5% at
// 2k / 4k keys and below plain couples at 1k, and each plan is a valid walk. At whole rounds, and where
// no tail helps, plain couples (start_tile = num_tiles); with fewer couples than CTAs, single tiles.
TEST(BalancedTail, PlanBalancesTheStandardGridsShortCausalRows) {
  const TailCostModel m{2.0, 0.0, 1.5};
  struct Row {
    int pairs, units;
    double bound;
  };
  for (const Row row : {Row{32, 32, 1.005}, Row{64, 16, 1.005}, Row{128, 8, 1.01}}) {
    SCOPED_TRACE(shape(row.pairs, row.units, 132));
    const BalancedTail t = plan_balanced_tail(row.pairs, row.units, 132, m);
    ASSERT_LT(t.start_tile, row.pairs * row.units);
    check_walk(t, row.pairs, row.units, 132, 6);
    const std::vector<double> load = model_loads(t, row.pairs, row.units, 132, m);
    double mean = 0;
    for (double l : load) mean += l / 132;
    const double worst = *std::max_element(load.begin(), load.end());
    EXPECT_LT(worst / mean, row.bound);
    BalancedTail plain;
    plain.start_tile = row.pairs * row.units;
    const std::vector<double> couples = model_loads(plain, row.pairs, row.units, 132, m);
    EXPECT_NEAR(*std::max_element(couples.begin(), couples.end()) / mean, 1.031, 0.001);
  }
  EXPECT_EQ(plan_balanced_tail(33, 8, 132, m).start_tile, 33 * 8);  // 132 couples: one whole round
  // Fewer couples than CTAs: single tiles on twice the CTAs, the longest tile's time instead of a couple's.
  EXPECT_EQ(plan_balanced_tail(1, 64, 132, m).start_tile, 0);
  EXPECT_EQ(plan_balanced_tail(7, 3, 132, m).start_tile, 21);    // odd units: no couples
  EXPECT_EQ(plan_balanced_tail(32, 32, 1, m).start_tile, 1024);  // one CTA
}

}  // namespace
}  // namespace flashattn::test
