// The online softmax of FlashAttention, per warp, in base 2.
//
// Each lane keeps, for its two rows, the running maximum (in the units of S as
// given, turned into base-2 exponents by `scale_log2`) and a partial row sum
// over its own columns only: the sum is reduced across the quad once, in the
// epilogue, instead of once per tile.
#pragma once

#include <cmath>

#include "cuda/ptx/ptx.h"

namespace flashattn::detail::cuda_sm80 {

template <int kNTiles, int kOTiles>
struct OnlineSoftmax {
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};

  // Replaces s by unnormalised probabilities exp2(s * scale_log2 - max) and
  // rescales the O accumulator rows by exp2(old max - new max).
  __device__ __forceinline__ void update(float (&s)[kNTiles][4], float (&o)[kOTiles][4], float scale_log2) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // Four independent partial reductions: a single chain of kNTiles dependent
      // fmaxf/fadd exposes the ALU latency with only two warps per scheduler.
      // (A tree over a local array was not fully unrolled at kNTiles = 16 and
      // went to the stack: d64 fell from 160 to 95 TFLOP/s.)
      float partial[4] = {row_max[r], -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
      for (int n = 0; n < kNTiles; ++n)
        partial[n % 4] = fmaxf(partial[n % 4], fmaxf(s[n][2 * r], s[n][2 * r + 1]));
      float tile_max = fmaxf(fmaxf(partial[0], partial[1]), fmaxf(partial[2], partial[3]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      // A row that has seen only masked keys keeps max -inf; subtracting 0
      // instead keeps exp2(-inf - max) at 0 rather than NaN.
      const float max_scaled = tile_max == -INFINITY ? 0.f : tile_max * scale_log2;
      const float correction = ptx::ex2_approx_ftz_f32(row_max[r] * scale_log2 - max_scaled);
      row_max[r] = tile_max;
      row_sum[r] *= correction;
#pragma unroll
      for (int d = 0; d < kOTiles; ++d) o[d][2 * r] *= correction, o[d][2 * r + 1] *= correction;
      float sums[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        s[n][2 * r] = ptx::ex2_approx_ftz_f32(fmaf(s[n][2 * r], scale_log2, -max_scaled));
        s[n][2 * r + 1] = ptx::ex2_approx_ftz_f32(fmaf(s[n][2 * r + 1], scale_log2, -max_scaled));
        sums[n % 4] += s[n][2 * r] + s[n][2 * r + 1];
      }
      row_sum[r] += (sums[0] + sums[1]) + (sums[2] + sums[3]);
    }
  }
};

// OnlineSoftmax::update of all m-tiles of a warp in one pass (TileShape::joint_softmax): every
// row's max reduction first, then the quad shuffles of all rows side by side, then the
// exponentials. The per-m-tile updates are independent; written as one straight-line block the
// 2 * kMTiles dependent fmax -> shuffle -> exp2 chains can hide each other's latency.
template <int kMTiles, int kNTiles, int kOTiles>
__device__ __forceinline__ void update_all(OnlineSoftmax<kNTiles, kOTiles> (&softmax)[kMTiles],
                                           float (&s)[kMTiles][kNTiles][4], float (&o)[kMTiles][kOTiles][4],
                                           float scale_log2) {
  float tile_max[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // Four independent partial reductions per row (see OnlineSoftmax::update).
      float partial[4] = {softmax[mt].row_max[r], -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
      for (int n = 0; n < kNTiles; ++n)
        partial[n % 4] = fmaxf(partial[n % 4], fmaxf(s[mt][n][2 * r], s[mt][n][2 * r + 1]));
      tile_max[mt][r] = fmaxf(fmaxf(partial[0], partial[1]), fmaxf(partial[2], partial[3]));
    }
  }
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r)
      tile_max[mt][r] = fmaxf(tile_max[mt][r], __shfl_xor_sync(0xffffffffu, tile_max[mt][r], 1));
  }
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r)
      tile_max[mt][r] = fmaxf(tile_max[mt][r], __shfl_xor_sync(0xffffffffu, tile_max[mt][r], 2));
  }
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // As in OnlineSoftmax::update: a row with only masked keys so far subtracts 0, not -inf.
      const float max_scaled = tile_max[mt][r] == -INFINITY ? 0.f : tile_max[mt][r] * scale_log2;
      const float correction = ptx::ex2_approx_ftz_f32(softmax[mt].row_max[r] * scale_log2 - max_scaled);
      softmax[mt].row_max[r] = tile_max[mt][r];
      softmax[mt].row_sum[r] *= correction;
#pragma unroll
      for (int d = 0; d < kOTiles; ++d) o[mt][d][2 * r] *= correction, o[mt][d][2 * r + 1] *= correction;
      float sums[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        s[mt][n][2 * r] = ptx::ex2_approx_ftz_f32(fmaf(s[mt][n][2 * r], scale_log2, -max_scaled));
        s[mt][n][2 * r + 1] = ptx::ex2_approx_ftz_f32(fmaf(s[mt][n][2 * r + 1], scale_log2, -max_scaled));
        sums[n % 4] += s[mt][n][2 * r] + s[mt][n][2 * r + 1];
      }
      softmax[mt].row_sum[r] += (sums[0] + sums[1]) + (sums[2] + sums[3]);
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
