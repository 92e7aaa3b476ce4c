// The sm90 tile order's L2 sections (src/cuda/sm90/tile_sections.h): the host's plan and the decode the
// kernels run (section_unit, compiled here for the host with the same multiply-high arithmetic). Every
// plan must name each (pair, query unit) exactly once, keep each section's query units last-first with
// its pairs fastest, and, with a tail factor, leave a last section of at least factor x CTAs units (or
// every pair). The GPU suites check the kernels' outputs; this checks the order over shapes far larger
// than they run (the standard grid's long causal rows, whose sections are one to a few heads).
#include "cuda/sm90/tile_sections.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace flashattn::test {
namespace {

using detail::cuda_sm90::plan_tile_sections;
using detail::cuda_sm90::section_unit;
using detail::cuda_sm90::SectionUnit;
using detail::cuda_sm90::TileSections;

struct Plan {
  int pairs, sec_heads, units, ctas, factor;
  std::string name() const {
    return std::to_string(pairs) + " pairs, sections of " + std::to_string(sec_heads) + ", " +
           std::to_string(units) + " units, " + std::to_string(ctas) + " CTAs, factor " +
           std::to_string(factor);
  }
};

// Walks every unit of the plan: a bijection onto pairs x units, sections in order, and inside each
// section the query units last-first with the pairs fastest.
void check_walk(const Plan& c) {
  SCOPED_TRACE(c.name());
  const TileSections s = plan_tile_sections(c.pairs, c.sec_heads, c.units, c.ctas, c.factor);
  ASSERT_GE(s.last_heads, 1);
  ASSERT_EQ(s.last_bh + s.last_heads, c.pairs);
  ASSERT_EQ(s.last_bh % s.sec_heads, 0);
  std::vector<int> seen(static_cast<std::size_t>(c.pairs) * c.units, 0);
  for (int unit = 0; unit < c.pairs * c.units; ++unit) {
    const SectionUnit u = section_unit(s, unit);
    ASSERT_TRUE(u.bh >= 0 && u.bh < c.pairs && u.m_rank >= 0 && u.m_rank < c.units)
        << "unit " << unit << " -> pair " << u.bh << ", rank " << u.m_rank;
    ++seen[static_cast<std::size_t>(u.bh) * c.units + u.m_rank];
    // The expected position: section by section, rank-major, pairs fastest.
    const bool last = u.bh >= s.last_bh;
    const int first = last ? s.last_bh : u.bh / s.sec_heads * s.sec_heads;
    const int size = last ? s.last_heads : s.sec_heads;
    ASSERT_EQ(unit, first * c.units + u.m_rank * size + (u.bh - first))
        << "pair " << u.bh << ", rank " << u.m_rank;
  }
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "pair/unit " << i;
}

TEST(TileSections, EveryUnitOnceInSectionOrder) {
  std::vector<Plan> plans;
  for (int pairs : {1, 2, 3, 7, 16, 64, 100, 257}) {
    for (int sec : {1, 2, 3, 7, 30, 1000}) {
      for (int units : {1, 2, 4, 17, 64, 128}) {
        for (int factor : {0, 1, 2, 3}) plans.push_back({pairs, sec, units, 132, factor});
      }
    }
  }
  plans.push_back({1, 1, 1, 1, 2});
  plans.push_back({4096, 60, 2, 132, 2});  // d64 s512 causal on four consumers: 2 query units
  for (const Plan& p : plans) check_walk(p);
  // One large plan near the launch's limit on tiles (2^31): the quotients by multiply-high stay exact.
  const TileSections big = plan_tile_sections(1 << 16, 3, (1 << 15) - 1, 132, 2);
  for (int unit : {0, 1, big.last_unit - 1, big.last_unit, (1 << 16) * ((1 << 15) - 1) - 1}) {
    const SectionUnit u = section_unit(big, unit);
    const bool last = unit >= big.last_unit;
    const int first = last ? big.last_bh : u.bh / big.sec_heads * big.sec_heads;
    const int size = last ? big.last_heads : big.sec_heads;
    EXPECT_EQ(unit, first * big.units + u.m_rank * size + (u.bh - first)) << unit;
  }
}

// Paired plans (the dynamic schedule of causal problems): every unit once; units 2c and 2c + 1 are one pair's
// ranks r and units - 1 - r (equal key blocks under a causal mask), couples rank-major with the pairs fastest
// inside each section, sections in order. Odd unit counts are never paired.
TEST(TileSections, PairedCouplesAreComplementary) {
  for (int pairs : {1, 2, 3, 7, 16, 100, 257}) {
    for (int sec : {1, 2, 3, 30, 1000}) {
      for (int units : {1, 2, 4, 17, 64, 128}) {
        for (int factor : {0, 2}) {
          const Plan c{pairs, sec, units, 132, factor};
          SCOPED_TRACE(c.name());
          const TileSections s = plan_tile_sections(pairs, sec, units, 132, factor, true);
          ASSERT_EQ(s.paired, units % 2 == 0);
          if (!s.paired) continue;
          std::vector<int> seen(static_cast<std::size_t>(pairs) * units, 0);
          for (int unit = 0; unit < pairs * units; unit += 2) {
            const SectionUnit a = section_unit(s, unit), b = section_unit(s, unit + 1);
            ASSERT_EQ(a.bh, b.bh) << unit;
            ASSERT_EQ(a.m_rank + b.m_rank, units - 1) << unit;
            ASSERT_LT(a.m_rank, units / 2) << unit;  // the longer tile first
            ++seen[static_cast<std::size_t>(a.bh) * units + a.m_rank];
            ++seen[static_cast<std::size_t>(b.bh) * units + b.m_rank];
            const bool last = a.bh >= s.last_bh;
            const int first = last ? s.last_bh : a.bh / s.sec_heads * s.sec_heads;
            const int size = last ? s.last_heads : s.sec_heads;
            ASSERT_EQ(unit, first * units + 2 * (a.m_rank * size + (a.bh - first))) << "pair " << a.bh;
          }
          for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "pair/unit " << i;
        }
      }
    }
  }
}

// The order of couples by pair (TileSections couples_by_pair, forward_config.h PLACEMENT_MAX_SEQLEN): the
// same complementary couples, each unit once, but inside a section a pair's couples consecutive (couple ranks
// fastest, longer tile first); so at four units a pair's two couples are couples 2c and 2c + 1 of its
// section, which the static walk gives to the two CTAs of one cluster of two at every step. Without pairing
// the flag is dropped (an odd number of units).
TEST(TileSections, CouplesByPairKeepAPairsCouplesTogether) {
  using detail::cuda_sm90::couple_first_tile;
  using detail::cuda_sm90::static_couple_next;
  EXPECT_FALSE(plan_tile_sections(4, 2, 5, 132, 0, true, true).couples_by_pair);
  EXPECT_FALSE(plan_tile_sections(4, 2, 4, 132, 0, false, true).couples_by_pair);
  for (int pairs : {1, 2, 3, 16, 100, 257}) {
    for (int sec : {1, 2, 3, 30, 1000}) {
      for (int units : {2, 4, 8, 64}) {
        const Plan c{pairs, sec, units, 132, 0};
        SCOPED_TRACE(c.name());
        const TileSections s = plan_tile_sections(pairs, sec, units, 132, 0, true, true);
        ASSERT_TRUE(s.paired && s.couples_by_pair);
        std::vector<int> seen(static_cast<std::size_t>(pairs) * units, 0);
        for (int unit = 0; unit < pairs * units; unit += 2) {
          const SectionUnit a = section_unit(s, unit);
          const SectionUnit b = section_unit(s, unit + 1);
          ASSERT_EQ(a.bh, b.bh) << unit;
          ASSERT_EQ(a.m_rank + b.m_rank, units - 1) << unit;
          ASSERT_LT(a.m_rank, units / 2) << unit;
          ++seen[static_cast<std::size_t>(a.bh) * units + a.m_rank];
          ++seen[static_cast<std::size_t>(b.bh) * units + b.m_rank];
          // Expected: the pair's section first, then the pair, then the couple rank.
          const bool last = a.bh >= s.last_bh;
          const int first = last ? s.last_bh : a.bh / s.sec_heads * s.sec_heads;
          ASSERT_EQ(unit, first * units + (a.bh - first) * units + 2 * a.m_rank) << "pair " << a.bh;
        }
        for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "pair/unit " << i;
        if (units != 4) continue;
        // Static couples on single CTAs in clusters of two: blocks 2j and 2j + 1 hold one pair at every step.
        for (int grid : {2, 66, 132}) {
          for (int block = 0; block + 1 < grid; block += 2) {
            int t0 = couple_first_tile(block, 1), t1 = couple_first_tile(block + 1, 1);
            for (; t1 < pairs * units; t0 = static_couple_next(static_couple_next(t0, grid, 1), grid, 1),
                                       t1 = static_couple_next(static_couple_next(t1, grid, 1), grid, 1)) {
              ASSERT_EQ(section_unit(s, t0).bh, section_unit(s, t1).bh)
                  << "grid " << grid << ", block " << block << ", tiles " << t0 << " / " << t1;
            }
          }
        }
      }
    }
  }
}

// Static couples (tile_scheduler.h claim_next_tile under a static schedule, on single CTAs and on clusters of
// two): every CTA walks its tiles from couple_first_tile by static_couple_next until the launch's tile count.
// Every tile is taken exactly once, a CTA's tiles come as whole couples, and the two ranks of a cluster hold
// the two tiles of the same unit at every step (the K/V multicast kernel's CTAs share each key block).
TEST(TileSections, StaticCouplesCoverEveryTileOnceAndKeepClustersTogether) {
  using detail::cuda_sm90::couple_first_tile;
  using detail::cuda_sm90::static_couple_next;
  for (int cluster : {1, 2}) {
    for (int units : {2, 4, 8}) {  // couples need an even number of units per pair
      for (int pairs : {1, 3, 16, 100}) {
        for (int grid : {2, 4, 66, 132, 264}) {  // a multiple of the cluster size
          SCOPED_TRACE("cluster " + std::to_string(cluster) + ", " + std::to_string(units) + " units, " +
                       std::to_string(pairs) + " pairs, grid " + std::to_string(grid));
          const int tiles = pairs * units * cluster;
          std::vector<int> seen(static_cast<std::size_t>(tiles), 0);
          std::vector<std::vector<int>> walks(static_cast<std::size_t>(grid));
          for (int block = 0; block < grid; ++block) {
            for (int t = couple_first_tile(block, cluster); t < tiles;
                 t = static_couple_next(t, grid, cluster)) {
              ASSERT_GE(t, 0);
              ASSERT_EQ(t % cluster, block % cluster) << "a CTA keeps its rank's tiles";
              ++seen[static_cast<std::size_t>(t)];
              walks[static_cast<std::size_t>(block)].push_back(t);
            }
            ASSERT_EQ(walks[static_cast<std::size_t>(block)].size() % 2, 0u)
                << "whole couples, block " << block;
          }
          for (int t = 0; t < tiles; ++t) ASSERT_EQ(seen[static_cast<std::size_t>(t)], 1) << "tile " << t;
          for (int block = 1; block < grid && cluster == 2; block += 2) {
            const auto& lower = walks[static_cast<std::size_t>(block - 1)];
            const auto& upper = walks[static_cast<std::size_t>(block)];
            ASSERT_EQ(lower.size(), upper.size()) << "cluster " << block / 2;
            for (std::size_t i = 0; i < lower.size(); ++i) ASSERT_EQ(lower[i] + 1, upper[i]) << "step " << i;
          }
        }
      }
    }
  }
}

TEST(TileSections, WithoutTailFactorTheLastSectionIsTheRemainder) {
  for (int pairs : {1, 5, 6, 7, 16, 100}) {
    for (int sec : {1, 3, 6, 200}) {
      const TileSections s = plan_tile_sections(pairs, sec, 64, 132, 0);
      const int clamped = sec > pairs ? pairs : sec;
      EXPECT_EQ(s.sec_heads, clamped);
      EXPECT_EQ(s.last_heads, pairs - (pairs - 1) / clamped * clamped)
          << pairs << " pairs, sections of " << sec;
    }
  }
}

TEST(TileSections, TailFactorGrowsTheLastSectionToFactorTimesCtas) {
  // The standard grid's causal rows on an H200 (132 SMs), as forward_launch.h plans them.
  struct Row {
    const char* name;
    int pairs, sec_heads, units;
    int last_heads_before, last_heads_after;
  };
  const Row rows[] = {
      {"d256 8k: 16 heads, 3 per half-L2 section, 64 query blocks", 16, 3, 64, 1, 7},
      {"d256 2k: 64 heads, 15 per section, 16 query blocks", 64, 15, 16, 4, 19},
      {"d128 2k: 128 heads, 7 per 1/8-L2 section, 16 query blocks", 128, 7, 16, 2, 23},
      {"d128 16k: 16 heads, 1 per section, 128 query blocks", 16, 1, 128, 1, 3},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(plan_tile_sections(r.pairs, r.sec_heads, r.units, 132, 0).last_heads, r.last_heads_before);
    const TileSections s = plan_tile_sections(r.pairs, r.sec_heads, r.units, 132, 2);
    EXPECT_EQ(s.last_heads, r.last_heads_after);
    EXPECT_GE(s.last_heads * r.units, 2 * 132);
    // Taking in one regular section fewer would leave it short.
    EXPECT_LT((s.last_heads - r.sec_heads) * r.units, 2 * 132);
  }
  // Too few tiles for the factor: one section of every pair (the whole order longest-first).
  const TileSections all = plan_tile_sections(12, 2, 4, 132, 2);
  EXPECT_EQ(all.last_bh, 0);
  EXPECT_EQ(all.last_heads, 12);
  EXPECT_EQ(all.last_unit, 0);
}

}  // namespace
}  // namespace flashattn::test
