// CPU reference forward: batched, varlen, paged and KV-cache attention from one AttentionParams,
// one whole score row at a time (see reference.h for the choices it makes).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu/reference.h"
#include "cpu/reference_rows.h"

namespace flashattn::detail::cpu_reference {
namespace {

// Per-thread scratch of the forward: the query row, one key/value row, the score row, the
// output accumulator.
std::size_t forward_thread_bytes(const AttentionParams& p) {
  return scratch_bytes(p.head_dim) + scratch_bytes(std::max(p.head_dim, p.head_dim_v)) +
         scratch_bytes(key_bound(p)) + scratch_bytes(p.head_dim_v);
}

// Checks the per-sequence lengths against the bounds the workspace was sized with, so a bad
// params struct reports an error instead of writing past a scratch row or a cache.
Status check_sequences(const AttentionParams& p, std::int64_t* max_queries) {
  *max_queries = 0;
  const std::int64_t keys_max = key_bound(p);
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const SequenceLengths s = sequence_lengths(p, b);
    if (s.q < 0 || s.k < 0 || s.k > keys_max) {
      return Status::error(ErrorCode::internal,
                           "cpu_reference: sequence %lld has %lld queries and %lld keys; keys must lie in "
                           "[0, %lld] (the bound the workspace is sized for)",
                           static_cast<long long>(b), static_cast<long long>(s.q),
                           static_cast<long long>(s.k), static_cast<long long>(keys_max));
    }
    if (p.is_kvcache && p.k_new.data && s.cache_end + p.seqlen_new > p.cache_capacity) {
      return Status::error(ErrorCode::internal,
                           "cpu_reference: sequence %lld appends %lld keys at cache position %lld, past the "
                           "cache capacity %lld",
                           static_cast<long long>(b), static_cast<long long>(p.seqlen_new),
                           static_cast<long long>(s.cache_end), static_cast<long long>(p.cache_capacity));
    }
    *max_queries = std::max(*max_queries, s.q);
  }
  return Status();
}

// Writes new row t of sequence b, kv head hk into the cache at position cache_end + t, k rotated
// at that position (every stored value is rounded to the cache dtype). `row` is scratch.
template <typename T>
void append_to_cache(const AttentionParams& p, std::int64_t b, std::int64_t t, std::int64_t hk, T* row) {
  const SequenceLengths s = sequence_lengths(p, b);
  const std::int64_t position = s.cache_end + t;
  load_row(p.k_new.data, p.dtype,
           b * p.k_new.batch_stride + t * p.k_new.row_stride + hk * p.k_new.head_stride, p.head_dim, row);
  if (p.rotary_dim > 0) apply_rotary(p, position, row);
  store_row(p.k.data, p.dtype, kv_offset(p, p.k, s, b, position, hk), p.head_dim, row);
  load_row(p.v_new.data, p.dtype,
           b * p.v_new.batch_stride + t * p.v_new.row_stride + hk * p.v_new.head_stride, p.head_dim_v, row);
  store_row(p.v.data, p.dtype, kv_offset(p, p.v, s, b, position, hk), p.head_dim_v, row);
}

template <typename T>
Status forward(const AttentionParams& p, const ExecutionContext& ctx, const Rounding<T>& rnd) {
  std::int64_t max_queries = 0;
  FLASHATTN_RETURN_IF_ERROR(check_sequences(p, &max_queries));
  const std::size_t per_thread = forward_thread_bytes(p);
  const int threads = threads_that_fit(ctx, 0, per_thread);
  if (threads == 0) {
    return Status::error(ErrorCode::internal,
                         "cpu_reference: workspace of %zu bytes is below the %zu one thread needs",
                         ctx.workspace_bytes, per_thread);
  }

  const std::int64_t d = p.head_dim, dv = p.head_dim_v;
  const DropoutRule dropout(p);
#pragma omp parallel num_threads(threads)
  {
    ScratchCarver carver(static_cast<unsigned char*>(ctx.workspace) + omp_get_thread_num() * per_thread);
    T* const q = carver.take<T>(d);
    T* const row = carver.take<T>(std::max(d, dv));
    T* const scores = carver.take<T>(key_bound(p));
    T* const acc = carver.take<T>(dv);

    // The append completes for every sequence (the implicit barrier of this loop) before any
    // row attends: a sequence's own new keys must be visible to all of its queries.
    if (p.is_kvcache && p.k_new.data) {
#pragma omp for collapse(3) schedule(static)
      for (std::int64_t b = 0; b < p.batch; ++b) {
        for (std::int64_t t = 0; t < p.seqlen_new; ++t) {
          for (std::int64_t hk = 0; hk < p.heads_kv; ++hk) append_to_cache(p, b, t, hk, row);
        }
      }
    }

#pragma omp for collapse(3) schedule(dynamic, 4)
    for (std::int64_t b = 0; b < p.batch; ++b) {
      for (std::int64_t head = 0; head < p.heads; ++head) {
        for (std::int64_t i = 0; i < max_queries; ++i) {
          const SequenceLengths s = sequence_lengths(p, b);
          if (i >= s.q) continue;
          const std::int64_t hk = kv_head_of(p, head);
          load_query(p, s, b, i, head, q);
          const KeyRange range = visible_keys(p.mask, i, s.q, s.k);
          const std::int64_t n = range.empty() ? 0 : range.last - range.first + 1;
          auto key = [&](std::int64_t j) {
            load_row(p.k.data, p.dtype, key_offset(p, p.k, s, b, j, hk), d, row);
            return static_cast<const T*>(row);
          };
          score_row(p, s, b, head, i, q, range, key, rnd, scores, static_cast<T*>(nullptr));
          const RowSoftmax<T> softmax = row_softmax(scores, n, p.sink ? p.sink + head : nullptr);
          if (p.lse) p.lse[lse_offset(p, s, b, i, head)] = static_cast<float>(softmax.lse);

          std::fill_n(acc, dv, T(0));
          for (std::int64_t jj = 0; jj < n; ++jj) {
            const std::int64_t j = range.first + jj;
            if (!dropout.kept(p, b, head, i, j)) continue;
            T prob = rnd(std::exp(scores[jj] - softmax.max) / softmax.denominator);
            if (dropout.active) prob = rnd(prob * static_cast<T>(dropout.keep_scale));
            load_row(p.v.data, p.dtype, key_offset(p, p.v, s, b, j, hk), dv, row);
            for (std::int64_t c = 0; c < dv; ++c) acc[c] += prob * row[c];
          }
          for (std::int64_t c = 0; c < dv; ++c) acc[c] = rnd(acc[c]);
          store_row(p.out.data, p.dtype, query_offset(p.out, s, b, i, head), dv, acc);
        }
      }
    }
  }
  return Status();
}

}  // namespace

const char* unsupported_reason(const AttentionParams& p) noexcept {
  // Tensors live on the CPU by the time the API picks this backend; what remains are params
  // the math cannot mean.
  if (p.dtype == DType::int32)
    return "cpu_reference: attention operands must be fp16, bf16 or fp32, not int32";
  if (p.heads_kv <= 0 || p.heads % p.heads_kv != 0)
    return "cpu_reference: heads must be a multiple of heads_kv";
  if (p.block_table && p.page_size <= 0) return "cpu_reference: a paged layout needs page_size >= 1";
  if (p.rotary_dim % 2 != 0 || p.rotary_dim > p.head_dim) {
    return "cpu_reference: rotary_dim must be even and at most head_dim";
  }
  if (p.rotary_dim > 0 && (!p.rotary_cos || !p.rotary_sin))
    return "cpu_reference: rotary_dim > 0 needs cos/sin tables";
  return nullptr;
}

std::size_t workspace_size(const AttentionParams& p, int threads) noexcept {
  return static_cast<std::size_t>(std::max(threads, 1)) * forward_thread_bytes(p);
}

Status run(const AttentionParams& p, const ExecutionContext& ctx) noexcept {
  return forward(p, ctx, Rounding<double>{});
}

Status run_emulated(const AttentionParams& p, const ExecutionContext& ctx, DType precision) noexcept {
  return forward(p, ctx, Rounding<float>{precision != DType::float32, precision});
}

}  // namespace flashattn::detail::cpu_reference
