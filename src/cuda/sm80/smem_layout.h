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

  // Row steps that leave the swizzle unchanged: the XOR uses row bits 0..2.
  static constexpr int kRowPeriod = 8;
  static constexpr int kPanelElements = kRows * kPanelCols;
};

// Per-lane byte offsets for walking a swizzled tile 16 columns (two chunks) at
// a time, as ldmatrix does: lane reads row `lane_row` (+ multiples of 8) and
// chunk 2 * k + `lane_half`. Within a panel the swizzled chunk depends on k
// only through k mod kPhases, so kPhases offsets computed once per lane turn
// every later address into offset + compile-time immediate. (Recomputing the
// XOR per access, the compiler instead hoisted one register per distinct
// address out of the KV loop: ~100 registers and spills at 32 rows per warp.)
template <class Tile>
struct LaneOffsets {
  static constexpr int kPhases = Tile::kChunksPerPanel / 2;
  std::uint32_t phase[kPhases];

  __device__ __forceinline__ LaneOffsets(int lane_row, int lane_half) {
#pragma unroll
    for (int p = 0; p < kPhases; ++p) phase[p] = 2u * Tile::chunk_offset(lane_row, 2 * p + lane_half);
  }
  // Bytes from the tile start to (lane_row + row_offset, chunk 2 * k + lane_half);
  // row_offset a multiple of Tile::kRowPeriod, k and row_offset compile-time in unrolled loops.
  __device__ __forceinline__ std::uint32_t at(int row_offset, int k) const {
    return phase[k % kPhases] + 2u * ((k / kPhases) * Tile::kPanelElements + row_offset * Tile::kPanelCols);
  }
  // Shared address of the same element in the tile at byte address `tile`. kXor (TileShape::
  // xor_lane_offsets) with 128-byte panels: phase p is phase 0 with chunk bit 1..2 flipped by p (the
  // swizzle XORs the chunk, and chunk 2 p + lane_half = 2 p ^ lane_half), i.e. bytes 32 p XORed in once
  // the tile base, a multiple of 128 bytes, is added. So only phase[0] stays live across the K/V loop
  // (kPhases - 1 fewer per-lane registers per operand; the d64 kernels spilled and reloaded them every
  // K/V tile) at one LOP3 per (tile, phase) instead. The panel and row steps, multiples of 128 bytes,
  // stay immediates.
  template <bool kXor>
  __device__ __forceinline__ std::uint32_t address(std::uint32_t tile, int row_offset, int k) const {
    if constexpr (kXor && Tile::kChunksPerPanel == 8) {
      return ((tile + phase[0]) ^ (32u * static_cast<std::uint32_t>(k % kPhases))) +
             2u * ((k / kPhases) * Tile::kPanelElements + row_offset * Tile::kPanelCols);
    } else {
      return tile + at(row_offset, k);
    }
  }
};

}  // namespace flashattn::detail::cuda_sm80
