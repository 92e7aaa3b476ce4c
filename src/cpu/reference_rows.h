// Row-level building blocks of the CPU reference, shared by its forward and backward.
//
// Everything is templated on the arithmetic type T: double for the oracle (run), float for the
// precision emulation (run_emulated), with Rounding<T> marking the points where a low-precision
// implementation rounds. Keeping one code path for both makes ref and ref_lowp differ only in
// precision, which is what the tolerance rule wants to measure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "backend.h"
#include "common/mask.h"
#include "common/numeric.h"
#include "common/params.h"
#include "common/philox.h"

namespace flashattn::detail::cpu_reference {

// Rounds intermediate values to `precision` when emulating; the identity for the oracle.
template <typename T>
struct Rounding {
  bool active = false;
  DType precision = DType::float32;
  T operator()(T x) const { return active ? static_cast<T>(round_to(precision, static_cast<float>(x))) : x; }
};

// Every scratch array is padded to a cache line so threads never share one, and is sized for
// double even when the emulation stores floats: one layout serves both, from shapes alone.
inline std::size_t scratch_bytes(std::int64_t count) {
  const std::size_t bytes = static_cast<std::size_t>(count > 0 ? count : 0) * sizeof(double);
  return (bytes + 63) / 64 * 64;
}

// Hands out consecutive scratch arrays from one thread's slice of the workspace.
class ScratchCarver {
 public:
  explicit ScratchCarver(void* base) : next_(static_cast<unsigned char*>(base)) {}
  template <typename T>
  T* take(std::int64_t count) {
    T* array = reinterpret_cast<T*>(next_);
    next_ += scratch_bytes(count);
    return array;
  }

 private:
  unsigned char* next_;
};

// Threads that fit in the caller's workspace: at most cpu_threads(ctx), fewer when the
// workspace was sized for fewer (0 when it cannot hold even one thread's scratch).
inline int threads_that_fit(const ExecutionContext& ctx, std::size_t shared_bytes,
                            std::size_t per_thread_bytes) {
  int threads = std::max(1, cpu_threads(ctx));
  if (per_thread_bytes == 0 && shared_bytes == 0) return threads;
  if (ctx.workspace == nullptr || ctx.workspace_bytes < shared_bytes + per_thread_bytes) return 0;
  if (per_thread_bytes == 0) return threads;
  const std::size_t fit = (ctx.workspace_bytes - shared_bytes) / per_thread_bytes;
  return static_cast<int>(std::min<std::size_t>(fit, static_cast<std::size_t>(threads)));
}

// Keys any one sequence may have: the bound workspace_size sizes the score rows for. For a KV
// cache the keys live in the cache, so its capacity bounds them whatever seqlen_k says.
inline std::int64_t key_bound(const AttentionParams& p) {
  return p.is_kvcache ? std::max(p.seqlen_k, p.cache_capacity) : p.seqlen_k;
}

// n elements of a float tensor of `dtype`, from element `offset`, converted to T.
template <typename T>
void load_row(const void* base, DType dtype, std::int64_t offset, std::int64_t n, T* dst) {
  switch (dtype) {
    case DType::float16: {
      const auto* src = static_cast<const std::uint16_t*>(base) + offset;
      for (std::int64_t c = 0; c < n; ++c) dst[c] = static_cast<T>(fp16_to_float(src[c]));
      return;
    }
    case DType::bfloat16: {
      const auto* src = static_cast<const std::uint16_t*>(base) + offset;
      for (std::int64_t c = 0; c < n; ++c) dst[c] = static_cast<T>(bf16_to_float(src[c]));
      return;
    }
    case DType::float32: {
      const auto* src = static_cast<const float*>(base) + offset;
      for (std::int64_t c = 0; c < n; ++c) dst[c] = static_cast<T>(src[c]);
      return;
    }
    case DType::int32:
    case DType::boolean:
      for (std::int64_t c = 0; c < n; ++c) dst[c] = static_cast<T>(load_float(base, dtype, offset + c));
      return;
  }
}

template <typename T>
void store_row(void* base, DType dtype, std::int64_t offset, std::int64_t n, const T* src) {
  for (std::int64_t c = 0; c < n; ++c) store_float(base, dtype, offset + c, static_cast<float>(src[c]));
}

template <typename T>
T dot(const T* a, const T* b, std::int64_t n) {
  T sum = 0;
  for (std::int64_t c = 0; c < n; ++c) sum += a[c] * b[c];
  return sum;
}

// Rotates the first p.rotary_dim entries of x as a token at `position`, in double from the
// dtype tables, and rounds every rotated entry to p.dtype (as it is stored or used).
// Interleaved (GPT-J) pairs (2m, 2m+1); otherwise (GPT-NeoX) pairs (m, m + rotary_dim/2).
template <typename T>
void apply_rotary(const AttentionParams& p, std::int64_t position, T* x) {
  const std::int64_t half = p.rotary_dim / 2;
  for (std::int64_t m = 0; m < half; ++m) {
    const double cos = load_float(p.rotary_cos, p.dtype, position * p.rotary_cos_row_stride + m);
    const double sin = load_float(p.rotary_sin, p.dtype, position * p.rotary_sin_row_stride + m);
    const std::int64_t first = p.rotary_interleaved ? 2 * m : m;
    const std::int64_t second = p.rotary_interleaved ? 2 * m + 1 : m + half;
    const double x0 = static_cast<double>(x[first]);
    const double x1 = static_cast<double>(x[second]);
    x[first] = static_cast<T>(round_to(p.dtype, static_cast<float>(x0 * cos - x1 * sin)));
    x[second] = static_cast<T>(round_to(p.dtype, static_cast<float>(x0 * sin + x1 * cos)));
  }
}

// Query row i of sequence b for `head`, rotated when the KV cache has rotary tables.
template <typename T>
void load_query(const AttentionParams& p, const SequenceLengths& s, std::int64_t b, std::int64_t i,
                std::int64_t head, T* q) {
  load_row(p.q.data, p.dtype, query_offset(p.q, s, b, i, head), p.head_dim, q);
  if (p.is_kvcache && p.rotary_dim > 0) apply_rotary(p, rotary_query_position(p, s, i), q);
}

// Final logits of query row i against its visible keys range.first..range.last:
// scores[jj] for key j = range.first + jj (-inf where a bias hides the key). With softcap, tanh_out[jj] keeps
// the tanh value the backward needs. `key(j)` returns a pointer to key j's row converted to T.
template <typename T, typename KeyRow>
void score_row(const AttentionParams& p, const SequenceLengths& s, std::int64_t b, std::int64_t head,
               std::int64_t i, const T* q, KeyRange range, KeyRow&& key, const Rounding<T>& rnd, T* scores,
               T* tanh_out) {
  const T scale = static_cast<T>(p.scale);
  const T softcap = static_cast<T>(p.softcap);
  const T slope = p.alibi_slopes ? static_cast<T>(p.alibi_slopes[b * p.alibi_batch_stride + head]) : T(0);
  for (std::int64_t j = range.first; j <= range.last; ++j) {
    T x = rnd(scale * dot(q, key(j), p.head_dim));
    if (p.softcap > 0.f) {
      const T t = std::tanh(x / softcap);
      if (tanh_out) tanh_out[j - range.first] = t;
      x = rnd(softcap * t);
    }
    if (p.alibi_slopes) {
      const std::int64_t distance = i + s.k - s.q - j;
      x = rnd(x - slope * static_cast<T>(distance < 0 ? -distance : distance));
    }
    if (p.bias) {
      const double bias = load_float(p.bias, p.bias_dtype, bias_row_offset(p, b, head, i) + j);
      if (p.bias_dtype == DType::boolean) {
        if (bias == 0.0) x = -std::numeric_limits<T>::infinity();
      } else {
        x = rnd(x + static_cast<T>(bias));
      }
    }
    scores[j - range.first] = x;
  }
}

// Softmax statistics of one row: max m, denominator l = sum e^{S-m} (+ e^{sink-m}), LSE.
template <typename T>
struct RowSoftmax {
  T max = 0;
  T denominator = 0;
  T lse = -std::numeric_limits<T>::infinity();
};

template <typename T>
RowSoftmax<T> row_softmax(const T* scores, std::int64_t n, const float* sink) {
  RowSoftmax<T> r;
  if (n == 0 && !sink) return r;  // no visible key, no sink: LSE -inf, P empty
  T m = sink ? static_cast<T>(*sink) : -std::numeric_limits<T>::infinity();
  for (std::int64_t jj = 0; jj < n; ++jj) m = std::max(m, scores[jj]);
  // Every visible key hidden by a bias, no sink: as no visible key (P = e^{-inf - 0} / 1 = 0).
  if (m == -std::numeric_limits<T>::infinity()) {
    r.denominator = 1;
    return r;
  }
  T l = sink ? std::exp(static_cast<T>(*sink) - m) : T(0);
  for (std::int64_t jj = 0; jj < n; ++jj) l += std::exp(scores[jj] - m);
  r.max = m;
  r.denominator = l;
  r.lse = m + std::log(l);
  return r;
}

// Dropout of element (b, head, i, j): the keep factor, 0 or 1/(1-p).
struct DropoutRule {
  bool active = false;
  std::uint32_t threshold = 0;
  double keep_scale = 1.0;

  explicit DropoutRule(const AttentionParams& p)
      : active(p.dropout_p > 0.f),
        threshold(dropout_threshold(p.dropout_p)),
        keep_scale(1.0 / (1.0 - p.dropout_p)) {}

  bool kept(const AttentionParams& p, std::int64_t b, std::int64_t head, std::int64_t i,
            std::int64_t j) const {
    return !active ||
           !dropout_is_dropped(p.dropout_seed, p.dropout_offset, threshold, b * p.heads + head, i, j);
  }
};

}  // namespace flashattn::detail::cpu_reference
