// Row addressing of K/V inside the kernel: dense (batched, varlen, KV cache
// with cache_batch_idx) or paged through the block table with any page size,
// and the copy of a paged K/V tile.
//
// Same arithmetic as kv_offset() in common/params.h, specialised per CTA: the
// sequence and head parts are folded into one base pointer once, and the page
// lookup divides 32-bit positions by the page size as a multiply-high and a
// shift (common/fast_division.h; the host computes the constants once per
// launch). A 64-bit division is a call to a runtime routine, and a call inside
// the main loop forces the live accumulators to be spilled around it; a 32-bit
// one is ~20 dependent instructions per row.
#pragma once

#include <climits>
#include <cstdint>

#include "common/fast_division.h"
#include "common/params.h"
#include "cuda/ptx/ptx.h"
#include "cuda/sm80/gmem_tile_loader.h"

namespace flashattn::detail::cuda_sm80 {

template <typename Element>
struct KVRows {
  const Element* base;  // dense: row 0 of this sequence and head; paged: head offset only
  std::int64_t row_stride;
  std::int64_t block_stride;  // paged only
  const std::int32_t* table;  // paged: this sequence's block-table row; null when dense
  int page_size;
  int max_block;             // paged: num_blocks - 1 (table entries are clamped to it; clipped_indices.h)
  int first;                 // cache/global position of key 0 (leftpad, varlen offset)
  FastDivisor page_divisor;  // paged: division by page_size (ForwardKernelArgs::page_divisor)

  __device__ __forceinline__ KVRows(const AttentionParams& p, const Operand& op, const SequenceLengths& seq,
                                    std::int64_t batch, std::int64_t head_kv, FastDivisor page_divisor_)
      : page_divisor(page_divisor_) {
    const auto* data = static_cast<const Element*>(op.data) + head_kv * op.head_stride;
    row_stride = op.row_stride;
    block_stride = op.batch_stride;
    first = static_cast<int>(seq.k_offset);
    if (p.block_table != nullptr) {
      table = p.block_table + batch * p.block_table_batch_stride;
      page_size = static_cast<int>(p.page_size);
      max_block = p.kv_blocks > 0 ? static_cast<int>(p.kv_blocks - 1) : INT_MAX;
      base = data;
    } else {
      table = nullptr;
      page_size = 1;
      max_block = 0;
      base = data + seq.k_batch * op.batch_stride;
    }
  }

  // Paged: the block holding page `page` of the sequence, its table entry clamped to the blocks of
  // k/v. The table is read-only for the whole launch, hence the non-coherent (read-only cache) load.
  __device__ __forceinline__ int block(int page) const {
    const int entry = __ldg(table + page);
    return entry < 0 ? 0 : (entry > max_block ? max_block : entry);
  }

  // Paged: the row at cache/global position `position`.
  __device__ __forceinline__ const Element* paged_row(int position) const {
    const int page = fast_divide(position, page_divisor);
    return base + block(page) * block_stride + (position - page * page_size) * row_stride;
  }

  // Key j of the sequence (0-based).
  __device__ __forceinline__ const Element* row(int j) const {
    const int position = first + j;
    if (table == nullptr) return base + position * row_stride;
    return paged_row(position);
  }

  // row() with the page found by a 32-bit division: the generic loader of the kernels without
  // kPagedLoads (forward_kernel.h), kept as it was when their timings were measured.
  __device__ __forceinline__ const Element* row_by_division(int j) const {
    const int position = first + j;
    if (table == nullptr) return base + position * row_stride;
    const int entry = table[position / page_size];
    const int block = entry < 0 ? 0 : (entry > max_block ? max_block : entry);
    return base + block * block_stride + (position % page_size) * row_stride;
  }

  // Paged: when keys [j, j + rows) all lie in one page they are row_stride apart, as dense rows are,
  // and this is key j's row (one table read for the whole tile); else null.
  __device__ __forceinline__ const Element* rows_in_one_page(int j, int rows) const {
    const int position = first + j;
    const int page = fast_divide(position, page_divisor);
    const int in_page = position - page * page_size;
    if (in_page + rows > page_size) return nullptr;
    return base + block(page) * block_stride + in_page * row_stride;
  }
};

// Rows whose table reads one batch of load_paged_rows_async puts in flight together.
inline constexpr int kPagedRowBatch = 8;

__device__ __forceinline__ bool fits_int32(std::int64_t x) { return x >= INT_MIN && x <= INT_MAX; }

// Keys [j0, j0 + kRows) of a paged sequence into a tile, when they span more than one page: each
// row is found through the block table (so pages of any size work, down to 1). Each thread copies
// one column chunk of rows first_row, first_row + kRowStep, ... (as load_strided_tile_async does),
// and resolves a batch of its rows before issuing any of their copies, so the batch's table reads
// and page arithmetic overlap: a cp.async is a memory clobber that nothing moves across, and the
// generic loader (one row per rolled iteration) waited for a dependent table read and a division
// before every 16-byte copy, which made paged K/V ~1.9x slower than dense at every page size.
// A row's address is two 32 x 32 -> 64-bit multiply-adds (block * block stride, row in page * row
// stride, in bytes) onto the thread's column base, when both strides fit in 32 bits (any realistic
// cache: a page of 256 rows of 8 heads of 256 columns is 1 MB); else the generic loader.
// Rows past valid_rows and columns past valid_cols are zero-filled without reading global memory.
template <class Cfg, class Tile, int kRows>
__device__ __forceinline__ void load_paged_rows_async(typename Cfg::Element* smem,
                                                      const KVRows<typename Cfg::Element>& kv, int j0,
                                                      int valid_rows, int valid_cols, int thread) {
  if constexpr (Cfg::kThreads % Cfg::kChunksPerRow == 0) {
    using Element = typename Cfg::Element;
    const std::int64_t block_bytes = kv.block_stride * static_cast<std::int64_t>(sizeof(Element));
    const std::int64_t row_bytes = kv.row_stride * static_cast<std::int64_t>(sizeof(Element));
    if (fits_int32(block_bytes) && fits_int32(row_bytes)) {
      constexpr int kRowStep = Cfg::kThreads / Cfg::kChunksPerRow;
      constexpr int kIters = (kRows + kRowStep - 1) / kRowStep;
      constexpr int kBatch = kIters < kPagedRowBatch ? kIters : kPagedRowBatch;
      static_assert(kIters % kBatch == 0, "whole batches of rows");
      const int chunk = thread % Cfg::kChunksPerRow;
      const int first_row = thread / Cfg::kChunksPerRow;
      const bool column_valid = chunk * Cfg::kChunk < valid_cols;
      const char* column = reinterpret_cast<const char*>(kv.base + chunk * Cfg::kChunk);
      const int position0 = kv.first + j0 + first_row;  // this thread's first row
      // A row past the ragged end reads nothing, but its copy still needs an address: the last row's.
      const int last_position = kv.first + j0 + valid_rows - 1;
      const std::uint32_t dst = ptx::cvta_to_shared(smem + Tile::chunk_offset(first_row, chunk));
#pragma unroll
      for (int batch = 0; batch < kIters; batch += kBatch) {
        const char* src[kBatch];
#pragma unroll
        for (int i = 0; i < kBatch; ++i) {
          const int candidate = position0 + (batch + i) * kRowStep;
          const int position = candidate < last_position ? candidate : last_position;
          const int page = fast_divide(position, kv.page_divisor);
          const int in_page = position - page * kv.page_size;
          src[i] = column + static_cast<std::int64_t>(kv.block(page)) * static_cast<int>(block_bytes) +
                   static_cast<std::int64_t>(in_page) * static_cast<int>(row_bytes);
        }
#pragma unroll
        for (int i = 0; i < kBatch; ++i) {
          const int row = first_row + (batch + i) * kRowStep;
          if (kRows % kRowStep != 0 && row >= kRows) break;
          const bool valid = column_valid && row < valid_rows;
          // A row step that is a multiple of the swizzle period keeps the swizzled chunk (as in
          // load_strided_tile_async): the shared address advances by whole rows.
          const std::uint32_t to = kRowStep % Tile::kRowPeriod == 0
                                       ? dst + 2u * (batch + i) * kRowStep * Tile::kPanelCols
                                       : ptx::cvta_to_shared(smem + Tile::chunk_offset(row, chunk));
          ptx::cp_async_cg_16(to, src[i], valid);
        }
      }
      return;
    }
  }
  load_tile_async<Cfg, Tile, kRows>(
      smem, [&](int row) { return kv.row(j0 + row); }, valid_rows, valid_cols, thread);
}

// Keys [j0, j0 + valid_rows) of a paged sequence into a kRows-row tile (the rest zero-filled). When
// they lie in one page (every tile of a page at least as large as the tile, when pages start at
// tile boundaries) they are rows a fixed stride apart: one table read, then the dense loaders,
// including whole_tile_loads' (forward_config.h) under the same conditions as a dense tile.
// Uniform across the CTA.
template <class Cfg, class Tile, int kRows>
__device__ __forceinline__ void load_paged_tile_async(typename Cfg::Element* smem,
                                                      const KVRows<typename Cfg::Element>& kv, int j0,
                                                      int valid_rows, int valid_cols, int thread) {
  using Element = typename Cfg::Element;
  const Element* row0 = kv.rows_in_one_page(j0, valid_rows);
  if (row0 == nullptr) {
    load_paged_rows_async<Cfg, Tile, kRows>(smem, kv, j0, valid_rows, valid_cols, thread);
    return;
  }
  if constexpr (Cfg::kWholeTileLoads && kWholeTileLoadable<Cfg, kRows>) {
    constexpr std::uint64_t kMaxWholeTileStride =
        0x7fffffffull / (static_cast<std::uint64_t>(kRows) * sizeof(Element));
    if (valid_rows == kRows && valid_cols == Cfg::kHeadDim &&
        static_cast<std::uint64_t>(kv.row_stride) <= kMaxWholeTileStride) {
      load_whole_strided_tile_async<Cfg, Tile, kRows>(
          smem, row0, static_cast<int>(kv.row_stride * static_cast<std::int64_t>(sizeof(Element))), thread);
      return;
    }
  }
  load_strided_tile_async<Cfg, Tile, kRows>(smem, row0, kv.row_stride, valid_rows, valid_cols, thread);
}

}  // namespace flashattn::detail::cuda_sm80
