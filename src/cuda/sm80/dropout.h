// Dropout on the probability tile, with the Philox stream of common/philox.h,
// so the GPU drops exactly the elements (b, head, i, j) the CPU backends drop.
// One Philox call yields the draws of 8 adjacent keys of one row; a lane needs 2
// of them per n-tile and row (columns 2*(lane%4) + {0,1}), i.e. 32-bit word
// lane%4, and the 4 lanes of a quad need the same call. So each lane of a quad
// computes a different call of every 4 and a 4x4 transpose across the quad
// (two xor-shuffle stages) hands each lane its word of all 4: a quarter of the
// Philox work of computing every call in every lane (v7; the Philox rounds were
// most of the dropout kernel's time).
#pragma once

#include <cstdint>

#include "common/philox.h"

namespace flashattn::detail::cuda_sm80 {

// Lane q (of its quad) holds a[w] = word w of call q; afterwards a[c] = word q of call c.
__device__ __forceinline__ void quad_transpose(std::uint32_t (&a)[4], int quad) {
#pragma unroll
  for (int bit = 0; bit < 2; ++bit) {
    const int mask = 1 << bit;
    const bool high = (quad & mask) != 0;
#pragma unroll
    for (int other = 0; other < 2; ++other) {
      // The pair of positions that differ in `bit`, with the other index bit equal to `other`.
      const int low_index = bit == 0 ? 2 * other : other;
      const int high_index = low_index + mask;
      // Send the element whose `bit` differs from this lane's; receive the partner's into it.
      const std::uint32_t send = high ? a[low_index] : a[high_index];
      const std::uint32_t received = __shfl_xor_sync(0xffffffffu, send, mask);
      if (high) {
        a[low_index] = received;
      } else {
        a[high_index] = received;
      }
    }
  }
}

template <int kNTiles>
__device__ __forceinline__ void apply_dropout(float (&p)[kNTiles][4], std::uint64_t seed,
                                              std::uint64_t offset, std::uint32_t threshold,
                                              std::int64_t batch_head, std::int64_t i0, int n0, int lane) {
  // Calls c = r * kNTiles + n (row i0 + 8r, keys n0 + 8n ..), in groups of 4.
  constexpr int kCalls = 2 * kNTiles;
  static_assert(kCalls % 4 == 0, "n-tiles come in pairs");
  const int quad = lane & 3;
#pragma unroll
  for (int group = 0; group < kCalls / 4; ++group) {
    const int mine = 4 * group + quad;  // the call this lane computes
    const Philox4 draws =
        dropout_draws(seed, offset, batch_head, i0 + 8 * (mine / kNTiles), n0 + 8 * (mine % kNTiles));
    std::uint32_t words[4] = {draws.x, draws.y, draws.z, draws.w};
    quad_transpose(words, quad);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int call = 4 * group + c, r = call / kNTiles, n = call % kNTiles;
      if ((words[c] & 0xFFFFu) < threshold) p[n][2 * r] = 0.f;
      if ((words[c] >> 16) < threshold) p[n][2 * r + 1] = 0.f;
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
