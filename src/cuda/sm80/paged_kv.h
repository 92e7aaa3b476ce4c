// Row addressing of K/V inside the kernel: dense (batched, varlen, KV cache
// with cache_batch_idx) or paged through the block table with any page size.
//
// Same arithmetic as kv_offset() in common/params.h, specialised per CTA: the
// sequence and head parts are folded into one base pointer once, and the page
// lookup divides 32-bit positions. A 64-bit division is a call to a runtime
// routine, and a call inside the main loop forces the live accumulators to be
// spilled around it.
#pragma once

#include <climits>
#include <cstdint>

#include "common/params.h"

namespace flashattn::detail::cuda_sm80 {

template <typename Element>
struct KVRows {
  const Element* base;  // dense: row 0 of this sequence and head; paged: head offset only
  std::int64_t row_stride;
  std::int64_t block_stride;  // paged only
  const std::int32_t* table;  // paged: this sequence's block-table row; null when dense
  int page_size;
  int max_block;  // paged: num_blocks - 1 (table entries are clamped to it; clipped_indices.h)
  int first;      // cache/global position of key 0 (leftpad, varlen offset)

  __device__ __forceinline__ KVRows(const AttentionParams& p, const Operand& op, const SequenceLengths& seq,
                                    std::int64_t batch, std::int64_t head_kv) {
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

  // Key j of the sequence (0-based).
  __device__ __forceinline__ const Element* row(int j) const {
    const int position = first + j;
    if (table == nullptr) return base + position * row_stride;
    const int entry = table[position / page_size];
    const int block = entry < 0 ? 0 : (entry > max_block ? max_block : entry);
    return base + block * block_stride + (position % page_size) * row_stride;
  }
};

}  // namespace flashattn::detail::cuda_sm80
