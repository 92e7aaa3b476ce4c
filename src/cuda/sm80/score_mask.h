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
// scale into the exponent.
struct ScoreModifiers {
  float scale;
  float softcap;  // 0: off
  float softcap_inverse;
  float alibi_slope;  // 0: off
};

template <class Cfg, bool kGeneral>
__device__ __forceinline__ void score_tile(float (&s)[Cfg::kBlockN / 8][4], const ScoreModifiers& mod,
                                           const MaskParams& mask, bool needs_mask, std::int64_t i0, int n0,
                                           std::int64_t sq, std::int64_t sk, int lane) {
  constexpr float kLog2e = 1.4426950408889634f;
  const int j_lane = n0 + 2 * (lane & 3);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t i = i0 + 8 * r;
    RowWindow window{0, 0};
    if (needs_mask) window = row_window(mask, i, sq, sk);
    const std::int64_t diagonal = i + sk - sq;
#pragma unroll
    for (int n = 0; n < Cfg::kBlockN / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int j = j_lane + 8 * n + e;
        float x = s[n][2 * r + e];
        if constexpr (kGeneral) {
          x *= mod.scale;
          if (mod.softcap > 0.f) x = mod.softcap * tanhf(x * mod.softcap_inverse);
          if (mod.alibi_slope != 0.f) {
            const std::int64_t distance = diagonal - j;
            x -= mod.alibi_slope * static_cast<float>(distance < 0 ? -distance : distance);
          }
          x *= kLog2e;
        }
        if (needs_mask && (j < window.first || j > window.last)) x = -INFINITY;
        s[n][2 * r + e] = x;
      }
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
