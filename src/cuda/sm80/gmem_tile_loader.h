// Global -> shared tile copies with cp.async, 16 bytes per thread per step.
//
// Rows are addressed through a callable (row -> element pointer), which is
// how one loader serves dense, varlen and paged K/V: a paged row is found
// through the block table, so any page size works, including ones smaller
// than the tile. Rows past `valid_rows` and columns past `valid_cols` (the true
// head dim inside the bucket) are zero-filled without reading global memory.
#pragma once

#include <cstdint>

#include "cuda/ptx/ptx.h"

namespace flashattn::detail::cuda_sm80 {

template <class Cfg, class Tile, int kRows, class RowPointer>
__device__ __forceinline__ void load_tile_async(typename Cfg::Element* smem, const RowPointer& row_pointer,
                                                int valid_rows, int valid_cols, int thread) {
  constexpr int kChunks = kRows * Cfg::kChunksPerRow;
#pragma unroll 1
  for (int c = thread; c < kChunks; c += Cfg::kThreads) {
    const int row = c / Cfg::kChunksPerRow;
    const int chunk = c % Cfg::kChunksPerRow;
    const bool valid = row < valid_rows && chunk * Cfg::kChunk < valid_cols;
    const auto* src = valid ? row_pointer(row) + chunk * Cfg::kChunk : row_pointer(0);
    ptx::cp_async_cg_16(ptx::cvta_to_shared(smem + Tile::chunk_offset(row, chunk)), src, valid);
  }
}

// Dense rows (a fixed stride apart): when the thread count is a multiple of the
// chunks per row, each thread keeps one column chunk and steps its global
// pointer by a constant, so the loop body is one cp.async and two adds instead
// of per-chunk index arithmetic (the generic loader was ~half of the
// non-MMA instructions of the main loop).
template <class Cfg, class Tile, int kRows>
__device__ __forceinline__ void load_strided_tile_async(typename Cfg::Element* smem,
                                                        const typename Cfg::Element* row0,
                                                        std::int64_t row_stride, int valid_rows,
                                                        int valid_cols, int thread) {
  if constexpr (Cfg::kThreads % Cfg::kChunksPerRow == 0) {
    constexpr int kRowStep = Cfg::kThreads / Cfg::kChunksPerRow;
    const int chunk = thread % Cfg::kChunksPerRow;
    const int first_row = thread / Cfg::kChunksPerRow;
    const bool column_valid = chunk * Cfg::kChunk < valid_cols;
    const auto* src = row0 + first_row * row_stride + chunk * Cfg::kChunk;
    const std::int64_t step = kRowStep * row_stride;
    // A row step that is a multiple of the swizzle period keeps the swizzled
    // chunk: the shared address advances by a constant too.
    const std::uint32_t dst = ptx::cvta_to_shared(smem + Tile::chunk_offset(first_row, chunk));
#pragma unroll
    for (int i = 0; i * kRowStep < kRows; ++i) {
      const int row = first_row + i * kRowStep;
      if (kRows % kRowStep != 0 && row >= kRows) break;
      const bool valid = column_valid && row < valid_rows;
      const std::uint32_t to = kRowStep % Tile::kRowPeriod == 0
                                   ? dst + 2u * i * kRowStep * Tile::kPanelCols
                                   : ptx::cvta_to_shared(smem + Tile::chunk_offset(row, chunk));
      ptx::cp_async_cg_16(to, valid ? src : row0, valid);
      src += step;
    }
  } else {
    load_tile_async<Cfg, Tile, kRows>(
        smem, [&](int row) { return row0 + row * row_stride; }, valid_rows, valid_cols, thread);
  }
}

// One warp's rows [row0, row0 + kRowsPerWarp) of a tile whose row 0 is `tile_row0` (rows at or past
// valid_rows zero-filled), by that warp's 32 lanes: the rows only that warp reads, so a warp may
// refill them as soon as it is done with them, without a block barrier (prefetch_next).
template <class Cfg, class Tile>
__device__ __forceinline__ void load_warp_rows_async(typename Cfg::Element* smem,
                                                     const typename Cfg::Element* tile_row0,
                                                     std::int64_t row_stride, int valid_rows, int valid_cols,
                                                     int row0, int lane) {
  constexpr int kChunks = Cfg::kRowsPerWarp * Cfg::kChunksPerRow;
  static_assert(kChunks % 32 == 0, "a warp's rows are a whole number of 32-chunk steps");
  // Not unrolled: it runs beside the live O accumulators, and an unrolled copy computes every
  // address up front (ptxas spilled ~400 B at d128).
#pragma unroll 1
  for (int i = 0; i < kChunks / 32; ++i) {
    const int c = 32 * i + lane;
    const int row = row0 + c / Cfg::kChunksPerRow;
    const int chunk = c % Cfg::kChunksPerRow;
    const bool valid = row < valid_rows && chunk * Cfg::kChunk < valid_cols;
    const auto* src = valid ? tile_row0 + row * row_stride + chunk * Cfg::kChunk : tile_row0;
    ptx::cp_async_cg_16(ptx::cvta_to_shared(smem + Tile::chunk_offset(row, chunk)), src, valid);
  }
}

}  // namespace flashattn::detail::cuda_sm80
