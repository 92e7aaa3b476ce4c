// Host check of src/cuda/sm90/score_mask.h's form-2 mask (helper sm90m, session 8): the per-row bit masks
// of the visible fragment columns against the per-key definition (key visible iff first <= key <= last),
// for every lane column offset, block widths of 64..192 keys (8-column groups 8..24, one mask per 128
// keys), key0 -300..300, first 0..260, last -2..270 (empty ranges included).
//   g++ -O2 -std=c++20 bench/sm90m_mask_bits_check.cpp -o /tmp/mask_check && /tmp/mask_check
// prints "0 mismatches of 10467439104 scores" (about a minute).
#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

// CUDA's __funnelshift_lc(lo, hi, shift): the high word of (hi:lo) << min(shift, 32).
std::uint32_t funnelshift_lc(std::uint32_t lo, std::uint32_t hi, unsigned shift) {
  const std::uint64_t wide = (std::uint64_t{hi} << 32 | lo) << std::min(shift, 32u);
  return static_cast<std::uint32_t>(wide >> 32);
}

// score_mask.h fragment_columns_through.
std::uint32_t fragment_columns_through(int limit) {
  const int count = std::max(((limit + 8) >> 3) + ((limit + 7) >> 3), 0);
  return funnelshift_lc(0xffffffffu, 0u, static_cast<unsigned>(count));
}

}  // namespace

int main() {
  long long mismatches = 0, scores = 0;
  for (const int groups : {8, 10, 12, 16, 22, 24}) {
    for (int lane = 0; lane < 4; ++lane) {
      for (int key0 = -300; key0 <= 300; ++key0) {
        for (int first = 0; first < 260; first += 3) {
          for (int last = -2; last < 270; ++last) {
            const int col0 = key0 + 2 * lane;
            for (int part = 0; part < (groups + 15) / 16; ++part) {
              const int base = col0 + 128 * part;
              const std::uint32_t bits =
                  fragment_columns_through(last - base) & ~fragment_columns_through(first - 1 - base);
              for (int i = 16 * part; i < std::min(16 * part + 16, groups); ++i) {
                for (int e = 0; e < 2; ++e) {
                  const int key = col0 + 8 * i + e;
                  const bool visible = key >= first && key <= last;
                  const bool kept = (bits >> (2 * (i - 16 * part) + e)) & 1u;
                  ++scores;
                  if (visible != kept && mismatches++ < 5) {
                    std::printf("mismatch: groups %d lane %d key0 %d first %d last %d i %d e %d\n", groups,
                                lane, key0, first, last, i, e);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  std::printf("%lld mismatches of %lld scores\n", mismatches, scores);
  return mismatches == 0 ? 0 : 1;
}
