// Online softmax over a consumer thread's slice of S = Q K^T. Each thread owns
// two rows of its warpgroup's 64 (wgmma accumulator layout: rows lane/4 and
// lane/4 + 8 of its warp's 16), kBlockN/4 scores of each per key block; the four
// threads of a quad share a row, so row maxima are reduced with two shuffles.
// Row sums stay per-thread partial sums until the end (the rescale factor is the
// same for the whole quad), saving two shuffles per row per block.
#pragma once

#include <cmath>

#include "cuda/ptx/ptx.h"

namespace flashattn::detail::cuda_sm90 {

struct SoftmaxRows {
  float max[2];  // reference max of s (raw units): the running max, or at most
                 // kRescaleThreshold / score_log2 below it; -inf: nothing seen
  float sum[2];  // this thread's partial sum of 2^(s*score_log2 - max*score_log2)

  __device__ void reset() {
    max[0] = max[1] = -INFINITY;
    sum[0] = sum[1] = 0.f;
  }
};

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// How far (in log2 units of the probabilities) a row's true maximum may run
// ahead of the reference maximum its probabilities are taken against before the
// reference is moved: p = 2^(s - reference) then stays below 2^8, harmless in
// fp32 sums and in the fp16/bf16 P fragment, and O (accumulated against the same
// stale reference, like the sum) needs no rescaling for blocks that do not raise
// a row's maximum by more than that. Once the first blocks have found the rows'
// large scores, almost no later block moves the reference, which saves the 2 x
// kHeadDimV / 4 multiplications per thread of rescaling O (FlashAttention 4's
// conditional rescaling; exact, the final O / sum and LSE do not depend on the
// reference). It costs a comparison and a warp vote per block, so it pays where O
// is wide (forward_config.h kConditionalRescale: dv >= 128).
inline constexpr float kRescaleThreshold = 8.f;

// 2^x on the FMA pipe instead of the MUFU (FlashAttention 4's trick), for a share
// of a block's exponentials where MUFU throughput is the limit (d = 64: one MUFU.EX2
// per score, 16 per clock per SM, against 4 d = 256 tensor FLOPs per score at 4096 per
// clock: forward_config.h kFmaExp2Every). x = j + f with j = round(x) (the 1.5 * 2^23
// addition), 2^f by a polynomial on [-0.5, 0.5] (Chebyshev interpolation, relative
// error 1.0e-4 at degree 3, 3.5e-6 at degree 4, against P's rounding of 3.9e-3 in
// bf16 and 4.9e-4 in fp16), 2^j put into the exponent by integer arithmetic. Here
// x <= kRescaleThreshold; x = -inf (a masked score) gives exactly 0 (j = -127: scale 0).
// About 10 FMA/ALU instructions against one MUFU issue (8 cycles of the SMSP's MUFU).
template <bool kDegree4>
__device__ __forceinline__ float exp2_fma(float x) {
  x = fmaxf(x, -127.f);
  const float t = x + 12582912.f;  // t's last mantissa bits hold round(x)
  const float j = t - 12582912.f;
  const float f = x - j;
  float p;
  if constexpr (kDegree4) {
    p = fmaf(fmaf(fmaf(fmaf(0.00966636836528778f, f, 0.055921975523233414f), f, 0.2402234971523285f), f,
                  0.6931210160255432f),
             f, 1.f);
  } else {
    p = fmaf(fmaf(fmaf(0.05583828315138817f, f, 0.2426394820213318f), f, 0.6931367516517639f), f,
             0.9999245405197144f);
  }
  const float scale = __int_as_float((__float_as_int(t) - 0x4B400000 + 127) << 23);  // 2^j, 0 at j = -127
  return p * scale;
}

// Folds one block of scores into the running state: s becomes the
// unnormalised probabilities (against the rows' reference maxima). Returns true
// (the same in every lane of the warp) when the references moved, and then
// correction[r] is the factor the O rows accumulated so far must be multiplied by
// (0 when nothing had been seen); false: O stays as it is (correction 1).
// kConditional false: the references follow the running maxima exactly and the
// result is always true (no vote). kFmaEvery > 0: every kFmaEvery-th group of four
// scores is exponentiated by exp2_fma<kDegree4> (0: all on the MUFU).
template <int kBlockN, bool kConditional, int kFmaEvery = 0, bool kDegree4 = false>
__device__ __forceinline__ bool softmax_update(float (&s)[kBlockN / 2], SoftmaxRows& rows, float score_log2,
                                               float (&correction)[2]) {
  float block_max[2] = {rows.max[0], rows.max[1]};
#pragma unroll
  for (int i = 0; i < kBlockN / 8; ++i) {
    block_max[0] = fmaxf(block_max[0], fmaxf(s[4 * i], s[4 * i + 1]));
    block_max[1] = fmaxf(block_max[1], fmaxf(s[4 * i + 2], s[4 * i + 3]));
  }
  float new_max[2];
  bool grows = false;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    new_max[r] = quad_max(block_max[r]);
    // From -inf (nothing seen yet) to a finite maximum: +inf > threshold; -inf to -inf: NaN, false.
    if constexpr (kConditional)
      grows |= new_max[r] * score_log2 - rows.max[r] * score_log2 > kRescaleThreshold;
  }
  // One decision per warp: rescaling is a warp's work either way.
  bool rescale = true;
  if constexpr (kConditional) rescale = __any_sync(0xffffffffu, grows);
  float max_scaled[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    correction[r] = 1.f;
    if (rescale) {
      // A row with no visible key so far keeps max -inf (correction 1, nothing to scale).
      if (new_max[r] != -INFINITY) {
        correction[r] = ptx::ex2_approx_ftz_f32(rows.max[r] * score_log2 - new_max[r] * score_log2);
      }
      rows.max[r] = new_max[r];
    }
    // Offset 0 for a row with no visible key: every p = 2^-inf = 0 instead of NaN from (-inf) - (-inf).
    max_scaled[r] = rows.max[r] == -INFINITY ? 0.f : rows.max[r] * score_log2;
  }
  float block_sum[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kBlockN / 8; ++i) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = e / 2;
      const float x = fmaf(s[4 * i + e], score_log2, -max_scaled[r]);
      if constexpr (kFmaEvery > 0) {
        s[4 * i + e] = i % kFmaEvery == kFmaEvery - 1 ? exp2_fma<kDegree4>(x) : ptx::ex2_approx_ftz_f32(x);
      } else {
        s[4 * i + e] = ptx::ex2_approx_ftz_f32(x);
      }
      block_sum[r] += s[4 * i + e];
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) rows.sum[r] = rows.sum[r] * correction[r] + block_sum[r];
  return rescale;
}

// Final normalisation: the factor O's rows are multiplied by and their LSE
// (natural log). With a sink logit (natural-log units) the denominator gains
// e^sink; the maximum is re-based onto max(row max, sink) so neither term overflows.
// A row with no visible key and no sink gets factor 0 and LSE -inf.
struct RowFinal {
  float scale[2];
  float lse[2];
};

__device__ __forceinline__ RowFinal softmax_finalize(const SoftmaxRows& rows, float score_log2,
                                                     const float* sink) {
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr float kLn2 = 0.6931471805599453f;
  RowFinal f;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = quad_sum(rows.sum[r]);
    float max_scaled = rows.max[r] == -INFINITY ? -INFINITY : rows.max[r] * score_log2;
    float rebase = 1.f;  // 2^(max_scaled - reference)
    if (sink != nullptr) {
      const float sink_scaled = *sink * kLog2e;
      const float reference = fmaxf(max_scaled, sink_scaled);
      rebase = max_scaled == -INFINITY ? 0.f : ptx::ex2_approx_ftz_f32(max_scaled - reference);
      sum = sum * rebase + ptx::ex2_approx_ftz_f32(sink_scaled - reference);
      max_scaled = reference;
    }
    const bool empty = !(sum > 0.f);
    f.scale[r] = empty ? 0.f : rebase / sum;
    f.lse[r] = empty ? -INFINITY : max_scaled * kLn2 + logf(sum);
  }
  return f;
}

}  // namespace flashattn::detail::cuda_sm90
