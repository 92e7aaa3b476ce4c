// The balanced tail of the static couples (forward_config.h BALANCED_TAIL, Config::kBalancedTail; the
// scheduler's side in tile_scheduler.h). Host and device, without CUDA headers: tests/balanced_tail_test.cpp
// walks plans through the same functions.
//
// Static couples (tile_sections.h paired, couples_by_pair: query units r and units - 1 - r of one head) make
// every couple the same work, but N couples on G CTAs end in a partial round. At the standard grid's short
// causal d256 rows that is 512 couples on 132 CTAs, 3.88 rounds: 16 CTAs idle through the last round
// (session 40's timelines: 4.2% of the SM time after the loops end at causal 4k). A couple is too coarse to
// fill that round; its two tiles are not. The plan keeps `rounds` whole rounds of couples (CTA b the couples
// b, b + G, ...) and hands out the tiles of the couples after them one at a time, longest first (heads
// fastest within a length), in a snake over the CTAs: the tail's tile j goes to CTA j mod G in the even
// rounds j / G and to CTA G - 1 - j mod G in the odd ones, so the CTA that took a round's longest tile takes
// the next round's shortest. The whole rounds keep a head's tiles together (its K/V read once by the CTAs
// that hold its couples at the same time); the tail reads a head's K/V about once per round that holds its
// tiles, so the plan keeps as many whole rounds as still leave the tail enough long tiles to balance. It
// picks that number with a cost model (a tile costs its key blocks plus a fixed cost per tile) and keeps
// plain couples where no tail shortens the model's makespan.
#pragma once

#include <array>
#include <cstdint>

#include "common/fast_division.h"
#include "common/host_device.h"
#include "cuda/sm90/tile_sections.h"

namespace flashattn::detail::cuda_sm90 {

// The tail's tiles in order: for each query unit rank (0 = the longest tile) the heads that still have it.
// Couple c of the head-major couples is (head c / (units / 2), couple rank c mod (units / 2)), and unit ranks
// r and units - 1 - r belong to couple rank min(r, units - 1 - r). The whole rounds take couples [0, C): all
// of heads below q = C / (units / 2) and the first s = C mod (units / 2) couple ranks of head q. So the
// unit ranks of couple rank < s (the first s and the last s) are left in heads q + 1.. (partial_pairs of
// them), every other rank in heads q.. (full_pairs).
struct BalancedTail {
  int start_tile = 0x7fffffff;  // tiles below it: couples (tile_sections.h); from it on: the tail
  int units = 2;                // query units per head (even)
  int first_pair = 0;           // q
  int partial_ranks = 0;        // s
  int partial_end = 0;          // the tail's tiles of the first s unit ranks
  int full_end = 0;             // ... and of the ranks up to units - s
  int full_pairs = 1, partial_pairs = 1;
  FastDivisor full_div, partial_div, grid_div;
};

// Tail tile `tile` (start_tile <= tile < num_tiles): its (batch, head) pair and unit rank. Selects, not
// branches: every thread of a warp decodes the same index.
FLASHATTN_HD SectionUnit balanced_tail_unit(const BalancedTail& t, int tile) {
  const int j = tile - t.start_tile;
  const bool first = j < t.partial_end;
  const bool full = !first && j < t.full_end;
  const int local = first ? j : (full ? j - t.partial_end : j - t.full_end);
  const int level = fast_divide(local, full ? t.full_div : t.partial_div);
  const int pair = local - level * (full ? t.full_pairs : t.partial_pairs) + t.first_pair + (full ? 0 : 1);
  const int first_level = first ? 0 : (full ? t.partial_ranks : t.units - t.partial_ranks);
  return SectionUnit{pair, first_level + level};
}

// Unit rank of tile `tile` of the head-major couples (tile_sections.h couples_by_pair): the couple's longer
// tile first.
FLASHATTN_HD int couple_tile_rank(int units, int tile) {
  const int rank = (tile >> 1) % (units >> 1);
  return (tile & 1) ? units - 1 - rank : rank;
}

// CTA `block`'s first tile and the one after `tile`, on a grid of `grid` CTAs (>= num_tiles: none left).
FLASHATTN_HD int balanced_first_tile(const BalancedTail& t, int block) {
  return t.start_tile == 0 ? block : couple_first_tile(block, 1);
}
FLASHATTN_HD int balanced_next_tile(const BalancedTail& t, int tile, int grid, int block) {
  if (tile < t.start_tile) {
    const int next = static_couple_next(tile, grid, 1);
    return next < t.start_tile ? next : t.start_tile + block;
  }
  const int j = tile - t.start_tile;
  const int round = fast_divide(j, t.grid_div);
  return t.start_tile + (round + 1) * grid + (grid - 1 - (j - round * grid));
}

// The plan's cost model: a tile of unit rank r (unit units - 1 - r from the first) visits about
// (units - r) * blocks_per_unit + extra_blocks key blocks (causal, bottom-right: extra_blocks = (keys -
// queries) / block width) and costs tile_blocks more (its start and epilogue, in key blocks).
struct TailCostModel {
  double blocks_per_unit = 1, extra_blocks = 0, tile_blocks = 1.5;
  double tile(int units, int rank) const {
    return (units - rank) * blocks_per_unit + extra_blocks + tile_blocks;
  }
};

// Grids beyond this many CTAs, or more couples than kMaxTailPlanRounds rounds' worth, keep plain couples (the
// host's model walks the tail once per candidate; at many rounds the last one's share is small).
inline constexpr int kMaxTailPlanGrid = 1024;
inline constexpr int kMaxTailPlanRounds = 32;

// Host: the tail with `rounds` whole rounds of couples before it (rounds * grid < couples).
inline BalancedTail balanced_tail_with(int pairs, int units, int grid, int rounds) {
  BalancedTail t;
  const int half = units / 2, couples_done = rounds * grid;
  t.start_tile = 2 * couples_done;
  t.units = units;
  t.first_pair = couples_done / half;
  t.partial_ranks = couples_done % half;
  t.full_pairs = pairs - t.first_pair;
  t.partial_pairs = t.full_pairs - 1;
  t.partial_end = t.partial_ranks * t.partial_pairs;
  t.full_end = t.partial_end + (units - 2 * t.partial_ranks) * t.full_pairs;
  t.full_div = make_fast_divisor(t.full_pairs < 1 ? 1 : t.full_pairs);
  t.partial_div = make_fast_divisor(t.partial_pairs < 1 ? 1 : t.partial_pairs);
  t.grid_div = make_fast_divisor(grid);
  return t;
}

// The model's makespan of plan t (every CTA's tiles walked through the kernel's own functions).
inline double balanced_tail_makespan(const BalancedTail& t, int num_tiles, int grid, const TailCostModel& m) {
  std::array<double, kMaxTailPlanGrid> load{};
  double longest = 0;
  for (int b = 0; b < grid; ++b) {
    for (int tile = balanced_first_tile(t, b); tile < num_tiles;
         tile = balanced_next_tile(t, tile, grid, b)) {
      const int rank =
          tile < t.start_tile ? couple_tile_rank(t.units, tile) : balanced_tail_unit(t, tile).m_rank;
      load[b] += m.tile(t.units, rank);
    }
    longest = load[b] > longest ? load[b] : longest;
  }
  return longest;
}

// Host: the plan for `pairs` heads of `units` query units (even) on `grid` CTAs. From the most whole rounds
// (couples / grid) down to three fewer, a plan with fewer whole rounds replaces the one chosen so far only
// when its model makespan is shorter by more than 0.25% (fewer whole rounds read more from DRAM); plain
// couples (start_tile = num_tiles) are the first choice, and stay where the rounds are whole.
inline BalancedTail plan_balanced_tail(int pairs, int units, int grid, const TailCostModel& m) {
  BalancedTail none;
  const std::int64_t couples = static_cast<std::int64_t>(pairs) * (units / 2);
  none.start_tile = pairs * units;  // the launch's tile count (< 2^31)
  none.units = units;
  if (units < 2 || units % 2 != 0 || grid < 2 || grid > kMaxTailPlanGrid || couples % grid == 0 ||
      couples > static_cast<std::int64_t>(kMaxTailPlanRounds) * grid || 2 * couples >= (1 << 30))
    return none;
  const int num_tiles = static_cast<int>(2 * couples);
  const int whole = static_cast<int>(couples / grid);
  const double couple_cost = m.tile(units, 0) + m.tile(units, units - 1);
  const double plain = (whole + 1) * couple_cost;
  double best = plain;
  BalancedTail chosen = none;
  for (int rounds = whole; rounds >= 0 && rounds >= whole - 3; --rounds) {
    const BalancedTail t = balanced_tail_with(pairs, units, grid, rounds);
    const double span = balanced_tail_makespan(t, num_tiles, grid, m);
    // Fewer whole rounds (more DRAM traffic) only for a clear gain.
    if (span < best * (1 - 0.0025)) best = span, chosen = t;
  }
  return chosen;
}

}  // namespace flashattn::detail::cuda_sm90
