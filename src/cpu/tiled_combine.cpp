// Merging split-KV partial results: the public combine operation and the
// forward's own split-KV epilogue. Each partial (O_s, LSE_s) is already
// normalised over its keys, so
//   LSE = log sum_s e^{LSE_s} (+ e^{sink}),   O = sum_s e^{LSE_s - LSE} O_s.
// Weights are formed in double relative to the largest LSE: a handful of
// exponentials per row, and the merged LSE stays exact to fp32.
#include <omp.h>

#include <cmath>
#include <limits>

#include "common/numeric.h"
#include "cpu/tiled.h"
#include "cpu/tiled_kernels.h"

namespace flashattn::detail::cpu_tiled {
namespace {

// One row: partial LSEs lse_at(s), partial rows out_at(s)[c]. Writes the merged
// row (dv floats) to merged and returns the merged LSE. A row whose splits (and
// sink) are all -inf merges to 0 and -inf. merged may alias out_at(0): every
// element is read from all splits before it is written.
template <class LseAt, class OutAt>
float combine_row(std::int64_t splits, std::int64_t dv, LseAt lse_at, OutAt out_at, const float* sink,
                  float* merged) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  double top = sink ? static_cast<double>(*sink) : kNegInf;
  for (std::int64_t s = 0; s < splits; ++s) top = std::max(top, static_cast<double>(lse_at(s)));
  if (top == kNegInf) {
    for (std::int64_t c = 0; c < dv; ++c) merged[c] = 0.f;
    return -std::numeric_limits<float>::infinity();
  }
  double total = sink ? std::exp(static_cast<double>(*sink) - top) : 0.0;
  for (std::int64_t s = 0; s < splits; ++s) total += std::exp(static_cast<double>(lse_at(s)) - top);
  // Splits in chunks whose weights fit on the stack; a chunk adds to what the
  // previous ones left in merged.
  constexpr std::int64_t kChunk = 64;
  for (std::int64_t s0 = 0; s0 < splits; s0 += kChunk) {
    const std::int64_t count = std::min(kChunk, splits - s0);
    float weight[kChunk];
    const float* row[kChunk];
    for (std::int64_t s = 0; s < count; ++s) {
      weight[s] = static_cast<float>(std::exp(static_cast<double>(lse_at(s0 + s)) - top) / total);
      row[s] = out_at(s0 + s);
    }
    for (std::int64_t c = 0; c < dv; ++c) {
      float acc = s0 == 0 ? 0.f : merged[c];
      // A -inf split has weight 0 and a zero row; skipping it also keeps a
      // garbage row of an empty split from turning 0 * x into NaN.
      for (std::int64_t s = 0; s < count; ++s)
        if (weight[s] != 0.f) acc += weight[s] * row[s][c];
      merged[c] = acc;
    }
  }
  return static_cast<float>(top + std::log(total));
}

}  // namespace

void combine_split_partials(const AttentionParams& p, const SplitPartials& partials, int threads) noexcept {
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  const std::int64_t rows = p.batch * p.seqlen_q;
  const int team = threads_for_work(
      4.0 * static_cast<double>(rows * p.heads * partials.splits * p.head_dim_v), rows, threads);
  // The merged row is built in place of split 0's partial row (combine_row
  // allows the alias), so this needs no scratch of its own.
#pragma omp parallel for num_threads(team) if (team > 1) schedule(dynamic, 4)
  for (std::int64_t index = 0; index < rows; ++index) {
    const std::int64_t b = index / p.seqlen_q, i = index % p.seqlen_q;
    const SequenceLengths seq = sequence_lengths(p, b);
    if (i >= seq.q) continue;
    for (std::int64_t head = 0; head < p.heads; ++head) {
      float* merged = partials.out + partials.out_index(p, 0, b, i, head);
      const float lse = combine_row(
          partials.splits, p.head_dim_v,
          [&](std::int64_t s) { return partials.lse[partials.lse_index(p, s, b, i, head)]; },
          [&](std::int64_t s) {
            return static_cast<const float*>(partials.out + partials.out_index(p, s, b, i, head));
          },
          p.sink ? p.sink + head : nullptr, merged);
      store_row(static_cast<char*>(p.out.data) + query_offset(p.out, seq, b, i, head) * elem, p.dtype, merged,
                p.head_dim_v);
      if (p.lse) p.lse[lse_offset(p, seq, b, i, head)] = lse;
    }
  }
}

const char* unsupported_reason(const CombineParams& p) noexcept {
  if (p.out_dtype == DType::int32) return "cpu_tiled: combine output must be fp16, bf16 or fp32";
  return nullptr;
}

std::size_t workspace_size(const CombineParams& p, int threads) noexcept {
  // Rows wider than the on-stack buffer are merged in a per-thread fp32 row.
  return p.head_dim_v > 512 ? static_cast<std::size_t>(round_up(p.head_dim_v * 4, 256)) * std::max(threads, 1)
                            : 0;
}

Status run(const CombineParams& p, const ExecutionContext& ctx) noexcept {
  const int threads = std::max(cpu_threads(ctx), 1);
  const std::size_t row_bytes = static_cast<std::size_t>(round_up(p.head_dim_v * 4, 256));
  const int usable = p.head_dim_v > 512 ? static_cast<int>(std::min<std::size_t>(
                                              threads, ctx.workspace ? ctx.workspace_bytes / row_bytes : 0))
                                        : threads;
  if (usable < 1)
    return Status::error(
        ErrorCode::invalid_argument,
        "workspace: %zu bytes given, cpu_tiled combine needs at least %zu (see workspace_size)",
        ctx.workspace_bytes, row_bytes);
  const std::int64_t rows = p.batch * p.seqlen * p.heads;
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.out_dtype));
  const int team = threads_for_work(4.0 * static_cast<double>(rows * p.splits * p.head_dim_v), rows, usable);
#pragma omp parallel num_threads(team) if (team > 1)
  {
    float merged_stack[512];
    float* merged =
        p.head_dim_v > 512
            ? reinterpret_cast<float*>(static_cast<char*>(ctx.workspace) + omp_get_thread_num() * row_bytes)
            : merged_stack;
#pragma omp for schedule(static)
    for (std::int64_t index = 0; index < rows; ++index) {
      const std::int64_t head = index % p.heads, i = index / p.heads % p.seqlen,
                         b = index / (p.heads * p.seqlen);
      const float lse = combine_row(
          p.splits, p.head_dim_v,
          [&](std::int64_t s) {
            return p.lse_partial[s * p.lp_split_stride + b * p.lp_batch_stride + i * p.lp_row_stride +
                                 head * p.lp_head_stride];
          },
          [&](std::int64_t s) {
            return p.out_partial + s * p.op_split_stride + b * p.op_batch_stride + i * p.op_row_stride +
                   head * p.op_head_stride;
          },
          nullptr, merged);
      store_row(static_cast<char*>(p.out.data) +
                    (b * p.out.batch_stride + i * p.out.row_stride + head * p.out.head_stride) * elem,
                p.out_dtype, merged, p.head_dim_v);
      if (p.lse) p.lse[b * p.lse_batch_stride + i * p.lse_row_stride + head * p.lse_head_stride] = lse;
    }
  }
  return Status();
}

}  // namespace flashattn::detail::cpu_tiled
