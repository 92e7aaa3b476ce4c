// options.bias in the cuda_sm80 kernels: one (sequence, query head)'s rows of the bias tensor, read
// element by element from global memory (through L2: a query tile's rows are read once per key tile).
//
// The element type is a run-time field rather than a template argument of the kernels (four more
// instantiations of each general kernel would double their compile time): a pass over a tile's elements
// branches on it once (visit_kind) and runs a loop of that kind's loads, which issue back to back. (A
// switch per element, the first form, serialised the loads: 6-21x the forward's time without a bias. Loading
// a lane's two adjacent keys as one pair took up to 27% longer in the forward: docs/performance.md,
// session 72.)
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common/params.h"

namespace flashattn::detail::cuda_sm80 {

struct ScoreBias {
  enum Kind : int { none = 0, fp16, bf16, fp32, mask };

  const unsigned char* row0 = nullptr;  // element (b, head, 0, 0)
  std::int64_t row_bytes = 0;           // bytes from one query row to the next (0: broadcast)
  int kind = none;
  int element_bytes = 0;

  __device__ __forceinline__ static ScoreBias make(const AttentionParams& p, std::int64_t b,
                                                   std::int64_t head) {
    ScoreBias bias;
    if (p.bias == nullptr) return bias;
    switch (p.bias_dtype) {
      case DType::float16:
        bias.kind = fp16, bias.element_bytes = 2;
        break;
      case DType::bfloat16:
        bias.kind = bf16, bias.element_bytes = 2;
        break;
      case DType::float32:
        bias.kind = fp32, bias.element_bytes = 4;
        break;
      default:
        bias.kind = mask, bias.element_bytes = 1;
        break;
    }
    bias.row0 =
        static_cast<const unsigned char*>(p.bias) + bias_row_offset(p, b, head, 0) * bias.element_bytes;
    bias.row_bytes = p.bias_row_stride * bias.element_bytes;
    return bias;
  }

  __device__ __forceinline__ const unsigned char* row(std::int64_t i) const { return row0 + i * row_bytes; }

  // Calls f(std::integral_constant<int, kind>{}) for this bias's kind (not none): a warp-uniform branch once
  // per pass, so that the pass's loads carry no per-element branch and issue back to back.
  template <class F>
  __device__ __forceinline__ void visit_kind(F&& f) const {
    switch (kind) {
      case fp16:
        f(std::integral_constant<int, fp16>{});
        break;
      case bf16:
        f(std::integral_constant<int, bf16>{});
        break;
      case fp32:
        f(std::integral_constant<int, fp32>{});
        break;
      default:
        f(std::integral_constant<int, mask>{});
        break;
    }
  }

  // Element j of a row of kind kKind, in the units of the kernel's scores times `unit` (log2 e for base-2
  // logits); a mask's false is -inf, its true 0.
  template <int kKind>
  __device__ __forceinline__ static float value(const unsigned char* bias_row, int j, float unit) {
    if constexpr (kKind == fp16) {
      return __half2float(reinterpret_cast<const __half*>(bias_row)[j]) * unit;
    } else if constexpr (kKind == bf16) {
      return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(bias_row)[j]) * unit;
    } else if constexpr (kKind == fp32) {
      return reinterpret_cast<const float*>(bias_row)[j] * unit;
    } else {
      return bias_row[j] != 0 ? 0.f : -INFINITY;
    }
  }
};

}  // namespace flashattn::detail::cuda_sm80
