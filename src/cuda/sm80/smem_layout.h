// Swizzled shared-memory tiles of 16-bit elements.
//
// A tile of kRows x kCols is stored as column panels of 64 elements (128 bytes)
// or, for buckets that are not multiples of 64, 32 elements (64 bytes). Inside
// a panel the 16-byte chunk index is XORed with bits of the row, so that the 8
// row addresses of one ldmatrix phase (8 consecutive rows, same logical chunk)
// land in 8 different 16-byte bank groups: no bank conflicts on reads, and the
// cp.async writes of a warp (consecutive chunks of a row) stay conflict-free.
#pragma once

#include <cstdint>

namespace flashattn::detail::cuda_sm80 {

template <int kRows, int kCols>
struct SwizzledTile {
  static constexpr int kPanelCols = kCols % 64 == 0 ? 64 : 32;
  static constexpr int kChunksPerPanel = kPanelCols / 8;
  static_assert(kCols % kPanelCols == 0);

  // Element offset of the 16-byte chunk `chunk` (column chunk * 8) of row `row`.
  static __device__ __forceinline__ int chunk_offset(int row, int chunk) {
    const int panel = chunk / kChunksPerPanel;
    const int in_panel = chunk % kChunksPerPanel;
    // 128-byte panels: 8 rows cover the 8 bank groups by XOR with row bits 0..2.
    // 64-byte panels: two rows share a 128-byte line, so bit 0 of the row picks
    // the half and bits 1..2 are XORed into the 4 chunks.
    const int swizzled = kChunksPerPanel == 8 ? (in_panel ^ (row & 7)) : (in_panel ^ ((row >> 1) & 3));
    return panel * (kRows * kPanelCols) + row * kPanelCols + swizzled * 8;
  }
};

}  // namespace flashattn::detail::cuda_sm80
