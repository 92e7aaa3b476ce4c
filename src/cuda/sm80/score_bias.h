// options.bias in the cuda_sm80 kernels: one (sequence, query head)'s rows of the bias tensor, read
// element by element from global memory (through L2: a query tile's rows are read once per key tile).
//
// The element type is a run-time field rather than a template argument: the general kernels already
// branch around whole passes for softcap and ALiBi, and four more instantiations of each would double
// their compile time for a path that is bound by the bias's own loads. The switch is warp-uniform.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

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

  // Element j of a row, in the units of the kernel's scores times `unit` (log2 e for base-2 logits); a
  // mask's false is -inf, its true 0.
  __device__ __forceinline__ float value(const unsigned char* bias_row, int j, float unit) const {
    switch (kind) {
      case fp16:
        return __half2float(reinterpret_cast<const __half*>(bias_row)[j]) * unit;
      case bf16:
        return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(bias_row)[j]) * unit;
      case fp32:
        return reinterpret_cast<const float*>(bias_row)[j] * unit;
      default:
        return bias_row[j] != 0 ? 0.f : -INFINITY;
    }
  }
};

}  // namespace flashattn::detail::cuda_sm80
