// Global -> shared tile copies with cp.async, 16 bytes per thread per step.
//
// Rows are addressed through a callable (row -> element pointer), which is
// how one loader serves dense, varlen and paged K/V: a paged row is found
// through the block table, so any page size works, including ones smaller
// than the tile. Rows past `valid_rows` and columns past `valid_cols` (the true
// head dim inside the bucket) are zero-filled without reading global memory.
#pragma once

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

}  // namespace flashattn::detail::cuda_sm80
