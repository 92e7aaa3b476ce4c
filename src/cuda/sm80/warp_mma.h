// The two GEMMs of attention at warp level, on register fragments.
//
// A warp owns 16 query rows. S (16 x kBlockN) = Q K^T reads K from a swizzled
// shared tile with ldmatrix; O (16 x kHeadDim) += P V reuses the S accumulator
// registers as the A operand (the m16n8 accumulator layout of two adjacent
// n-tiles is exactly the m16k16 A layout), so P never touches shared memory.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/ptx/ptx.h"
#include "cuda/sm80/smem_layout.h"

namespace flashattn::detail::cuda_sm80 {

template <typename Element>
__device__ __forceinline__ std::uint32_t pack_float2(float lo, float hi) {
  if constexpr (std::is_same_v<Element, __half>) {
    return ptx::cvt_rn_f16x2_f32(lo, hi);
  } else {
    return ptx::cvt_rn_bf16x2_f32(lo, hi);
  }
}

template <typename Element>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1) {
  const std::uint32_t b[2] = {b0, b1};
  if constexpr (std::is_same_v<Element, __half>) {
    ptx::mma_m16n8k16_f32_f16(d, a, b);
  } else {
    ptx::mma_m16n8k16_f32_bf16(d, a, b);
  }
}

// A-operand fragment of rows [row0, row0 + 16), columns [16 * k_step, +16) of a
// swizzled tile. Lanes 0-15 address rows 0-15 of the first 8 columns, lanes
// 16-31 the same rows of the next 8: matrices 0..3 become a0..a3.
template <class Tile, typename Element>
__device__ __forceinline__ void load_a_fragment(std::uint32_t (&a)[4], const Element* tile, int row0, int k_step,
                                                int lane) {
  const int row = row0 + (lane & 7) + ((lane >> 3) & 1) * 8;
  const int chunk = 2 * k_step + (lane >> 4);
  ptx::ldmatrix_x4(a, ptx::cvta_to_shared(tile + Tile::chunk_offset(row, chunk)));
}

// S = Q K^T for one warp. q_fragments holds all of the warp's Q when
// kQInRegisters, else Q is re-read from shared memory per k-step.
template <class Cfg, class QTile, class KTile>
__device__ __forceinline__ void gemm_qk(float (&s)[Cfg::kBlockN / 8][4],
                                        const std::uint32_t (&q_fragments)[Cfg::kQInRegisters ? Cfg::kHeadDim / 16 : 1][4],
                                        const typename Cfg::Element* q_smem, const typename Cfg::Element* k_smem,
                                        int warp, int lane) {
  using Element = typename Cfg::Element;
#pragma unroll
  for (int n = 0; n < Cfg::kBlockN / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
  for (int k_step = 0; k_step < Cfg::kHeadDim / 16; ++k_step) {
    std::uint32_t a[4];
    if constexpr (Cfg::kQInRegisters) {
      a[0] = q_fragments[k_step][0], a[1] = q_fragments[k_step][1];
      a[2] = q_fragments[k_step][2], a[3] = q_fragments[k_step][3];
    } else {
      load_a_fragment<QTile>(a, q_smem, warp * 16, k_step, lane);
    }
#pragma unroll
    for (int n_pair = 0; n_pair < Cfg::kBlockN / 16; ++n_pair) {
      // Matrices: (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, k 0-7), (keys 8-15, k 8-15).
      const int row = n_pair * 16 + (lane & 7) + (lane >> 4) * 8;
      const int chunk = 2 * k_step + ((lane >> 3) & 1);
      std::uint32_t b[4];
      ptx::ldmatrix_x4(b, ptx::cvta_to_shared(k_smem + KTile::chunk_offset(row, chunk)));
      mma_16816<Element>(s[2 * n_pair], a, b[0], b[1]);
      mma_16816<Element>(s[2 * n_pair + 1], a, b[2], b[3]);
    }
  }
}

// O += P V for one warp; p holds probabilities in the S accumulator layout.
template <class Cfg, class VTile>
__device__ __forceinline__ void gemm_pv(float (&o)[Cfg::kHeadDim / 8][4], const float (&p)[Cfg::kBlockN / 8][4],
                                        const typename Cfg::Element* v_smem, int lane) {
  using Element = typename Cfg::Element;
#pragma unroll
  for (int k_step = 0; k_step < Cfg::kBlockN / 16; ++k_step) {
    const std::uint32_t a[4] = {
        pack_float2<Element>(p[2 * k_step][0], p[2 * k_step][1]),
        pack_float2<Element>(p[2 * k_step][2], p[2 * k_step][3]),
        pack_float2<Element>(p[2 * k_step + 1][0], p[2 * k_step + 1][1]),
        pack_float2<Element>(p[2 * k_step + 1][2], p[2 * k_step + 1][3]),
    };
#pragma unroll
    for (int d_pair = 0; d_pair < Cfg::kHeadDim / 16; ++d_pair) {
      // Transposed matrices: (keys 0-7, dv 0-7), (keys 8-15, dv 0-7), (keys 0-7, dv 8-15), (keys 8-15, dv 8-15).
      const int row = k_step * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
      const int chunk = 2 * d_pair + (lane >> 4);
      std::uint32_t b[4];
      ptx::ldmatrix_x4_trans(b, ptx::cvta_to_shared(v_smem + VTile::chunk_offset(row, chunk)));
      mma_16816<Element>(o[2 * d_pair], a, b[0], b[1]);
      mma_16816<Element>(o[2 * d_pair + 1], a, b[2], b[3]);
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
