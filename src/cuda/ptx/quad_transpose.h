// A 4 x 4 transpose of 32-bit words across the four lanes of a quad (lanes 4k .. 4k + 3), by two
// xor-shuffle stages: lane q holds a[w] = word w of item q before, a[c] = word q of item c after. The
// mma.sync / wgmma accumulator layouts give a quad's lanes two columns each of every 8-column tile, so
// this turns four tiles' column pairs into one tile's 8 columns per lane (16-byte stores), and turns one
// lane's Philox call into one word of every call for all four (sm80/dropout.h). Every lane of the warp
// must take part (full-mask shuffles).
#pragma once

#include <cstdint>

namespace flashattn::ptx {

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

}  // namespace flashattn::ptx
