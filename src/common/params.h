// The validated, normalised description of one attention call.
//
// The API layer (src/api) checks the caller's TensorViews and fills these
// plain-old-data structs; every backend (CPU reference, CPU tiled, CUDA)
// consumes only these. Batched, variable-length and KV-cache forwards all
// become one AttentionParams: the per-sequence lengths and row addresses are
// resolved by the helpers below, so a backend writes its algorithm once.
//
// All strides are in elements. All pointers are on the device the call runs on.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "common/mask.h"
#include "flashattn/tensor.h"

namespace flashattn::detail {

// Address arithmetic for a (batch-or-block, row, head, dim) operand.
struct Operand {
  void* data = nullptr;
  std::int64_t batch_stride = 0;  // varlen: 0 (rows are global); paged: stride of one block
  std::int64_t row_stride = 0;
  std::int64_t head_stride = 0;
};

struct AttentionParams {
  DType dtype = DType::float32;  // of q, k, v, out (and k_new, v_new, rotary tables)

  std::int64_t batch = 0;       // number of sequences
  std::int64_t heads = 0;       // h
  std::int64_t heads_kv = 0;    // hk
  std::int64_t head_dim = 0;    // d
  std::int64_t head_dim_v = 0;  // dv
  // Batched: the lengths. Varlen/KV cache: upper bounds on every sequence's
  // lengths (max_seqlen_*), for grid sizing; the true ones come from seqlens().
  std::int64_t seqlen_q = 0;
  std::int64_t seqlen_k = 0;

  Operand q, k, v, out;
  float* lse = nullptr;  // optional
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 0;

  // Variable length (all optional). With cu_seqlens_q, q/out/lse rows are
  // global: sequence b's row i is row cu_seqlens_q[b] + i.
  const std::int32_t* cu_seqlens_q = nullptr;
  const std::int32_t* cu_seqlens_k = nullptr;
  const std::int32_t* seqused_q = nullptr;
  const std::int32_t* seqused_k = nullptr;

  // Paged K/V: k.batch_stride/v.batch_stride step one block of page_size rows.
  const std::int32_t* block_table = nullptr;
  std::int64_t block_table_batch_stride = 0;
  std::int64_t page_size = 0;

  // KV cache: keys of sequence b sit at cache positions [leftpad, cache_seqlens[b] + seqlen_new).
  bool is_kvcache = false;
  const std::int32_t* cache_seqlens = nullptr;  // null: every sequence fills the cache (no append)
  const std::int32_t* cache_batch_idx = nullptr;
  const std::int32_t* leftpad_k = nullptr;
  std::int64_t cache_capacity = 0;  // s_cache (dense) or max_blocks * page_size (paged)
  Operand k_new, v_new;             // appended before attending when k_new.data != nullptr
  std::int64_t seqlen_new = 0;
  const void* rotary_cos = nullptr;
  const void* rotary_sin = nullptr;
  std::int64_t rotary_dim = 0;  // 0: no rotary
  std::int64_t rotary_cos_row_stride = 0, rotary_sin_row_stride = 0;
  bool rotary_interleaved = true;
  int num_splits = 1;  // resolved (>= 1) by the backend's heuristic before launch

  // Extents of the operands, so that a backend which cannot validate index
  // contents (CUDA: api/validate.h) can clip every index it reads. 0: not set.
  std::int64_t q_rows = 0;       // varlen: rows of q/out (total_q)
  std::int64_t k_rows = 0;       // dense varlen: rows of k/v (total_k)
  std::int64_t kv_blocks = 0;    // paged: blocks of k/v (num_blocks); dense KV cache: b_cache
  std::int64_t table_cols = 0;   // paged: entries per block_table row (max_blocks_per_seq)
  std::int64_t rotary_rows = 0;  // KV cache with rotary: rows of rotary_cos/sin (s_rotary)

  // Options, resolved.
  float scale = 1.f;
  float softcap = 0.f;  // 0: off
  MaskParams mask{};
  const float* alibi_slopes = nullptr;
  std::int64_t alibi_batch_stride = 0;  // 0 for (h) slopes
  float dropout_p = 0.f;
  std::uint64_t dropout_seed = 0, dropout_offset = 0;
  const float* sink = nullptr;
  // Score bias or mask (AttentionOptions::bias): element (b, head, i, j) at
  // b * bias_batch_stride + head * bias_head_stride + i * bias_row_stride + j; a broadcast dim has
  // stride 0. bias_dtype fp16 / bf16 / fp32 (added) or boolean (false hides the key).
  const void* bias = nullptr;
  DType bias_dtype = DType::float32;
  std::int64_t bias_batch_stride = 0, bias_head_stride = 0, bias_row_stride = 0;
};

// Element offset of query row i's bias row (batched calls only), for (sequence b, query head).
FLASHATTN_HD std::int64_t bias_row_offset(const AttentionParams& p, std::int64_t b, std::int64_t head,
                                          std::int64_t i) {
  return b * p.bias_batch_stride + head * p.bias_head_stride + i * p.bias_row_stride;
}

struct BackwardParams : AttentionParams {
  Operand dout, dq, dk, dv;
  float* dsink = nullptr;
  bool deterministic = false;
};

struct CombineParams {
  std::int64_t splits = 0, batch = 0, seqlen = 0, heads = 0, head_dim_v = 0;
  const float* out_partial = nullptr;
  std::int64_t op_split_stride = 0, op_batch_stride = 0, op_row_stride = 0, op_head_stride = 0;
  const float* lse_partial = nullptr;
  std::int64_t lp_split_stride = 0, lp_batch_stride = 0, lp_row_stride = 0, lp_head_stride = 0;
  DType out_dtype = DType::float32;
  Operand out;
  float* lse = nullptr;
  std::int64_t lse_batch_stride = 0, lse_row_stride = 0, lse_head_stride = 0;
};

// ----------------------------------------------------------------------------
// Per-sequence resolution.

struct SequenceLengths {
  std::int64_t q = 0;          // queries taking part
  std::int64_t k = 0;          // keys taking part (after append, without left padding)
  std::int64_t q_offset = 0;   // global row of query 0 (varlen) or 0
  std::int64_t k_offset = 0;   // global row of key 0 (varlen), or cache position of key 0 (leftpad)
  std::int64_t k_batch = 0;    // batch index into k/v (cache_batch_idx) for dense layouts
  std::int64_t cache_end = 0;  // KV cache: position where new keys are appended
};

FLASHATTN_HD SequenceLengths sequence_lengths(const AttentionParams& p, std::int64_t b) {
  SequenceLengths s;
  if (p.cu_seqlens_q) {
    s.q_offset = p.cu_seqlens_q[b];
    s.q = p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b];
  } else {
    s.q = p.seqlen_q;
  }
  if (p.seqused_q) s.q = p.seqused_q[b];

  s.k_batch = p.cache_batch_idx ? p.cache_batch_idx[b] : b;
  if (p.is_kvcache) {
    const std::int64_t leftpad = p.leftpad_k ? p.leftpad_k[b] : 0;
    s.cache_end = p.cache_seqlens ? p.cache_seqlens[b] : p.cache_capacity;
    s.k_offset = leftpad;
    s.k = s.cache_end + (p.k_new.data ? p.seqlen_new : 0) - leftpad;
  } else if (p.cu_seqlens_k) {
    // Paged varlen: keys start at block 0 of the sequence's table row; dense varlen: global rows.
    s.k_offset = p.block_table ? 0 : p.cu_seqlens_k[b];
    s.k = p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b];
  } else {
    s.k = p.seqlen_k;
  }
  if (p.seqused_k) s.k = p.seqused_k[b];
  return s;
}

// Element offset of (sequence b, key position pos, kv head) in a K or V operand,
// where pos is a cache position (leftpad included) or, for varlen, a global row.
FLASHATTN_HD std::int64_t kv_offset(const AttentionParams& p, const Operand& kv, const SequenceLengths& s,
                                    std::int64_t b, std::int64_t pos, std::int64_t head_kv) {
  if (p.block_table) {
    const std::int64_t block = p.block_table[b * p.block_table_batch_stride + pos / p.page_size];
    return block * kv.batch_stride + (pos % p.page_size) * kv.row_stride + head_kv * kv.head_stride;
  }
  return s.k_batch * kv.batch_stride + pos * kv.row_stride + head_kv * kv.head_stride;
}

// Element offset of key j (0-based within the sequence) of sequence b.
FLASHATTN_HD std::int64_t key_offset(const AttentionParams& p, const Operand& kv, const SequenceLengths& s,
                                     std::int64_t b, std::int64_t j, std::int64_t head_kv) {
  return kv_offset(p, kv, s, b, s.k_offset + j, head_kv);
}

// Element offset of query row i of sequence b in q/out-shaped operands.
FLASHATTN_HD std::int64_t query_offset(const Operand& op, const SequenceLengths& s, std::int64_t b,
                                       std::int64_t i, std::int64_t head) {
  return b * op.batch_stride + (s.q_offset + i) * op.row_stride + head * op.head_stride;
}

FLASHATTN_HD std::int64_t lse_offset(const AttentionParams& p, const SequenceLengths& s, std::int64_t b,
                                     std::int64_t i, std::int64_t head) {
  return b * p.lse_batch_stride + head * p.lse_head_stride + (s.q_offset + i) * p.lse_row_stride;
}

FLASHATTN_HD std::int64_t kv_head_of(const AttentionParams& p, std::int64_t head) {
  return head / (p.heads / p.heads_kv);
}

// Rotary position of query row i (KV cache only): the new tokens' cache
// positions when causal/windowed, else every query sits at cache_end.
FLASHATTN_HD std::int64_t rotary_query_position(const AttentionParams& p, const SequenceLengths& s,
                                                std::int64_t i) {
  const bool local = p.mask.window_left >= 0 || p.mask.window_right >= 0;
  return s.cache_end + (local ? i : 0);
}

}  // namespace flashattn::detail
