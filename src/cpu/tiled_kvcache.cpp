// KV-cache pieces of the CPU tiled backend: appending k_new/v_new into the
// cache (dense or paged, any page size) and rotary embeddings.
#include <cstring>

#include "common/numeric.h"
#include "cpu/tiled.h"

namespace flashattn::detail::cpu_tiled {

void rotate_row(const AttentionParams& p, float* x, std::int64_t pos) noexcept {
  const std::int64_t half = p.rotary_dim / 2;
  const std::int64_t cos_row = pos * p.rotary_cos_row_stride, sin_row = pos * p.rotary_sin_row_stride;
  for (std::int64_t m = 0; m < half; ++m) {
    const double cos = load_float(p.rotary_cos, p.dtype, cos_row + m);
    const double sin = load_float(p.rotary_sin, p.dtype, sin_row + m);
    // GPT-J rotates adjacent pairs; GPT-NeoX pairs element m with m + rotary_dim/2.
    const std::int64_t a = p.rotary_interleaved ? 2 * m : m;
    const std::int64_t b = p.rotary_interleaved ? 2 * m + 1 : m + half;
    const double x0 = x[a], x1 = x[b];
    x[a] = round_to(p.dtype, static_cast<float>(x0 * cos - x1 * sin));
    x[b] = round_to(p.dtype, static_cast<float>(x0 * sin + x1 * cos));
  }
}

void append_new_kv(const AttentionParams& p, int threads) noexcept {
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  const std::int64_t d = p.head_dim, dv = p.head_dim_v;
  const std::int64_t rows = p.batch * p.seqlen_new * p.heads_kv;
  // Each (sequence, new token, kv head) writes its own cache row; sequences
  // sharing a cache row through cache_batch_idx would race, which the API
  // documents as undefined (as FlashAttention does).
  const int team =
      threads_for_work(static_cast<double>(rows * (d + dv)) * (p.rotary_dim > 0 ? 8.0 : 1.0), rows, threads);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
  for (std::int64_t index = 0; index < rows; ++index) {
    const std::int64_t head_kv = index % p.heads_kv;
    const std::int64_t t = index / p.heads_kv % p.seqlen_new;
    const std::int64_t b = index / (p.heads_kv * p.seqlen_new);
    const SequenceLengths seq = sequence_lengths(p, b);
    const std::int64_t pos = seq.cache_end + t;
    const std::int64_t k_src =
        b * p.k_new.batch_stride + t * p.k_new.row_stride + head_kv * p.k_new.head_stride;
    const std::int64_t v_src =
        b * p.v_new.batch_stride + t * p.v_new.row_stride + head_kv * p.v_new.head_stride;
    char* k_dst = static_cast<char*>(p.k.data) + kv_offset(p, p.k, seq, b, pos, head_kv) * elem;
    char* v_dst = static_cast<char*>(p.v.data) + kv_offset(p, p.v, seq, b, pos, head_kv) * elem;
    const char* k_row = static_cast<const char*>(p.k_new.data) + k_src * elem;
    std::memcpy(k_dst, k_row, static_cast<std::size_t>(d * elem));
    if (p.rotary_dim > 0) {
      // Rotate pair by pair from the (unmodified) source row, in double, rounding
      // once on the store into the cache (a cheap per-row step: exactness is free).
      const std::int64_t half = p.rotary_dim / 2;
      for (std::int64_t m = 0; m < half; ++m) {
        const std::int64_t a = p.rotary_interleaved ? 2 * m : m;
        const std::int64_t b2 = p.rotary_interleaved ? 2 * m + 1 : m + half;
        const double cos = load_float(p.rotary_cos, p.dtype, pos * p.rotary_cos_row_stride + m);
        const double sin = load_float(p.rotary_sin, p.dtype, pos * p.rotary_sin_row_stride + m);
        const double x0 = load_float(k_row, p.dtype, a), x1 = load_float(k_row, p.dtype, b2);
        store_float(k_dst, p.dtype, a, static_cast<float>(x0 * cos - x1 * sin));
        store_float(k_dst, p.dtype, b2, static_cast<float>(x0 * sin + x1 * cos));
      }
    }
    std::memcpy(v_dst, static_cast<const char*>(p.v_new.data) + v_src * elem,
                static_cast<std::size_t>(dv * elem));
  }
}

}  // namespace flashattn::detail::cpu_tiled
