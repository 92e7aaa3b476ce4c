// The KV-cache append, one element at a time: k_new / v_new written into the cache at each sequence's
// cache_seqlens (k_new rotated at its position when the call has rotary tables). Device code shared by
// cuda_sm80's append kernel (kvcache_kernels.cu) and cuda_sm90's prepare kernel (forward_launch.h), which
// does the append in the launch it already makes (no kernel of its own per decode step).
#pragma once

#include <cstdint>

#include "common/params.h"
#include "cuda/sm80/clipped_indices.h"
#include "cuda/sm80/element_convert.h"

namespace flashattn::detail::cuda_sm80 {

// Element c of row `src` rotated at table row `position` (GPT-J pairs (2m, 2m+1)
// when interleaved, GPT-NeoX pairs (m, m + rotary_dim/2) otherwise), in fp32.
template <typename Element>
__device__ __forceinline__ float rotated(const AttentionParams& p, const Element* src, std::int64_t c,
                                         std::int64_t position) {
  const float x = to_float(src[c]);
  if (c >= p.rotary_dim) return x;
  const std::int64_t row = clipped_rotary_row(p, position);
  const auto* cos_table = static_cast<const Element*>(p.rotary_cos) + row * p.rotary_cos_row_stride;
  const auto* sin_table = static_cast<const Element*>(p.rotary_sin) + row * p.rotary_sin_row_stride;
  const std::int64_t half = p.rotary_dim / 2;
  std::int64_t m, partner;
  bool first;
  if (p.rotary_interleaved) {
    m = c / 2, first = (c % 2) == 0, partner = first ? c + 1 : c - 1;
  } else {
    first = c < half, m = first ? c : c - half, partner = first ? c + half : c - half;
  }
  const float cos_m = to_float(cos_table[m]);
  const float sin_m = to_float(sin_table[m]);
  const float y = to_float(src[partner]);
  return first ? x * cos_m - y * sin_m : y * sin_m + x * cos_m;
}

// Elements the append writes: every new row's k columns, then its v columns, per kv head.
__host__ __device__ __forceinline__ std::int64_t append_kv_elements(const AttentionParams& p) {
  if (!p.is_kvcache || p.k_new.data == nullptr || p.seqlen_new <= 0) return 0;
  return p.batch * p.seqlen_new * p.heads_kv * (p.head_dim + p.head_dim_v);
}

// Element idx of append_kv_elements(p): one thread per element, any grid.
template <typename Element>
__device__ __forceinline__ void append_kv_element(const AttentionParams& p, std::int64_t idx) {
  const std::int64_t width = p.head_dim + p.head_dim_v;  // k columns, then v columns
  const std::int64_t c = idx % width;
  std::int64_t rest = idx / width;
  const std::int64_t head = rest % p.heads_kv;
  rest /= p.heads_kv;
  const std::int64_t t = rest % p.seqlen_new;
  const std::int64_t b = rest / p.seqlen_new;
  const SequenceLengths seq = clipped_sequence_lengths(p, b);
  const std::int64_t position = seq.cache_end + t;
  if (c < p.head_dim) {
    const auto* src = static_cast<const Element*>(p.k_new.data) + b * p.k_new.batch_stride +
                      t * p.k_new.row_stride + head * p.k_new.head_stride;
    auto* dst = static_cast<Element*>(p.k.data) + clipped_kv_offset(p, p.k, seq, b, position, head);
    dst[c] = p.rotary_dim > 0 ? from_float<Element>(rotated(p, src, c, position)) : src[c];
  } else {
    const std::int64_t cv = c - p.head_dim;
    const auto* src = static_cast<const Element*>(p.v_new.data) + b * p.v_new.batch_stride +
                      t * p.v_new.row_stride + head * p.v_new.head_stride;
    auto* dst = static_cast<Element*>(p.v.data) + clipped_kv_offset(p, p.v, seq, b, position, head);
    dst[cv] = src[cv];
  }
}

}  // namespace flashattn::detail::cuda_sm80
