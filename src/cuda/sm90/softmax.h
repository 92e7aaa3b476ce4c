// Online softmax over a consumer thread's slice of S = Q K^T. Each thread owns
// two rows of its warpgroup's 64 (wgmma accumulator layout: rows lane/4 and
// lane/4 + 8 of its warp's 16), kBlockN/4 scores of each per key block; the four
// threads of a quad share a row, so row maxima are reduced with two shuffles.
// Row sums stay per-thread partial sums until the end (the rescale factor is the
// same for the whole quad), saving two shuffles per row per block.
#pragma once

#include <cmath>
#include <cstdint>

#include "cuda/ptx/approx_math.h"
#include "cuda/ptx/ptx.h"

namespace flashattn::detail::cuda_sm90 {

// v[0] = op(v[0], ..., v[kN - 1]) by pairwise folding (v is clobbered): the
// dependency depth is ceil(log2 kN) instead of kN - 1.
template <int kN, class Op>
__device__ __forceinline__ void fold_tree(float* v, Op op) {
  if constexpr (kN > 1) {
    constexpr int kHalf = (kN + 1) / 2;
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) v[i] = op(v[i], v[i + kHalf]);
    fold_tree<kHalf>(v, op);
  }
}

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

// This block's row maxima, the rows' references folded in (quad-reduced: the whole rows'), and whether one of
// this thread's rows grew past its reference by more than kRescaleThreshold (from -inf, nothing seen yet, to
// a finite maximum: +inf > threshold; -inf to -inf: NaN, false).
template <int kBlockN, bool kTree>
__device__ __forceinline__ bool block_row_max(const float (&s)[kBlockN / 2], const SoftmaxRows& rows,
                                              float score_log2, float (&new_max)[2]) {
  float block_max[2] = {rows.max[0], rows.max[1]};
  if constexpr (kTree) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float v[kBlockN / 8];
#pragma unroll
      for (int i = 0; i < kBlockN / 8; ++i) v[i] = fmaxf(s[4 * i + 2 * r], s[4 * i + 2 * r + 1]);
      fold_tree<kBlockN / 8>(v, [](float a, float b) { return fmaxf(a, b); });
      block_max[r] = fmaxf(block_max[r], v[0]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kBlockN / 8; ++i) {
      block_max[0] = fmaxf(block_max[0], fmaxf(s[4 * i], s[4 * i + 1]));
      block_max[1] = fmaxf(block_max[1], fmaxf(s[4 * i + 2], s[4 * i + 3]));
    }
  }
  bool grows = false;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    new_max[r] = quad_max(block_max[r]);
    grows |= new_max[r] * score_log2 - rows.max[r] * score_log2 > kRescaleThreshold;
  }
  return grows;
}

// When `move`, each row's reference becomes new_max and correction the factor for what was accumulated
// against the old one (else 1); offset: each row's reference in scaled units + kShift, the block's
// probabilities' offset (forward_config.h kProbabilityShift: P scaled by 2^-kShift throughout).
template <int kShift = 0>
__device__ __forceinline__ void move_references(SoftmaxRows& rows, const float (&new_max)[2], bool move,
                                                float score_log2, float (&correction)[2],
                                                float (&offset)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    correction[r] = 1.f;
    if (move) {
      // A row with no visible key so far keeps max -inf (correction 1, nothing to scale).
      if (new_max[r] != -INFINITY) {
        correction[r] = ptx::ex2_approx_ftz_f32(rows.max[r] * score_log2 - new_max[r] * score_log2);
      }
      rows.max[r] = new_max[r];
    }
    // Offset 0 for a row with no visible key: every p = 2^-inf = 0 instead of NaN from (-inf) - (-inf).
    offset[r] = rows.max[r] == -INFINITY ? 0.f : rows.max[r] * score_log2;
    if constexpr (kShift != 0) offset[r] += static_cast<float>(kShift);  // (+0 is no identity for -0.f)
  }
}

// Folds one block of scores into the running state: s becomes the
// unnormalised probabilities (against the rows' reference maxima). Returns true
// (the same in every lane of the warp) when the references moved, and then
// correction[r] is the factor the O rows accumulated so far must be multiplied by
// (0 when nothing had been seen); false: O stays as it is (correction 1).
// kConditional false: the references follow the running maxima exactly and the
// result is always true (no vote).
// kTree: a thread's row maxima and row sums of the block are folded as balanced
// trees (fold_tree: dependency depth log2(kBlockN / 8) + 1) instead of one running
// chain of kBlockN / 4 - 1 dependent FMNMX / FADD per row (the SASS of the chain
// form keeps it serial: ptxas does not reassociate). forward_config.h
// kTreeReductions says where it is on.
// kSums false: rows.sum is left alone, the caller gets the row sums elsewhere (forward_config.h
// kRowSumMma: from the P V GEMM's extra columns; rows.sum is then set before softmax_finalize).
// kShift: forward_config.h kProbabilityShift (move_references).
template <int kBlockN, bool kConditional, bool kTree = false, bool kSums = true, int kShift = 0>
__device__ __forceinline__ bool softmax_update(float (&s)[kBlockN / 2], SoftmaxRows& rows, float score_log2,
                                               float (&correction)[2]) {
  float new_max[2];
  const bool grows = block_row_max<kBlockN, kTree>(s, rows, score_log2, new_max);
  // One decision per warp: rescaling is a warp's work either way.
  bool rescale = true;
  if constexpr (kConditional) rescale = __any_sync(0xffffffffu, grows);
  float max_scaled[2];
  move_references<kShift>(rows, new_max, rescale, score_log2, correction, max_scaled);
  float block_sum[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kBlockN / 8; ++i) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = e / 2;
      s[4 * i + e] = ptx::ex2_approx_ftz_f32(fmaf(s[4 * i + e], score_log2, -max_scaled[r]));
      if constexpr (kSums && !kTree) block_sum[r] += s[4 * i + e];
    }
  }
  if constexpr (kSums && kTree) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float v[kBlockN / 8];
#pragma unroll
      for (int i = 0; i < kBlockN / 8; ++i) v[i] = s[4 * i + 2 * r] + s[4 * i + 2 * r + 1];
      fold_tree<kBlockN / 8>(v, [](float a, float b) { return a + b; });
      block_sum[r] = v[0];
    }
  }
  if constexpr (kSums) {
#pragma unroll
    for (int r = 0; r < 2; ++r) rows.sum[r] = rows.sum[r] * correction[r] + block_sum[r];
  }
  return rescale;
}

// A thread's partial row sum of one block above which softmax_update_by_sum takes the exact way: every
// probability of the block is at most its row's partial sum, so below it none exceeds 2^8, the bound
// kRescaleThreshold keeps.
inline constexpr float kSumTrigger = 256.f;

// One block's probabilities against the reference offsets (scaled units), packed into the P V GEMM's
// register-A fragments as they come (pf[kk][j] = the pair s[8 kk + 2 j], s[8 kk + 2 j + 1], row j % 2), and
// this thread's partial row sums (four chains per row, so no fp32 probability outlives its pack).
//
// A chain starts from its first pair's sum, not from 0 + that sum: ptxas keeps an add of 0 (0 + x is not x
// for x = -0), 8 FADD per block at 64 keys (session 41, local SASS). A pair's sum is never -0 (ex2 of
// anything is +0 or more), so the sums are bitwise the same.
//
// kSums false (the sums come from the tensor cores, forward_config.h kRowSumMma): block_sum is left alone.
template <int kBlockN, bool kSums = true, class Pack>
__device__ __forceinline__ void exponentials_packed(const float (&s)[kBlockN / 2],
                                                    std::uint32_t (&pf)[kBlockN / 16][4],
                                                    const float (&offset)[2], float score_log2,
                                                    float (&block_sum)[2], Pack pack) {
  float chain[2][4] = {};
#pragma unroll
  for (int kk = 0; kk < kBlockN / 16; ++kk) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int row = j % 2;
      const float a = ptx::ex2_approx_ftz_f32(fmaf(s[8 * kk + 2 * j], score_log2, -offset[row]));
      const float b = ptx::ex2_approx_ftz_f32(fmaf(s[8 * kk + 2 * j + 1], score_log2, -offset[row]));
      pf[kk][j] = pack(a, b);
      if constexpr (kSums) {
        // Chain (2 kk + j / 2) % 4 of the row: first reached at kk < 2.
        float& c = chain[row][(2 * kk + j / 2) % 4];
        c = kk < 2 ? a + b : c + (a + b);
      }
    }
  }
  if constexpr (kSums) {
#pragma unroll
    for (int r = 0; r < 2; ++r) block_sum[r] = (chain[r][0] + chain[r][1]) + (chain[r][2] + chain[r][3]);
  }
}

// Whether some packed probability of pf is 2 or more, infinite or NaN: among non-negative bf16 and fp16
// values bit 14 (the top exponent bit) is set exactly for those. One OR tree over the fragments.
template <int kBlockN>
__device__ __forceinline__ bool some_probability_large(const std::uint32_t (&pf)[kBlockN / 16][4]) {
  std::uint32_t bits = 0;
#pragma unroll
  for (int kk = 0; kk < kBlockN / 16; ++kk) {
#pragma unroll
    for (int j = 0; j < 4; ++j) bits |= pf[kk][j];
  }
  return (bits & 0x40004000u) != 0;
}

// softmax_update's conditional rescaling without the row maxima on the common path (forward_config.h
// kRescaleBySum). Unless max_first, the block's probabilities are taken against the rows' current references
// first, packed straight into pf, s left as it was; only when some thread's partial row sum exceeds
// kSumTrigger (a probability may exceed 2^8, or overflowed), is NaN, or a row has no reference yet (max -inf)
// does the warp take the exact way: the row maxima, every reference moved to its row's maximum, the
// probabilities taken again. max_first (warp-uniform; the caller passes whether the previous block moved a
// reference) goes the exact way at once, moving the references only as softmax_update's conditional rule does
// (a maximum more than kRescaleThreshold above its reference): scores that keep rising from block to block
// (a bias growing along the keys) then cost one pass per block, as in softmax_update, not two. Returns true
// (warp-uniform) when a reference moved: O must then be multiplied by correction. The final O / sum and LSE
// do not depend on the references.
// kSums false (forward_config.h kRowSumMma): the row sums come from the tensor cores, rows.sum is left alone,
// and the trigger is a packed probability of 2 or more (some_probability_large) instead of the partial sum;
// with the probabilities taken against reference + kShift that is 2^(kShift + 1) of the reference (kShift 7:
// 2^8, where the sum trigger fires too).
template <int kBlockN, bool kTree, bool kSums = true, int kShift = 0, class Pack>
__device__ __forceinline__ bool softmax_update_by_sum(const float (&s)[kBlockN / 2],
                                                      std::uint32_t (&pf)[kBlockN / 16][4], SoftmaxRows& rows,
                                                      float score_log2, float (&correction)[2], Pack pack,
                                                      bool max_first) {
  float offset[2], block_sum[2];
  bool triggered = false;
  if (!max_first) {
    bool exact = false;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      exact |= rows.max[r] == -INFINITY;
      offset[r] = rows.max[r] * score_log2;
      if constexpr (kShift != 0) offset[r] += static_cast<float>(kShift);
    }
    exponentials_packed<kBlockN, kSums>(s, pf, offset, score_log2, block_sum, pack);
    if constexpr (kSums) {
      // NaN (an overflowed probability times 0, or -inf - -inf) fails <= as well.
      exact |= !(block_sum[0] <= kSumTrigger) || !(block_sum[1] <= kSumTrigger);
    } else {
      exact |= some_probability_large<kBlockN>(pf);
    }
    triggered = __any_sync(0xffffffffu, exact);
  }
  if (max_first || triggered) {
    float new_max[2];
    const bool grows = block_row_max<kBlockN, kTree>(s, rows, score_log2, new_max);
    // Triggered: always moved, so that the block's probabilities come out at most 1 and the next block does
    // not trigger again for the same scores.
    const bool move = triggered || __any_sync(0xffffffffu, grows);
    move_references<kShift>(rows, new_max, move, score_log2, correction, offset);
    exponentials_packed<kBlockN, kSums>(s, pf, offset, score_log2, block_sum, pack);
    if constexpr (kSums) {
#pragma unroll
      for (int r = 0; r < 2; ++r) rows.sum[r] = rows.sum[r] * correction[r] + block_sum[r];
    }
    return move;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    correction[r] = 1.f;
    if constexpr (kSums) rows.sum[r] += block_sum[r];
  }
  return false;
}

// Final normalisation: the factor O's rows are multiplied by and their LSE
// (natural log). With a sink logit (natural-log units) the denominator gains
// e^sink; the maximum is re-based onto max(row max, sink) so neither term overflows.
// A row with no visible key and no sink gets factor 0 and LSE -inf.
// kPartialSums: rows.sum holds this thread's share of its quad's sum (softmax_update);
// false: the whole row's sum (forward_config.h kRowSumMma).
struct RowFinal {
  float scale[2];
  float lse[2];
};

// kFast: 1 / sum and log2(sum) from rcp.approx / lg2.approx (forward_config.h kFastFinalize).
// kShift: the probabilities (so the sums) were taken against each reference + kShift (forward_config.h
// kProbabilityShift), which is then the reference the sum, the sink and the LSE are expressed against; O,
// accumulated from the same probabilities, is scaled by the same sum.
template <bool kPartialSums = true, bool kFast = false, int kShift = 0>
__device__ __forceinline__ RowFinal softmax_finalize(const SoftmaxRows& rows, float score_log2,
                                                     const float* sink) {
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr float kLn2 = 0.6931471805599453f;
  RowFinal f;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = kPartialSums ? quad_sum(rows.sum[r]) : rows.sum[r];
    float max_scaled = rows.max[r] == -INFINITY ? -INFINITY : rows.max[r] * score_log2;
    if constexpr (kShift != 0) max_scaled += static_cast<float>(kShift);
    float rebase = 1.f;  // 2^(max_scaled - reference)
    if (sink != nullptr) {
      const float sink_scaled = *sink * kLog2e;
      const float reference = fmaxf(max_scaled, sink_scaled);
      rebase = max_scaled == -INFINITY ? 0.f : ptx::ex2_approx_ftz_f32(max_scaled - reference);
      sum = sum * rebase + ptx::ex2_approx_ftz_f32(sink_scaled - reference);
      max_scaled = reference;
    }
    const bool empty = !(sum > 0.f);
    if constexpr (kFast) {
      f.scale[r] = empty ? 0.f : rebase * ptx::rcp_approx_ftz_f32(sum);
      f.lse[r] = empty ? -INFINITY : (max_scaled + ptx::lg2_approx_ftz_f32(sum)) * kLn2;
    } else {
      f.scale[r] = empty ? 0.f : rebase / sum;
      f.lse[r] = empty ? -INFINITY : max_scaled * kLn2 + logf(sum);
    }
  }
  return f;
}

}  // namespace flashattn::detail::cuda_sm90
