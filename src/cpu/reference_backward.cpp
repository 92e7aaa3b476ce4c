// CPU reference backward: analytic gradients of batched and varlen attention, recomputing the
// forward's P, LSE and O in the working precision (see reference.h for why they are not read).
//
// With O_i = sum_j P_ij Z_ij v_j (Z the dropout keep factor, 0 or 1/(1-p)) and
// P_ij = e^{S_ij - LSE_i}:
//   dV_j  = sum_i P_ij Z_ij dO_i
//   dP_ij = Z_ij dO_i . v_j
//   dS_ij = P_ij (dP_ij - D_i),   D_i = dO_i . O_i = sum_j P_ij dP_ij
//   softcap: dS_ij *= 1 - tanh^2 (d of c*tanh(x/c) by x)
//   dQ_i  = scale * sum_j dS_ij k_j,   dK_j = scale * sum_i dS_ij q_i
//   dsink_h = -sum_{b,i} e^{sink_h - LSE_i} D_i   (the sink's share of the denominator)
// Work is split over (sequence, kv head): such a task owns every dq row of its q heads and
// every dk/dv row of its kv head, so no two threads write one row and dk/dv accumulate the
// GQA group in one place without atomics.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "cpu/reference.h"
#include "cpu/reference_rows.h"

namespace flashattn::detail::cpu_reference {
namespace {

// Per-thread scratch: q, dO, O and dq rows; score, tanh and dP rows; the task's K and V
// converted once; the task's dK and dV accumulators.
std::size_t backward_thread_bytes(const BackwardParams& p) {
  const std::int64_t d = p.head_dim, dv = p.head_dim_v, sk = p.seqlen_k;
  return scratch_bytes(d) + 2 * scratch_bytes(dv) + scratch_bytes(d) + 3 * scratch_bytes(sk) +
         2 * scratch_bytes(sk * d) + 2 * scratch_bytes(sk * dv);
}

// Shared scratch: one dsink partial per (sequence, head), summed in a fixed order afterwards.
std::size_t backward_shared_bytes(const BackwardParams& p) {
  return p.sink ? scratch_bytes(p.batch * p.heads) : 0;
}

// Rows a sequence occupies in its tensors, used or not (seqused marks a prefix as used).
std::int64_t allocated_queries(const BackwardParams& p, std::int64_t b) {
  return p.cu_seqlens_q ? p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b] : p.seqlen_q;
}
std::int64_t allocated_keys(const BackwardParams& p, std::int64_t b) {
  return p.cu_seqlens_k ? p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b] : p.seqlen_k;
}

Status check_sequences(const BackwardParams& p) {
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const SequenceLengths s = sequence_lengths(p, b);
    if (s.q < 0 || s.k < 0 || s.k > p.seqlen_k || s.q > allocated_queries(p, b) ||
        s.k > allocated_keys(p, b)) {
      return Status::error(
          ErrorCode::internal,
          "cpu_reference: backward sequence %lld uses %lld queries of %lld and %lld keys of %lld "
          "(bound %lld)",
          static_cast<long long>(b), static_cast<long long>(s.q),
          static_cast<long long>(allocated_queries(p, b)), static_cast<long long>(s.k),
          static_cast<long long>(allocated_keys(p, b)), static_cast<long long>(p.seqlen_k));
    }
  }
  return Status();
}

template <typename T>
struct BackwardScratch {
  T *q, *dout, *out, *dq, *scores, *tanh, *dprob, *k, *v, *dk, *dv;

  BackwardScratch(ScratchCarver& carver, std::int64_t d, std::int64_t dv_dim, std::int64_t sk) {
    q = carver.take<T>(d);
    dout = carver.take<T>(dv_dim);
    out = carver.take<T>(dv_dim);
    dq = carver.take<T>(d);
    scores = carver.take<T>(sk);
    tanh = carver.take<T>(sk);
    dprob = carver.take<T>(sk);
    k = carver.take<T>(sk * d);
    dk = carver.take<T>(sk * d);
    v = carver.take<T>(sk * dv_dim);
    dv = carver.take<T>(sk * dv_dim);
  }
};

// Gradients of one (sequence b, kv head hk) task. Returns nothing: every write is to rows the
// task owns; dsink partials go to dsink_parts[b * heads + head].
template <typename T>
void backward_task(const BackwardParams& p, std::int64_t b, std::int64_t hk, const Rounding<T>& rnd,
                   BackwardScratch<T>& w, T* dsink_parts) {
  const std::int64_t d = p.head_dim, dv = p.head_dim_v;
  const SequenceLengths s = sequence_lengths(p, b);
  const DropoutRule dropout(p);
  const T scale = static_cast<T>(p.scale);
  const T keep_scale = static_cast<T>(dropout.keep_scale);

  for (std::int64_t j = 0; j < s.k; ++j) {
    load_row(p.k.data, p.dtype, key_offset(p, p.k, s, b, j, hk), d, w.k + j * d);
    load_row(p.v.data, p.dtype, key_offset(p, p.v, s, b, j, hk), dv, w.v + j * dv);
  }
  std::fill_n(w.dk, s.k * d, T(0));
  std::fill_n(w.dv, s.k * dv, T(0));

  const std::int64_t group = p.heads / p.heads_kv;
  for (std::int64_t head = hk * group; head < (hk + 1) * group; ++head) {
    T dsink = 0;
    for (std::int64_t i = 0; i < s.q; ++i) {
      load_row(p.q.data, p.dtype, query_offset(p.q, s, b, i, head), d, w.q);
      load_row(p.dout.data, p.dtype, query_offset(p.dout, s, b, i, head), dv, w.dout);
      const KeyRange range = visible_keys(p.mask, i, s.q, s.k);
      const std::int64_t n = range.empty() ? 0 : range.last - range.first + 1;
      auto key = [&](std::int64_t j) { return static_cast<const T*>(w.k + j * d); };
      score_row(p, s, b, head, i, w.q, range, key, rnd, w.scores, w.tanh);
      RowSoftmax<T> softmax = row_softmax(w.scores, n, p.sink ? p.sink + head : nullptr);
      // The backward is a function of what it is handed: P comes from the forward's LSE and D
      // from the forward's output when they are given (see reference.h).
      if (p.lse) softmax.lse = static_cast<T>(p.lse[lse_offset(p, s, b, i, head)]);

      // scores[] becomes P, dprob[] the keep factor Z per key; then O is recomputed from them.
      std::fill_n(w.out, dv, T(0));
      for (std::int64_t jj = 0; jj < n; ++jj) {
        const std::int64_t j = range.first + jj;
        // A key the bias hides has P = 0, also in a row whose every key is hidden (LSE -inf).
        w.scores[jj] = w.scores[jj] == -std::numeric_limits<T>::infinity()
                           ? T(0)
                           : rnd(std::exp(w.scores[jj] - softmax.lse));
        w.dprob[jj] = dropout.kept(p, b, head, i, j) ? (dropout.active ? keep_scale : T(1)) : T(0);
        if (w.dprob[jj] == T(0)) continue;
        const T prob = dropout.active ? rnd(w.scores[jj] * w.dprob[jj]) : w.scores[jj];
        for (std::int64_t c = 0; c < dv; ++c) w.out[c] += prob * w.v[j * dv + c];
      }
      for (std::int64_t c = 0; c < dv; ++c) w.out[c] = rnd(w.out[c]);
      if (p.out.data) load_row(p.out.data, p.dtype, query_offset(p.out, s, b, i, head), dv, w.out);
      const T delta = dot(w.dout, w.out, dv);
      if (p.sink) dsink -= std::exp(static_cast<T>(p.sink[head]) - softmax.lse) * delta;

      std::fill_n(w.dq, d, T(0));
      for (std::int64_t jj = 0; jj < n; ++jj) {
        const std::int64_t j = range.first + jj;
        const T keep = w.dprob[jj];
        const T prob = w.scores[jj];
        if (keep != T(0)) {
          const T dropped_prob = dropout.active ? rnd(prob * keep) : prob;
          for (std::int64_t c = 0; c < dv; ++c) w.dv[j * dv + c] += dropped_prob * w.dout[c];
        }
        const T dprob = keep == T(0) ? T(0) : rnd(dot(w.dout, w.v + j * dv, dv) * keep);
        T dscore = rnd(prob * (dprob - delta));
        if (p.softcap > 0.f) dscore = rnd(dscore * (T(1) - w.tanh[jj] * w.tanh[jj]));
        for (std::int64_t c = 0; c < d; ++c) {
          w.dq[c] += dscore * w.k[j * d + c];
          w.dk[j * d + c] += dscore * w.q[c];
        }
      }
      for (std::int64_t c = 0; c < d; ++c) w.dq[c] = rnd(scale * w.dq[c]);
      store_row(p.dq.data, p.dtype, query_offset(p.dq, s, b, i, head), d, w.dq);
    }
    // Rows past the used prefix (seqused) get defined gradients: zero.
    for (std::int64_t i = s.q; i < allocated_queries(p, b); ++i) {
      const std::int64_t offset = query_offset(p.dq, s, b, i, head);
      for (std::int64_t c = 0; c < d; ++c) store_float(p.dq.data, p.dtype, offset + c, 0.f);
    }
    if (dsink_parts) dsink_parts[b * p.heads + head] = dsink;
  }

  for (std::int64_t j = 0; j < s.k; ++j) {
    for (std::int64_t c = 0; c < d; ++c) w.dk[j * d + c] = rnd(scale * w.dk[j * d + c]);
    for (std::int64_t c = 0; c < dv; ++c) w.dv[j * dv + c] = rnd(w.dv[j * dv + c]);
    store_row(p.dk.data, p.dtype, key_offset(p, p.dk, s, b, j, hk), d, w.dk + j * d);
    store_row(p.dv.data, p.dtype, key_offset(p, p.dv, s, b, j, hk), dv, w.dv + j * dv);
  }
  for (std::int64_t j = s.k; j < allocated_keys(p, b); ++j) {
    const std::int64_t dk_offset = key_offset(p, p.dk, s, b, j, hk);
    const std::int64_t dv_offset = key_offset(p, p.dv, s, b, j, hk);
    for (std::int64_t c = 0; c < d; ++c) store_float(p.dk.data, p.dtype, dk_offset + c, 0.f);
    for (std::int64_t c = 0; c < dv; ++c) store_float(p.dv.data, p.dtype, dv_offset + c, 0.f);
  }
}

template <typename T>
Status backward(const BackwardParams& p, const ExecutionContext& ctx, const Rounding<T>& rnd) {
  FLASHATTN_RETURN_IF_ERROR(check_sequences(p));
  const std::size_t shared = backward_shared_bytes(p);
  const std::size_t per_thread = backward_thread_bytes(p);
  const int threads = threads_that_fit(ctx, shared, per_thread);
  if (threads == 0) {
    return Status::error(ErrorCode::internal,
                         "cpu_reference: workspace of %zu bytes is below the %zu one thread needs",
                         ctx.workspace_bytes, shared + per_thread);
  }
  auto* const base = static_cast<unsigned char*>(ctx.workspace);
  T* const dsink_parts = p.sink ? reinterpret_cast<T*>(base) : nullptr;

#pragma omp parallel num_threads(threads)
  {
    ScratchCarver carver(base + shared + omp_get_thread_num() * per_thread);
    BackwardScratch<T> scratch(carver, p.head_dim, p.head_dim_v, p.seqlen_k);
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t b = 0; b < p.batch; ++b) {
      for (std::int64_t hk = 0; hk < p.heads_kv; ++hk) backward_task(p, b, hk, rnd, scratch, dsink_parts);
    }
  }

  if (p.sink && p.dsink) {
    for (std::int64_t head = 0; head < p.heads; ++head) {
      T sum = 0;
      for (std::int64_t b = 0; b < p.batch; ++b) sum += dsink_parts[b * p.heads + head];
      p.dsink[head] = static_cast<float>(sum);
    }
  }
  return Status();
}

}  // namespace

const char* unsupported_reason(const BackwardParams& p) noexcept {
  if (p.is_kvcache || p.block_table)
    return "cpu_reference: backward over a KV cache or paged K/V is not defined";
  if (p.dtype == DType::int32)
    return "cpu_reference: attention operands must be fp16, bf16 or fp32, not int32";
  if (p.heads_kv <= 0 || p.heads % p.heads_kv != 0)
    return "cpu_reference: heads must be a multiple of heads_kv";
  return nullptr;
}

std::size_t workspace_size(const BackwardParams& p, int threads) noexcept {
  return backward_shared_bytes(p) + static_cast<std::size_t>(std::max(threads, 1)) * backward_thread_bytes(p);
}

Status run(const BackwardParams& p, const ExecutionContext& ctx) noexcept {
  return backward(p, ctx, Rounding<double>{});
}

Status run_emulated(const BackwardParams& p, const ExecutionContext& ctx, DType precision) noexcept {
  return backward(p, ctx, Rounding<float>{precision != DType::float32, precision});
}

}  // namespace flashattn::detail::cpu_reference
