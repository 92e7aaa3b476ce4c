// From raw Q K^T accumulators to base-2 logits: softcap, ALiBi and the
// visibility mask (common/mask.h semantics: bottom-right aligned windows).
//
// Thread layout of a warp's S tile (m16n8 accumulators): lane owns rows
// lane/4 and lane/4 + 8, and in n-tile t the columns 8t + 2*(lane%4) + {0,1}.
// Masked scores become -inf; the softmax maps them to probability 0.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/params.h"
#include "cuda/ptx/approx_math.h"
#include "cuda/sm80/score_bias.h"

namespace flashattn::detail::cuda_sm80 {

// Visible key range [first, last] of one query row, clamped to [-1, sk] so that
// windows of any int64 size compare as 32-bit ints.
struct RowWindow {
  int first;
  int last;
};

__device__ __forceinline__ RowWindow row_window(const MaskParams& mask, std::int64_t i, std::int64_t sq,
                                                std::int64_t sk) {
  const std::int64_t diagonal = i + sk - sq;
  std::int64_t first = mask.window_left < 0 ? 0 : diagonal - mask.window_left;
  std::int64_t last = mask.window_right < 0 ? sk - 1 : diagonal + mask.window_right;
  if (last > sk - 1) last = sk - 1;
  first = first < -1 ? -1 : (first > sk ? sk : first);
  last = last < -1 ? -1 : last;
  return RowWindow{static_cast<int>(first), static_cast<int>(last)};
}

// Whether any element of the key tile [n0, n0 + kBlockN) is invisible to any of
// the query rows [m0, m0 + kBlockM): only such tiles pay for per-element masks.
template <class Cfg>
__device__ __forceinline__ bool tile_needs_mask(const MaskParams& mask, int m0, int n0, std::int64_t sq,
                                                std::int64_t sk) {
  if (n0 + Cfg::kBlockN > sk) return true;
  if (mask.window_right >= 0 && n0 + Cfg::kBlockN - 1 > m0 + sk - sq + mask.window_right) return true;
  if (mask.window_left >= 0 && n0 < m0 + Cfg::kBlockM - 1 + sk - sq - mask.window_left) return true;
  return false;
}

// Per-element score modifiers; kGeneral kernels convert S to base-2 logits here
// (scale, softcap, ALiBi, log2 e), the plain kernel leaves S raw and folds the
// scale into the exponent. The constants are premultiplied once per tile so that
// each modifier is one pass of 1-3 instructions per element:
//   softcap: x = (cap log2 e) tanh(s scale / cap)   (tanh.approx, as FlashAttention 2 does)
//   else:    x = s (scale log2 e)
//   ALiBi:   x -= (slope log2 e) |i + sk - sq - j|, the distance in fp32 (exact below 2^24)
//   bias:    x += (log2 e) bias[i][j] (a mask's false: -inf), rows i < sq and keys j < sk only; the
//            kBias kernels only (their own instances: the bias's state in the other general kernels
//            made ptxas spill 150-600 B there)
struct ScoreModifiers {
  float scale_log2;          // scale * log2 e (no softcap)
  float softcap_log2;        // softcap * log2 e; 0: softcap off
  float scale_over_softcap;  // scale / softcap
  float alibi_slope_log2;    // slope * log2 e; 0: ALiBi off

  __device__ __forceinline__ static ScoreModifiers make(float scale, float softcap, float alibi_slope) {
    constexpr float kLog2e = 1.4426950408889634f;
    return ScoreModifiers{scale * kLog2e, softcap > 0.f ? softcap * kLog2e : 0.f,
                          softcap > 0.f ? scale / softcap : 0.f, alibi_slope * kLog2e};
  }
};

template <class Cfg, bool kGeneral, bool kBias = false>
__device__ __forceinline__ void score_tile(float (&s)[Cfg::kBlockN / 8][4], const ScoreModifiers& mod,
                                           const MaskParams& mask, bool needs_mask, std::int64_t i0, int n0,
                                           std::int64_t sq, std::int64_t sk, int lane,
                                           const ScoreBias& bias = ScoreBias{}) {
  constexpr int kNTiles = Cfg::kBlockN / 8;
  const int j_lane = n0 + 2 * (lane & 3);
  if constexpr (kGeneral) {
    // Uniform branches around whole passes: no per-element test of which modifiers are on.
    if (mod.softcap_log2 != 0.f) {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[n][e] = mod.softcap_log2 * ptx::tanh_approx_f32(s[n][e] * mod.scale_over_softcap);
    } else {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] *= mod.scale_log2;
    }
    if (mod.alibi_slope_log2 != 0.f) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        // Distance of this lane's first column; every other column is a compile-time step away.
        const float distance0 = static_cast<float>(i0 + 8 * r + sk - sq - j_lane);
#pragma unroll
        for (int n = 0; n < kNTiles; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            s[n][2 * r + e] -= mod.alibi_slope_log2 * fabsf(distance0 - static_cast<float>(8 * n + e));
      }
    }
    if constexpr (kBias) {
      bias.visit_kind([&](auto kind) {
        constexpr float kLog2e = 1.4426950408889634f;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const std::int64_t i = i0 + 8 * r;
          // The tile's rows past the sequence and keys past its end have no bias element.
          const unsigned char* bias_row = bias.row(i < sq ? i : 0);
#pragma unroll
          for (int n = 0; n < kNTiles; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int j = j_lane + 8 * n + e;
              if (i < sq && j < sk)
                s[n][2 * r + e] += ScoreBias::value<decltype(kind)::value>(bias_row, j, kLog2e);
            }
        }
      });
    }
  }
  if (!needs_mask) return;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const RowWindow window = row_window(mask, i0 + 8 * r, sq, sk);
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int j = j_lane + 8 * n + e;
        if (j < window.first || j > window.last) s[n][2 * r + e] = -INFINITY;
      }
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
