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

// TileShape::conditional_rescale: a row's reference maximum moves only when a tile raises the row's maximum
// by more than 2^8 (in base-2 units), as in the sm90 kernels (FlashAttention 4's conditional rescaling).
inline constexpr float kRescaleThreshold = 8.f;

// Whether any of the warp's rows must move its reference (always true without kConditional): new_max[i]
// (raw units) against old_max[i] over kRows rows.
template <bool kConditional, int kRows>
__device__ __forceinline__ bool warp_moves_reference(const float* new_max, const float* old_max,
                                                     float scale_log2) {
  if constexpr (!kConditional) {
    return true;
  } else {
    bool grows = false;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      // From -inf (nothing seen yet) to a finite maximum: +inf > threshold; -inf to -inf: NaN, false.
      grows |= new_max[i] * scale_log2 - old_max[i] * scale_log2 > kRescaleThreshold;
    }
    return __any_sync(0xffffffffu, grows);
  }
}

// kConditional (TileShape::conditional_rescale): the O rescale (d256: 128 multiplications per thread and
// tile) and the corrections' exponentials are skipped on the tiles that do not raise any of the warp's row
// maxima past kRescaleThreshold, decided once per warp by a vote. row_max is then a reference up to 2^8 below
// the running maximum: every probability stays below 2^8 (well inside fp16's range for P V), a non-empty
// row's sum is still >= 1, and O / sum and the LSE do not depend on the reference (epilogue.h finalize_rows).
template <int kNTiles, int kOTiles, bool kConditional>
struct OnlineSoftmax {
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};

  // This thread's maximum of row r over s, the row's reference folded in: four independent partial
  // reductions, since a single chain of kNTiles dependent fmaxf exposes the ALU latency with only two warps
  // per scheduler. (A tree over a local array was not fully unrolled at kNTiles = 16 and went to the stack:
  // d64 fell from 160 to 95 TFLOP/s.)
  __device__ __forceinline__ float thread_row_max(const float (&s)[kNTiles][4], int r) const {
    float partial[4] = {row_max[r], -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kNTiles; ++n)
      partial[n % 4] = fmaxf(partial[n % 4], fmaxf(s[n][2 * r], s[n][2 * r + 1]));
    return fmaxf(fmaxf(partial[0], partial[1]), fmaxf(partial[2], partial[3]));
  }

  // Row r of one tile, given the row's quad-reduced maximum and the warp's decision `move`: when moving,
  // the reference becomes tile_max and O's rows and the sum are rescaled by exp2(old - new); then s's row
  // becomes unnormalised probabilities exp2(s * scale_log2 - reference), added to the row sum.
  __device__ __forceinline__ void fold_row(int r, float tile_max, bool move, float (&s)[kNTiles][4],
                                           float (&o)[kOTiles][4], float scale_log2) {
    if (move) {
      // A row that has seen only masked keys keeps max -inf; subtracting 0
      // instead keeps exp2(-inf - max) at 0 rather than NaN.
      const float new_scaled = tile_max == -INFINITY ? 0.f : tile_max * scale_log2;
      const float correction = ptx::ex2_approx_ftz_f32(row_max[r] * scale_log2 - new_scaled);
      row_max[r] = tile_max;
      row_sum[r] *= correction;
#pragma unroll
      for (int d = 0; d < kOTiles; ++d) o[d][2 * r] *= correction, o[d][2 * r + 1] *= correction;
    }
    const float max_scaled = row_max[r] == -INFINITY ? 0.f : row_max[r] * scale_log2;
    float sums[4] = {0.f, 0.f, 0.f, 0.f};  // four chains, as in thread_row_max
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      s[n][2 * r] = ptx::ex2_approx_ftz_f32(fmaf(s[n][2 * r], scale_log2, -max_scaled));
      s[n][2 * r + 1] = ptx::ex2_approx_ftz_f32(fmaf(s[n][2 * r + 1], scale_log2, -max_scaled));
      sums[n % 4] += s[n][2 * r] + s[n][2 * r + 1];
    }
    row_sum[r] += (sums[0] + sums[1]) + (sums[2] + sums[3]);
  }

  // Replaces s by unnormalised probabilities against the rows' references and rescales the O
  // accumulator rows when a reference moves (always without kConditional).
  __device__ __forceinline__ void update(float (&s)[kNTiles][4], float (&o)[kOTiles][4], float scale_log2) {
    float tile_max[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      tile_max[r] = thread_row_max(s, r);
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    }
    const bool move = warp_moves_reference<kConditional, 2>(tile_max, row_max, scale_log2);
#pragma unroll
    for (int r = 0; r < 2; ++r) fold_row(r, tile_max[r], move, s, o, scale_log2);
  }
};

// OnlineSoftmax::update of all m-tiles of a warp in one pass (TileShape::joint_softmax): every
// row's max reduction first, then the quad shuffles of all rows side by side, then the
// exponentials. The per-m-tile updates are independent; written as one straight-line block the
// 2 * kMTiles dependent fmax -> shuffle -> exp2 chains can hide each other's latency.
template <int kMTiles, int kNTiles, int kOTiles, bool kConditional>
__device__ __forceinline__ void update_all(OnlineSoftmax<kNTiles, kOTiles, kConditional> (&softmax)[kMTiles],
                                           float (&s)[kMTiles][kNTiles][4], float (&o)[kMTiles][kOTiles][4],
                                           float scale_log2) {
  float tile_max[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) tile_max[mt][r] = softmax[mt].thread_row_max(s[mt], r);
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
  float old_max[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
    old_max[mt][0] = softmax[mt].row_max[0], old_max[mt][1] = softmax[mt].row_max[1];
  const bool move =
      warp_moves_reference<kConditional, 2 * kMTiles>(&tile_max[0][0], &old_max[0][0], scale_log2);
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) softmax[mt].fold_row(r, tile_max[mt][r], move, s[mt], o[mt], scale_log2);
  }
}

}  // namespace flashattn::detail::cuda_sm80
