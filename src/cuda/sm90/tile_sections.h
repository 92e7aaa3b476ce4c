// The L2 sections of the sm90 tile order (tile_scheduler.h): which (batch, head) pair and which
// query block a linear tile index names. The launch plans the sections (plan_tile_sections, host),
// the kernels decode tile indices with section_unit, and tests/tile_sections_test.cpp walks every
// index of a plan through the same function.
//
// A section is a run of consecutive (batch, head) pairs whose K/V fit in a part of L2; inside it
// the query blocks run last-first (the longest causal tiles first) and the pairs fastest, so the
// tiles running at the same time read the K/V of few heads. The last section may differ in size:
//  - it holds what is left after the regular sections (1..sec_heads pairs), or
//  - with a tail factor F (the dynamic schedule: causal, windowed, variable length), it also takes
//    in the regular sections before it until it holds at least F tiles per CTA of the grid. Inside
//    a section the longest tiles come first, but a section's longest tiles start only once the
//    sections before it are handed out: when the last section is small (a head or two at long
//    causal rows), its longest tile starts near the end of the launch and runs on alone while the
//    other CTAs idle. A scheduling model of the standard grid (claims in order by 132 CTAs, tile
//    cost = its key blocks + 1) put that tail at 5-9% of the launch at d128 causal 512-8k and 10-16%
//    at d256 (0.5-1% at 16k); a last section of at least two tiles per CTA brings every row within
//    1-3% of perfect balance (docs/kernel-notes-sm90.md, session 10).
#pragma once

#include <cstdint>

#include "common/fast_division.h"
#include "common/host_device.h"

namespace flashattn::detail::cuda_sm90 {

// Units are query blocks, or pairs of them for the cluster kernels (tile_scheduler.h tile_work).
struct TileSections {
  int sec_heads = 1;   // pairs per regular section
  int units = 1;       // query units per pair (m_blocks, or m_blocks / 2 for clusters of two)
  int last_unit = 0;   // first unit index of the last section (= last_bh * units)
  int last_bh = 0;     // its first pair
  int last_heads = 1;  // its pairs
  // Couples of complementary query units (forward_launch.h: causal problems whose sections hold one kv head):
  // inside a section the units go two at a time, ranks r and units - 1 - r of one (batch, head) pair (under a
  // causal mask the two tiles' key blocks add up to the same for every r), the pairs fastest; a CTA claims a
  // couple at once (tile_scheduler.h claim_next_tile). Only with an even number of units.
  bool paired = false;
  // Paired plans only: inside a section a pair's couples consecutive (couple ranks fastest, the longer tile
  // first) instead of the pairs fastest, so that at four units a pair's two couples are couples 2c and 2c + 1
  // of its section: the two CTAs of a cluster of two on static couples (forward_config.h
  // PLACEMENT_MAX_SEQLEN) then hold one pair at every step.
  bool couples_by_pair = false;
  // Quotients by multiply-high (fast_division.h): by sec_heads * units, sec_heads, last_heads, units / 2.
  FastDivisor section_units_div, sec_heads_div, last_heads_div, couples_div;
};

// Host: sections of `sec_heads` pairs (clamped to 1..pairs) over `pairs` pairs of `units` query units
// each; tail_factor 0 keeps the remainder as the last section, else the last section grows to at least
// tail_factor * ctas units (or to every pair); paired / couples_by_pair as above (each needs the one before
// it and an even number of units). Needs pairs * units < 2^31 (the launch's tile count).
inline TileSections plan_tile_sections(int pairs, int sec_heads, int units, int ctas, int tail_factor,
                                       bool paired = false, bool couples_by_pair = false) {
  TileSections s;
  s.paired = paired && units % 2 == 0;
  s.couples_by_pair = s.paired && couples_by_pair;
  pairs = pairs < 1 ? 1 : pairs;
  units = units < 1 ? 1 : units;
  s.sec_heads = sec_heads < 1 ? 1 : (sec_heads > pairs ? pairs : sec_heads);
  s.units = units;
  int regular = (pairs - 1) / s.sec_heads;  // the last section keeps 1..sec_heads pairs
  if (tail_factor > 0) {
    const std::int64_t want = static_cast<std::int64_t>(tail_factor) * (ctas < 1 ? 1 : ctas);
    while (regular > 0 && static_cast<std::int64_t>(pairs - regular * s.sec_heads) * units < want) --regular;
  }
  s.last_bh = regular * s.sec_heads;
  s.last_heads = pairs - s.last_bh;
  s.last_unit = s.last_bh * units;
  s.section_units_div = make_fast_divisor(s.sec_heads * units);
  s.sec_heads_div = make_fast_divisor(s.sec_heads);
  s.last_heads_div = make_fast_divisor(s.last_heads);
  s.couples_div = make_fast_divisor(units / 2 < 1 ? 1 : units / 2);
  return s;
}

struct SectionUnit {
  int bh;      // (batch, head) pair: batch * heads + head
  int m_rank;  // query unit counted from the last one (0 = the last, the longest causal tile)
};

// Where unit `unit` falls: its section (the last one or a regular one), its first pair and pair count, and
// the unit's index inside it.
struct SectionPlace {
  bool last;
  int index, size, first_bh;
};
FLASHATTN_HD SectionPlace section_place(const TileSections& s, int unit) {
  const bool last = unit >= s.last_unit;
  const int section = fast_divide(unit, s.section_units_div);
  return SectionPlace{last, last ? unit - s.last_unit : unit - section * s.sec_heads * s.units,
                      last ? s.last_heads : s.sec_heads, last ? s.last_bh : section * s.sec_heads};
}

// Unit `unit` (0 <= unit < pairs * units) of plan s. Selects, not branches: every thread of a warp
// decodes the same index.
FLASHATTN_HD SectionUnit section_unit(const TileSections& s, int unit) {
  const SectionPlace at = section_place(s, unit);
  // Paired: couple index / 2 of the section (pairs fastest), its longest unit first; by pair: the couple's
  // pair and rank in it.
  const int couple = at.index >> 1;
  const int couple_pair = fast_divide(couple, s.couples_div);
  const int ranked = s.paired ? couple : at.index;
  const int pairs_fastest = fast_divide(ranked, at.last ? s.last_heads_div : s.sec_heads_div);
  const int rank = s.couples_by_pair ? couple - couple_pair * (s.units >> 1) : pairs_fastest;
  const int pair = s.couples_by_pair ? couple_pair : ranked - rank * at.size;
  const int m_rank = s.paired && (at.index & 1) ? s.units - 1 - rank : rank;
  return SectionUnit{at.first_bh + pair, m_rank};
}

// Paired sections walked by CTAs: a unit is `cluster` consecutive tiles (one per CTA rank of a cluster), a
// couple two consecutive units. CTA `block` starts on the first unit of couple block / cluster (its rank's
// tile); after a couple's first unit comes its second, after the second (static couples) the same rank's
// tile of the couple one grid of clusters further on, so the clusters take couples g, g + G, ... and the
// two ranks of a cluster always hold the same unit. tile_scheduler.h claim_next_tile / first_tile.
FLASHATTN_HD int couple_first_tile(int block, int cluster) { return 2 * block - block % cluster; }
FLASHATTN_HD bool couple_first_unit(int tile, int cluster) { return (tile / cluster) % 2 == 0; }
FLASHATTN_HD int static_couple_next(int tile, int grid, int cluster) {
  return couple_first_unit(tile, cluster) ? tile + cluster : tile - cluster + 2 * grid;
}

}  // namespace flashattn::detail::cuda_sm90
