// Dropout on the probability tile, with the Philox stream of common/philox.h,
// so the GPU drops exactly the elements (b, head, i, j) the CPU backends drop.
// One Philox call yields the draws of 8 adjacent keys; a lane needs 2 of them
// per n-tile and row (columns 2*(lane%4) + {0,1}), i.e. 32-bit word lane%4.
#pragma once

#include <cstdint>

#include "common/philox.h"

namespace flashattn::detail::cuda_sm80 {

template <int kNTiles>
__device__ __forceinline__ void apply_dropout(float (&p)[kNTiles][4], std::uint64_t seed,
                                              std::uint64_t offset, std::uint32_t threshold,
                                              std::int64_t batch_head, std::int64_t i0, int n0, int lane) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      const Philox4 draws = dropout_draws(seed, offset, batch_head, i0 + 8 * r, n0 + 8 * n);
      const int quad = lane & 3;
      const std::uint32_t word = quad == 0 ? draws.x : quad == 1 ? draws.y : quad == 2 ? draws.z : draws.w;
      if ((word & 0xFFFFu) < threshold) p[n][2 * r] = 0.f;
      if ((word >> 16) < threshold) p[n][2 * r + 1] = 0.f;
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
