// Whole K/V tile copies handed out between the MMAs of a warp GEMM (TileShape::spread_copies).
//
// Why: whole_tile_loads (docs/kernel-notes.md, v10) removed the loader's per-copy bounds tests and
// selects, but issued a tile's copies back to back before the GEMM: executed instructions fell 6%
// and the kernel got 2-5% slower, with more MIO-throttle and short-scoreboard stalls (the copies
// queue in front of the ldmatrix that the first MMAs wait on). The checked loader's integer work
// had spaced the copies out. Here the same unchecked copies are issued a few at a time at the inner
// steps (k-step x fragment pair) of S = Q K^T or O += P V, so they interleave with the ldmatrix/MMA
// stream without the integer work. Only whole dense tiles are spread; any other tile is copied by
// the checked loader before the GEMM and every spread copy of it is predicated off.
#pragma once

#include <cstdint>

#include "cuda/ptx/ptx.h"
#include "cuda/sm80/gmem_tile_loader.h"
#include "cuda/sm80/smem_layout.h"
#include "cuda/sm80/warp_mma.h"

namespace flashattn::detail::cuda_sm80 {

// The copies of one whole kRows-row tile by one thread (load_whole_strided_tile_async's, one at a
// time): copy j takes row first_row + j * kRowStep of the thread's column chunk.
template <class Cfg, class Tile, int kRows>
struct SpreadTileCopy {
  static_assert(kWholeTileLoadable<Cfg, kRows>);
  static_assert(Tile::kRowPeriod == 8, "kPeriodClasses assumes a swizzle period of 8 rows");
  static constexpr int kRowStep = Cfg::kThreads / Cfg::kChunksPerRow;
  static constexpr int kCopies = kRows / kRowStep;
  // Rows j * kRowStep apart with equal j mod kClasses share their swizzled chunk (see
  // load_whole_strided_tile_async), so their shared addresses differ by an immediate.
  static constexpr int kPeriodClasses =
      kRowStep % 8 == 0 ? 1 : (kRowStep % 4 == 0 ? 2 : (kRowStep % 2 == 0 ? 4 : 8));
  static constexpr int kClasses = kPeriodClasses < kCopies ? kPeriodClasses : kCopies;

  const char* src = nullptr;
  int step_bytes = 0;
  std::uint32_t dst[kClasses] = {};
  bool on = false;  // false: issue() copies nothing (the tile went through the checked loader)

  // The tile whose row 0 is row0 (every row present, head dim == bucket, kRows rows < 2 GB) into the
  // shared tile at smem.
  __device__ __forceinline__ void prepare(std::uint32_t smem, const typename Cfg::Element* row0,
                                          int row_stride_bytes, int thread) {
    const int chunk = thread % Cfg::kChunksPerRow;
    const int first_row = thread / Cfg::kChunksPerRow;
    src = reinterpret_cast<const char*>(row0) + first_row * row_stride_bytes +
          chunk * Cfg::kChunk * static_cast<int>(sizeof(typename Cfg::Element));
    step_bytes = kRowStep * row_stride_bytes;
#pragma unroll
    for (int c = 0; c < kClasses; ++c) {
      dst[c] = smem + 2u * static_cast<std::uint32_t>(Tile::chunk_offset(first_row + c * kRowStep, chunk));
    }
    on = true;
  }

  // Copy j (compile-time after unrolling).
  __device__ __forceinline__ void issue(int j) const {
    constexpr int kRowsPerRound = kClasses * kRowStep;
    const std::uint32_t round_offset =
        2u * static_cast<std::uint32_t>((j / kClasses) * kRowsPerRound * Tile::kPanelCols);
    ptx::cp_async_cg_16_full_if(dst[j % kClasses] + round_offset, src + j * step_bytes, on);
  }
};

// No copies (the second slot of issue_spread when only one tile is spread).
struct NoSpreadCopy {
  static constexpr int kCopies = 0;
  __device__ __forceinline__ void issue(int) const {}
};

// At inner step `step` of a GEMM with kSteps of them: the copies of `first` then `second` (one list)
// whose slot falls on this step, the slots spread evenly over the first kSteps / kSpread steps.
template <int kSteps, int kSpread, class First, class Second>
__device__ __forceinline__ void issue_spread(int step, const First& first, const Second& second) {
  constexpr int kTotal = First::kCopies + Second::kCopies;
  constexpr int kWindow = kSteps / kSpread > 0 ? kSteps / kSpread : 1;
#pragma unroll
  for (int g = 0; g < kTotal; ++g) {
    if (g * kWindow / kTotal == step) {
      if (g < First::kCopies) {
        first.issue(g);
      } else {
        second.issue(g - First::kCopies);
      }
    }
  }
}

// gemm_qk / gemm_qk_prefetched (warp_mma.h, same MMA order) calling hook(i) at the start of inner step
// i = k_step * (kBlockN / 16) + n_pair.
template <class Cfg, class QTile, class KTile, class Hook>
__device__ __forceinline__ void gemm_qk_hooked(float (&s)[Cfg::kMTiles][Cfg::kBlockN / 8][4],
                                               const QFragments<Cfg>& q_fragments, std::uint32_t q_smem,
                                               const LaneOffsets<QTile>& q_offsets, std::uint32_t k_smem,
                                               const LaneOffsets<KTile>& k_offsets, const Hook& hook) {
  using Element = typename Cfg::Element;
  constexpr int kSteps = Cfg::kHeadDim / 16;
  constexpr int kPairs = Cfg::kBlockN / 16;
  constexpr bool kPrefetch = Cfg::kPrefetchFragments;
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
#pragma unroll
    for (int n = 0; n < Cfg::kBlockN / 8; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
  }
  std::uint32_t a[2][Cfg::kMTiles][4];
  std::uint32_t b[2][4];
  auto load_a = [&](std::uint32_t(&dst)[Cfg::kMTiles][4], int k_step) {
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
      if constexpr (Cfg::kQInRegisters) {
        dst[mt][0] = q_fragments[mt][k_step][0], dst[mt][1] = q_fragments[mt][k_step][1];
        dst[mt][2] = q_fragments[mt][k_step][2], dst[mt][3] = q_fragments[mt][k_step][3];
      } else {
        load_q_fragment(dst[mt], q_smem, q_offsets, mt, k_step);
      }
    }
  };
  if constexpr (kPrefetch) {
    load_a(a[0], 0);
    ptx::ldmatrix_x4(b[0], k_smem + k_offsets.at(0, 0));
  }
#pragma unroll
  for (int k_step = 0; k_step < kSteps; ++k_step) {
#pragma unroll
    for (int n_pair = 0; n_pair < kPairs; ++n_pair) {
      const int i = k_step * kPairs + n_pair;
      hook(i);
      int cur = 0;
      int cur_b = 0;
      if constexpr (kPrefetch) {
        cur = k_step & 1, cur_b = i & 1;
        if (n_pair == 0 && k_step + 1 < kSteps) load_a(a[(k_step + 1) & 1], k_step + 1);
        if (n_pair + 1 < kPairs) {
          ptx::ldmatrix_x4(b[(i + 1) & 1], k_smem + k_offsets.at(16 * (n_pair + 1), k_step));
        } else if (k_step + 1 < kSteps) {
          ptx::ldmatrix_x4(b[(i + 1) & 1], k_smem + k_offsets.at(0, k_step + 1));
        }
      } else {
        if (n_pair == 0) load_a(a[0], k_step);
        ptx::ldmatrix_x4(b[0], k_smem + k_offsets.at(16 * n_pair, k_step));
      }
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma_16816<Element>(s[mt][2 * n_pair], a[cur][mt], b[cur_b][0], b[cur_b][1]);
        mma_16816<Element>(s[mt][2 * n_pair + 1], a[cur][mt], b[cur_b][2], b[cur_b][3]);
      }
    }
  }
}

// gemm_pv / gemm_pv_prefetched calling hook(i) at the start of inner step
// i = k_step * (kHeadDim / 16) + d_pair.
template <class Cfg, class VTile, class Hook>
__device__ __forceinline__ void gemm_pv_hooked(float (&o)[Cfg::kMTiles][Cfg::kHeadDim / 8][4],
                                               const float (&p)[Cfg::kMTiles][Cfg::kBlockN / 8][4],
                                               std::uint32_t v_smem, const LaneOffsets<VTile>& v_offsets,
                                               const Hook& hook) {
  using Element = typename Cfg::Element;
  constexpr int kSteps = Cfg::kBlockN / 16;
  constexpr int kPairs = Cfg::kHeadDim / 16;
  constexpr bool kPrefetch = Cfg::kPrefetchFragments;
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
  if constexpr (kPrefetch) {
    pack_a(a[0], 0);
    ptx::ldmatrix_x4_trans(b[0], v_smem + v_offsets.at(0, 0));
  }
#pragma unroll
  for (int k_step = 0; k_step < kSteps; ++k_step) {
#pragma unroll
    for (int d_pair = 0; d_pair < kPairs; ++d_pair) {
      const int i = k_step * kPairs + d_pair;
      hook(i);
      int cur = 0;
      int cur_b = 0;
      if constexpr (kPrefetch) {
        cur = k_step & 1, cur_b = i & 1;
        if (d_pair == 0 && k_step + 1 < kSteps) pack_a(a[(k_step + 1) & 1], k_step + 1);
        if (d_pair + 1 < kPairs) {
          ptx::ldmatrix_x4_trans(b[(i + 1) & 1], v_smem + v_offsets.at(16 * k_step, d_pair + 1));
        } else if (k_step + 1 < kSteps) {
          ptx::ldmatrix_x4_trans(b[(i + 1) & 1], v_smem + v_offsets.at(16 * (k_step + 1), 0));
        }
      } else {
        if (d_pair == 0) pack_a(a[0], k_step);
        ptx::ldmatrix_x4_trans(b[0], v_smem + v_offsets.at(16 * k_step, d_pair));
      }
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma_16816<Element>(o[mt][2 * d_pair], a[cur][mt], b[cur_b][0], b[cur_b][1]);
        mma_16816<Element>(o[mt][2 * d_pair + 1], a[cur][mt], b[cur_b][2], b[cur_b][3]);
      }
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
