// Reading the index tensors on the GPU with every value clipped to the range
// the operands can hold.
//
// On a CUDA device the API does not validate the contents of cu_seqlens_q/k,
// seqused_q/k, cache_seqlens, cache_leftpad, cache_batch_idx and block_table
// (that would need a device-to-host copy and a synchronisation; see
// api/validate.h). The kernels therefore never trust them: out-of-range values
// are clamped, so garbage gives wrong numbers (or skipped work), never an
// out-of-bounds access. For valid contents every clamp is a no-op and the
// results equal sequence_lengths() of common/params.h. The rules:
//   cu_seqlens_q[b], [b+1]   clamped to [0, total_q], end >= start; length <= max_seqlen_q
//   seqused_q/k[b]           clamped to [0, the sequence's length]
//   cu_seqlens_k (dense)     clamped to [0, total_k], end >= start
//   cu_seqlens_k (paged)     length clamped to [0, max_blocks_per_seq * page_size]
//   cache_leftpad[b]         clamped to [0, capacity]
//   cache_seqlens[b]         clamped to [0, capacity - s_new] (room for the appended rows)
//   cache_batch_idx[b]       clamped to [0, b_cache - 1]
//   block_table entries      clamped to [0, num_blocks - 1]
//   rotary table rows        clamped to [0, s_rotary - 1]
// An extent left 0 in AttentionParams (a caller that bypasses the API) disables its clamp.
#pragma once

#include <cstdint>

#include "common/params.h"

namespace flashattn::detail::cuda_sm80 {

__device__ __forceinline__ std::int64_t clamp64(std::int64_t x, std::int64_t lo, std::int64_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// [begin, end) of sequence b in a cu_seqlens array over `rows` rows (rows 0: unknown).
__device__ __forceinline__ void clipped_span(const std::int32_t* cu, std::int64_t b, std::int64_t rows,
                                             std::int64_t* begin, std::int64_t* end) {
  const std::int64_t limit = rows > 0 ? rows : INT64_MAX;
  *begin = clamp64(cu[b], 0, limit);
  *end = clamp64(cu[b + 1], *begin, limit);
}

__device__ __forceinline__ SequenceLengths clipped_sequence_lengths(const AttentionParams& p,
                                                                    std::int64_t b) {
  SequenceLengths s;
  if (p.cu_seqlens_q) {
    std::int64_t begin, end;
    clipped_span(p.cu_seqlens_q, b, p.q_rows, &begin, &end);
    s.q_offset = begin;
    s.q = end - begin < p.seqlen_q ? end - begin : p.seqlen_q;
  } else {
    s.q = p.seqlen_q;
  }
  if (p.seqused_q) s.q = clamp64(p.seqused_q[b], 0, s.q);

  s.k_batch = b;
  if (p.cache_batch_idx)
    s.k_batch = p.kv_blocks > 0 ? clamp64(p.cache_batch_idx[b], 0, p.kv_blocks - 1) : p.cache_batch_idx[b];
  if (p.is_kvcache) {
    const std::int64_t capacity = p.cache_capacity;
    const std::int64_t appended = p.k_new.data ? p.seqlen_new : 0;
    const std::int64_t leftpad = p.leftpad_k ? clamp64(p.leftpad_k[b], 0, capacity) : 0;
    s.cache_end = p.cache_seqlens ? clamp64(p.cache_seqlens[b], 0, capacity - appended) : capacity;
    s.k_offset = leftpad;
    s.k = s.cache_end + appended - leftpad;
    if (s.k < 0) s.k = 0;
  } else if (p.cu_seqlens_k) {
    if (p.block_table) {
      // Paged varlen: keys start at block 0 of the sequence's table row.
      const std::int64_t length = static_cast<std::int64_t>(p.cu_seqlens_k[b + 1]) - p.cu_seqlens_k[b];
      s.k_offset = 0;
      s.k = p.table_cols > 0 ? clamp64(length, 0, p.table_cols * p.page_size) : (length < 0 ? 0 : length);
    } else {
      std::int64_t begin, end;
      clipped_span(p.cu_seqlens_k, b, p.k_rows, &begin, &end);
      s.k_offset = begin;
      s.k = end - begin;
    }
  } else {
    s.k = p.seqlen_k;
  }
  if (p.seqused_k) s.k = clamp64(p.seqused_k[b], 0, s.k);
  return s;
}

// A block id read from the block table, clamped to the blocks of k/v.
__device__ __forceinline__ std::int64_t clipped_block(const AttentionParams& p, std::int32_t block) {
  return p.kv_blocks > 0 ? clamp64(block, 0, p.kv_blocks - 1) : block;
}

// kv_offset() of common/params.h with the block id clipped.
__device__ __forceinline__ std::int64_t clipped_kv_offset(const AttentionParams& p, const Operand& kv,
                                                          const SequenceLengths& s, std::int64_t b,
                                                          std::int64_t pos, std::int64_t head_kv) {
  if (p.block_table) {
    const std::int64_t block =
        clipped_block(p, p.block_table[b * p.block_table_batch_stride + pos / p.page_size]);
    return block * kv.batch_stride + (pos % p.page_size) * kv.row_stride + head_kv * kv.head_stride;
  }
  return s.k_batch * kv.batch_stride + pos * kv.row_stride + head_kv * kv.head_stride;
}

// A rotary-table row, clamped to the table.
__device__ __forceinline__ std::int64_t clipped_rotary_row(const AttentionParams& p, std::int64_t position) {
  return p.rotary_rows > 0 ? clamp64(position, 0, p.rotary_rows - 1) : position;
}

}  // namespace flashattn::detail::cuda_sm80
