// Global -> shared tile copies with cp.async, 16 bytes per thread per step.
//
// The generic loader addresses rows through a callable (row -> element pointer),
// so it serves any row layout, paged K/V included; the strided ones serve rows a
// fixed stride apart (dense K/V and Q, and a paged tile inside one page), and
// paged_kv.h copies tiles that span pages. Rows past `valid_rows` and columns
// past `valid_cols` (the true head dim inside the bucket) are zero-filled
// without reading global memory.
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

// Whether load_whole_strided_tile_async serves kRows-row tiles of Cfg: every thread keeps one column
// chunk and copies the same number of rows (e.g. not bucket 96: 12 chunks per row, 128 threads).
template <class Cfg, int kRows>
inline constexpr bool kWholeTileLoadable = Cfg::kThreads % Cfg::kChunksPerRow == 0 &&
                                           kRows % (Cfg::kThreads / Cfg::kChunksPerRow) == 0;

// load_strided_tile_async of a tile known to be whole: every one of its kRows rows exists, the head
// dim equals the bucket, and kRows rows span less than 2 GB. No per-copy bounds test or zero-fill
// select (cp.async without a source size); each copy's source is the thread's first-row pointer plus
// a 32-bit byte offset, and its shared address one of kClasses per-thread bases plus an immediate.
// The general loader spends ~6 integer instructions per 16-byte copy (bounds test, three selects,
// 64-bit pointer step): at d256 with 4 warps x 64 keys that was 190 of a warp's ~1050 instructions per
// K/V tile, where FlashAttention 2 spends almost none (ncu, session 5, docs/kernel-notes.md v10).
template <class Cfg, class Tile, int kRows>
__device__ __forceinline__ void load_whole_strided_tile_async(typename Cfg::Element* smem,
                                                              const typename Cfg::Element* row0,
                                                              int row_stride_bytes, int thread) {
  static_assert(kWholeTileLoadable<Cfg, kRows>);
  constexpr int kRowStep = Cfg::kThreads / Cfg::kChunksPerRow;
  constexpr int kIters = kRows / kRowStep;
  // Rows first_row + i * kRowStep with equal i mod kClasses have the same row mod kRowPeriod, hence the
  // same swizzled chunk: their shared addresses differ by whole rows only.
  constexpr int kPeriodClasses =
      kRowStep % 8 == 0 ? 1 : (kRowStep % 4 == 0 ? 2 : (kRowStep % 2 == 0 ? 4 : 8));
  static_assert(Tile::kRowPeriod == 8, "kPeriodClasses assumes a swizzle period of 8 rows");
  constexpr int kClasses = kPeriodClasses < kIters ? kPeriodClasses : kIters;
  const int chunk = thread % Cfg::kChunksPerRow;
  const int first_row = thread / Cfg::kChunksPerRow;
  const char* src = reinterpret_cast<const char*>(row0) + first_row * row_stride_bytes +
                    chunk * Cfg::kChunk * static_cast<int>(sizeof(typename Cfg::Element));
  const int step_bytes = kRowStep * row_stride_bytes;
  std::uint32_t dst[kClasses];
#pragma unroll
  for (int c = 0; c < kClasses; ++c) {
    dst[c] = ptx::cvta_to_shared(smem + Tile::chunk_offset(first_row + c * kRowStep, chunk));
  }
  // Rows per round of classes (a multiple of the swizzle period wherever i / kClasses > 0).
  constexpr int kRowsPerRound = kClasses * kRowStep;
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const std::uint32_t round_offset =
        2u * static_cast<std::uint32_t>((i / kClasses) * kRowsPerRound * Tile::kPanelCols);
    ptx::cp_async_cg_16_full(dst[i % kClasses] + round_offset, src + i * step_bytes);
  }
}

// Whether load_panel_tile_async serves kRows-row tiles of Cfg: 64-column panels (8 chunks each), and
// the threads' rows (kThreads / 8 per pass) divide the tile.
template <class Cfg, class Tile, int kRows>
inline constexpr bool kPanelTileLoadable = Tile::kChunksPerPanel == 8 && Cfg::kThreads % 8 == 0 &&
                                           kRows % (Cfg::kThreads / 8) == 0;

// K/V tile copy with FlashAttention 2's thread layout (TileShape::panel_loads): thread t copies chunk
// t % 8 of rows t / 8 + i * kRowStep (kRowStep = kThreads / 8, a multiple of the swizzle period) of
// every 64-column panel. Its swizzled chunk is the same in every copy, so its shared addresses are one
// base plus immediates and its global addresses one pointer per row pass plus immediates (the panels
// are 128 bytes apart in a row): 16 copies of a d256 64-key tile at 128 threads cost ~3 integer
// instructions per row pass, where load_strided_tile_async keeps 16 shared bases live (its row step
// of 4 is not a multiple of the swizzle period) and spends a bounds test and three selects per copy.
// `whole` (uniform): every row and column is present, so no copy is tested; otherwise rows at or past
// valid_rows and columns at or past valid_cols are zero-filled without reading global memory.
template <class Cfg, class Tile, int kRows>
__device__ __forceinline__ void load_panel_tile_async(typename Cfg::Element* smem,
                                                      const typename Cfg::Element* row0,
                                                      std::int64_t row_stride, bool whole, int valid_rows,
                                                      int valid_cols, int thread) {
  static_assert(kPanelTileLoadable<Cfg, Tile, kRows>);
  constexpr int kRowStep = Cfg::kThreads / 8;
  constexpr int kPasses = kRows / kRowStep;
  constexpr int kPanels = Cfg::kHeadDim / 64;
  const int chunk = thread % 8;
  const int first_row = thread / 8;
  const std::uint32_t dst = ptx::cvta_to_shared(smem + Tile::chunk_offset(first_row, chunk));
  const auto* src = row0 + first_row * row_stride + chunk * Cfg::kChunk;
  const std::int64_t step = kRowStep * row_stride;
  if (whole) {
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
#pragma unroll
      for (int panel = 0; panel < kPanels; ++panel) {
        ptx::cp_async_cg_16_full(dst + 2u * (panel * Tile::kPanelElements + i * kRowStep * 64),
                                 src + i * step + panel * 64);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const bool row_valid = first_row + i * kRowStep < valid_rows;
#pragma unroll
      for (int panel = 0; panel < kPanels; ++panel) {
        const bool valid = row_valid && (panel * 8 + chunk) * Cfg::kChunk < valid_cols;
        ptx::cp_async_cg_16(dst + 2u * (panel * Tile::kPanelElements + i * kRowStep * 64),
                            valid ? src + i * step + panel * 64 : row0, valid);
      }
    }
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
