// The two GEMMs of attention at warp level, on register fragments.
//
// A warp owns 16 * kMTiles query rows. S (16 x kBlockN per m-tile) = Q K^T reads K from a swizzled
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

// Per-lane ldmatrix offsets of the three operands (smem_layout.h).
// A (Q): lanes 0-15 address rows 0-15 of the first 8 columns, lanes 16-31 the
// same rows of the next 8: matrices 0..3 become a0..a3.
template <class QTile>
__device__ __forceinline__ LaneOffsets<QTile> q_lane_offsets(int row0, int lane) {
  return LaneOffsets<QTile>(row0 + (lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4);
}
// B (K): matrices (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, k 0-7), (keys 8-15, k 8-15).
template <class KTile>
__device__ __forceinline__ LaneOffsets<KTile> k_lane_offsets(int lane) {
  return LaneOffsets<KTile>((lane & 7) + (lane >> 4) * 8, (lane >> 3) & 1);
}
// B (V, transposed): (keys 0-7, dv 0-7), (keys 8-15, dv 0-7), (keys 0-7, dv 8-15), (keys 8-15, dv 8-15).
template <class VTile>
__device__ __forceinline__ LaneOffsets<VTile> v_lane_offsets(int lane) {
  return LaneOffsets<VTile>((lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4);
}

template <class Cfg>
using QFragments = std::uint32_t[Cfg::kMTiles][Cfg::kQInRegisters ? Cfg::kHeadDim / 16 : 1][4];

// Q fragments of m-tile mt, k-step k_step (q_offsets from q_lane_offsets of the warp's row0).
// kXor: TileShape::xor_lane_offsets (smem_layout.h LaneOffsets::address).
template <class QTile, bool kXor = false>
__device__ __forceinline__ void load_q_fragment(std::uint32_t (&a)[4], std::uint32_t q_smem,
                                                const LaneOffsets<QTile>& q_offsets, int mt, int k_step) {
  ptx::ldmatrix_x4(a, q_offsets.template address<kXor>(q_smem, 16 * mt, k_step));
}

// S's accumulators cleared before the first k-step of S = Q K^T.
template <class Cfg>
__device__ __forceinline__ void zero_scores(float (&s)[Cfg::kMTiles][Cfg::kBlockN / 8][4]) {
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
#pragma unroll
    for (int n = 0; n < Cfg::kBlockN / 8; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
  }
}

// The A operands of k-step k_step of S = Q K^T, every m-tile: the warp's Q fragments held in
// registers (kQInRegisters) or read from shared memory.
template <class Cfg, class QTile>
__device__ __forceinline__ void load_q_step(std::uint32_t (&a)[Cfg::kMTiles][4],
                                            const QFragments<Cfg>& q_fragments, std::uint32_t q_smem,
                                            const LaneOffsets<QTile>& q_offsets, int k_step) {
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
    if constexpr (Cfg::kQInRegisters) {
      a[mt][0] = q_fragments[mt][k_step][0], a[mt][1] = q_fragments[mt][k_step][1];
      a[mt][2] = q_fragments[mt][k_step][2], a[mt][3] = q_fragments[mt][k_step][3];
    } else {
      load_q_fragment<QTile, Cfg::kXorLaneOffsets>(a[mt], q_smem, q_offsets, mt, k_step);
    }
  }
}

// S = Q K^T for one warp's kMTiles m-tiles (rows row0 + 16 * mt). Each K
// fragment read from shared memory feeds kMTiles MMAs. q_fragments holds the
// warp's Q when kQInRegisters, else Q is re-read from shared memory per k-step.
template <class Cfg, class QTile, class KTile>
__device__ __forceinline__ void gemm_qk(float (&s)[Cfg::kMTiles][Cfg::kBlockN / 8][4],
                                        const QFragments<Cfg>& q_fragments, std::uint32_t q_smem,
                                        const LaneOffsets<QTile>& q_offsets, std::uint32_t k_smem,
                                        const LaneOffsets<KTile>& k_offsets) {
  using Element = typename Cfg::Element;
  zero_scores<Cfg>(s);
#pragma unroll
  for (int k_step = 0; k_step < Cfg::kHeadDim / 16; ++k_step) {
    std::uint32_t a[Cfg::kMTiles][4];
    load_q_step<Cfg>(a, q_fragments, q_smem, q_offsets, k_step);
#pragma unroll
    for (int n_pair = 0; n_pair < Cfg::kBlockN / 16; ++n_pair) {
      std::uint32_t b[4];
      ptx::ldmatrix_x4(b, k_offsets.template address<Cfg::kXorLaneOffsets>(k_smem, 16 * n_pair, k_step));
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma_16816<Element>(s[mt][2 * n_pair], a[mt], b[0], b[1]);
        mma_16816<Element>(s[mt][2 * n_pair + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// O += P V for one warp; p holds probabilities in the S accumulator layout.
// Each V fragment feeds kMTiles MMAs.
template <class Cfg, class VTile>
__device__ __forceinline__ void gemm_pv(float (&o)[Cfg::kMTiles][Cfg::kHeadDim / 8][4],
                                        const float (&p)[Cfg::kMTiles][Cfg::kBlockN / 8][4],
                                        std::uint32_t v_smem, const LaneOffsets<VTile>& v_offsets) {
  using Element = typename Cfg::Element;
#pragma unroll
  for (int k_step = 0; k_step < Cfg::kBlockN / 16; ++k_step) {
    std::uint32_t a[Cfg::kMTiles][4];
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
      a[mt][0] = pack_float2<Element>(p[mt][2 * k_step][0], p[mt][2 * k_step][1]);
      a[mt][1] = pack_float2<Element>(p[mt][2 * k_step][2], p[mt][2 * k_step][3]);
      a[mt][2] = pack_float2<Element>(p[mt][2 * k_step + 1][0], p[mt][2 * k_step + 1][1]);
      a[mt][3] = pack_float2<Element>(p[mt][2 * k_step + 1][2], p[mt][2 * k_step + 1][3]);
    }
#pragma unroll
    for (int d_pair = 0; d_pair < Cfg::kHeadDim / 16; ++d_pair) {
      std::uint32_t b[4];
      ptx::ldmatrix_x4_trans(b,
                             v_offsets.template address<Cfg::kXorLaneOffsets>(v_smem, 16 * k_step, d_pair));
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma_16816<Element>(o[mt][2 * d_pair], a[mt], b[0], b[1]);
        mma_16816<Element>(o[mt][2 * d_pair + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// gemm_qk and gemm_pv with their shared-memory fragments read one step ahead (TileShape::
// prefetch_fragments): the ldmatrix of the next K (V) fragment, and the next k-step's Q fragments
// (P conversion), are issued before the MMAs of the current one, so an MMA does not wait on the
// ldmatrix (or cvt) issued just before it. The asm statements keep their order, so the order here
// is the order ptxas starts from. Costs 4-12 more live registers than gemm_qk / gemm_pv.
template <class Cfg, class QTile, class KTile>
__device__ __forceinline__ void gemm_qk_prefetched(float (&s)[Cfg::kMTiles][Cfg::kBlockN / 8][4],
                                                   const QFragments<Cfg>& q_fragments, std::uint32_t q_smem,
                                                   const LaneOffsets<QTile>& q_offsets, std::uint32_t k_smem,
                                                   const LaneOffsets<KTile>& k_offsets) {
  using Element = typename Cfg::Element;
  constexpr int kSteps = Cfg::kHeadDim / 16;
  constexpr int kPairs = Cfg::kBlockN / 16;
  zero_scores<Cfg>(s);
  std::uint32_t a[2][Cfg::kMTiles][4];
  std::uint32_t b[2][4];
  auto load_a = [&](std::uint32_t(&dst)[Cfg::kMTiles][4], int k_step) {
    load_q_step<Cfg>(dst, q_fragments, q_smem, q_offsets, k_step);
  };
  load_a(a[0], 0);
  ptx::ldmatrix_x4(b[0], k_offsets.template address<Cfg::kXorLaneOffsets>(k_smem, 0, 0));
#pragma unroll
  for (int k_step = 0; k_step < kSteps; ++k_step) {
#pragma unroll
    for (int n_pair = 0; n_pair < kPairs; ++n_pair) {
      const int i = k_step * kPairs + n_pair;
      if (n_pair == 0 && k_step + 1 < kSteps) load_a(a[(k_step + 1) & 1], k_step + 1);
      if (n_pair + 1 < kPairs) {
        ptx::ldmatrix_x4(b[(i + 1) & 1],
                         k_offsets.template address<Cfg::kXorLaneOffsets>(k_smem, 16 * (n_pair + 1), k_step));
      } else if (k_step + 1 < kSteps) {
        ptx::ldmatrix_x4(b[(i + 1) & 1],
                         k_offsets.template address<Cfg::kXorLaneOffsets>(k_smem, 0, k_step + 1));
      }
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma_16816<Element>(s[mt][2 * n_pair], a[k_step & 1][mt], b[i & 1][0], b[i & 1][1]);
        mma_16816<Element>(s[mt][2 * n_pair + 1], a[k_step & 1][mt], b[i & 1][2], b[i & 1][3]);
      }
    }
  }
}

template <class Cfg, class VTile>
__device__ __forceinline__ void gemm_pv_prefetched(float (&o)[Cfg::kMTiles][Cfg::kHeadDim / 8][4],
                                                   const float (&p)[Cfg::kMTiles][Cfg::kBlockN / 8][4],
                                                   std::uint32_t v_smem,
                                                   const LaneOffsets<VTile>& v_offsets) {
  using Element = typename Cfg::Element;
  constexpr int kSteps = Cfg::kBlockN / 16;
  constexpr int kPairs = Cfg::kHeadDim / 16;
  std::uint32_t a[2][Cfg::kMTiles][4];
  std::uint32_t b[2][4];
  auto pack_a = [&](std::uint32_t(&dst)[Cfg::kMTiles][4], int k_step) {
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
      dst[mt][0] = pack_float2<Element>(p[mt][2 * k_step][0], p[mt][2 * k_step][1]);
      dst[mt][1] = pack_float2<Element>(p[mt][2 * k_step][2], p[mt][2 * k_step][3]);
      dst[mt][2] = pack_float2<Element>(p[mt][2 * k_step + 1][0], p[mt][2 * k_step + 1][1]);
      dst[mt][3] = pack_float2<Element>(p[mt][2 * k_step + 1][2], p[mt][2 * k_step + 1][3]);
    }
  };
  pack_a(a[0], 0);
  ptx::ldmatrix_x4_trans(b[0], v_offsets.template address<Cfg::kXorLaneOffsets>(v_smem, 0, 0));
#pragma unroll
  for (int k_step = 0; k_step < kSteps; ++k_step) {
#pragma unroll
    for (int d_pair = 0; d_pair < kPairs; ++d_pair) {
      const int i = k_step * kPairs + d_pair;
      if (d_pair == 0 && k_step + 1 < kSteps) pack_a(a[(k_step + 1) & 1], k_step + 1);
      if (d_pair + 1 < kPairs) {
        ptx::ldmatrix_x4_trans(b[(i + 1) & 1], v_offsets.template address<Cfg::kXorLaneOffsets>(
                                                   v_smem, 16 * k_step, d_pair + 1));
      } else if (k_step + 1 < kSteps) {
        ptx::ldmatrix_x4_trans(
            b[(i + 1) & 1], v_offsets.template address<Cfg::kXorLaneOffsets>(v_smem, 16 * (k_step + 1), 0));
      }
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma_16816<Element>(o[mt][2 * d_pair], a[k_step & 1][mt], b[i & 1][0], b[i & 1][1]);
        mma_16816<Element>(o[mt][2 * d_pair + 1], a[k_step & 1][mt], b[i & 1][2], b[i & 1][3]);
      }
    }
  }
}

// S = Q K^T with a whole k-step of fragments read one k-step ahead (TileShape::qk_step_ahead): the Q
// fragments and every K fragment of k-step k + 1 are issued before the MMAs of k-step k, as
// FlashAttention 2's GEMM does. gemm_qk_prefetched reads one K fragment ahead, i.e. two MMAs
// (~13 cycles of one scheduler's tensor pipe) in front of an ldmatrix whose latency is ~30 cycles,
// and with 2 warps per scheduler (d256, 64 x 64 tiles) the S = Q K^T MMAs waited on their operands
// (ncu, session 7: 20k short-scoreboard samples on its HMMA vs FA2's 12k). Costs 2 x (kBlockN / 16)
// x 4 + 8 x kMTiles fragment registers.
template <class Cfg, class QTile, class KTile>
__device__ __forceinline__ void gemm_qk_step_ahead(float (&s)[Cfg::kMTiles][Cfg::kBlockN / 8][4],
                                                   const QFragments<Cfg>& q_fragments, std::uint32_t q_smem,
                                                   const LaneOffsets<QTile>& q_offsets, std::uint32_t k_smem,
                                                   const LaneOffsets<KTile>& k_offsets) {
  using Element = typename Cfg::Element;
  constexpr int kSteps = Cfg::kHeadDim / 16;
  constexpr int kPairs = Cfg::kBlockN / 16;
  zero_scores<Cfg>(s);
  std::uint32_t a[2][Cfg::kMTiles][4];
  std::uint32_t b[2][kPairs][4];
  auto load_step = [&](int slot, int k_step) {
    load_q_step<Cfg>(a[slot], q_fragments, q_smem, q_offsets, k_step);
#pragma unroll
    for (int n_pair = 0; n_pair < kPairs; ++n_pair) {
      ptx::ldmatrix_x4(b[slot][n_pair],
                       k_offsets.template address<Cfg::kXorLaneOffsets>(k_smem, 16 * n_pair, k_step));
    }
  };
  load_step(0, 0);
#pragma unroll
  for (int k_step = 0; k_step < kSteps; ++k_step) {
    if (k_step + 1 < kSteps) load_step((k_step + 1) & 1, k_step + 1);
#pragma unroll
    for (int n_pair = 0; n_pair < kPairs; ++n_pair) {
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma_16816<Element>(s[mt][2 * n_pair], a[k_step & 1][mt], b[k_step & 1][n_pair][0],
                           b[k_step & 1][n_pair][1]);
        mma_16816<Element>(s[mt][2 * n_pair + 1], a[k_step & 1][mt], b[k_step & 1][n_pair][2],
                           b[k_step & 1][n_pair][3]);
      }
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
