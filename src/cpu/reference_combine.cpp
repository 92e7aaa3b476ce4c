// CPU reference combine of split-KV partial results, in double:
//   lse = log sum_s e^{lse_s},  out = sum_s e^{lse_s - lse} out_s.
// A split with lse_s = -inf saw no visible key; it is skipped outright (its partial output is
// never read, so whatever it holds cannot turn into NaN). A row with every split -inf gets out 0
// and lse -inf, like a fully masked row of the forward.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "cpu/reference.h"
#include "cpu/reference_rows.h"

namespace flashattn::detail::cpu_reference {
namespace {

// Per-thread scratch: the split weights of one row, and its output accumulator.
std::size_t combine_thread_bytes(const CombineParams& p) {
  return scratch_bytes(p.splits) + scratch_bytes(p.head_dim_v);
}

}  // namespace

const char* unsupported_reason(const CombineParams& p) noexcept {
  if (p.out_dtype == DType::int32)
    return "cpu_reference: combine output must be fp16, bf16 or fp32, not int32";
  return nullptr;
}

std::size_t workspace_size(const CombineParams& p, int threads) noexcept {
  return static_cast<std::size_t>(std::max(threads, 1)) * combine_thread_bytes(p);
}

Status run(const CombineParams& p, const ExecutionContext& ctx) noexcept {
  const std::size_t per_thread = combine_thread_bytes(p);
  const int threads = threads_that_fit(ctx, 0, per_thread);
  if (threads == 0) {
    return Status::error(ErrorCode::internal,
                         "cpu_reference: workspace of %zu bytes is below the %zu one thread needs",
                         ctx.workspace_bytes, per_thread);
  }
  const std::int64_t dv = p.head_dim_v;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();

#pragma omp parallel num_threads(threads)
  {
    ScratchCarver carver(static_cast<unsigned char*>(ctx.workspace) + omp_get_thread_num() * per_thread);
    double* const weight = carver.take<double>(p.splits);
    double* const acc = carver.take<double>(dv);

#pragma omp for collapse(3) schedule(static)
    for (std::int64_t b = 0; b < p.batch; ++b) {
      for (std::int64_t r = 0; r < p.seqlen; ++r) {
        for (std::int64_t h = 0; h < p.heads; ++h) {
          const std::int64_t lse_base = b * p.lp_batch_stride + r * p.lp_row_stride + h * p.lp_head_stride;
          double max = kNegInf;
          for (std::int64_t s = 0; s < p.splits; ++s) {
            weight[s] = p.lse_partial[s * p.lp_split_stride + lse_base];
            max = std::max(max, weight[s]);
          }
          double lse = kNegInf;
          std::fill_n(acc, dv, 0.0);
          if (max != kNegInf) {
            double sum = 0;
            for (std::int64_t s = 0; s < p.splits; ++s) sum += std::exp(weight[s] - max);
            lse = max + std::log(sum);
            const std::int64_t out_base = b * p.op_batch_stride + r * p.op_row_stride + h * p.op_head_stride;
            for (std::int64_t s = 0; s < p.splits; ++s) {
              if (weight[s] == kNegInf) continue;
              const double w = std::exp(weight[s] - lse);
              const float* partial = p.out_partial + s * p.op_split_stride + out_base;
              for (std::int64_t c = 0; c < dv; ++c) acc[c] += w * partial[c];
            }
          }
          store_row(p.out.data, p.out_dtype,
                    b * p.out.batch_stride + r * p.out.row_stride + h * p.out.head_stride, dv, acc);
          if (p.lse) {
            p.lse[b * p.lse_batch_stride + r * p.lse_row_stride + h * p.lse_head_stride] =
                static_cast<float>(lse);
          }
        }
      }
    }
  }
  return Status();
}

}  // namespace flashattn::detail::cpu_reference
