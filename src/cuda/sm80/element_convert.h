// fp16 / bf16 elements to and from fp32 in device code, for the element-wise kernels (the KV-cache append and
// query rotation, the split-KV combine, the backward's preprocess).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace flashattn::detail::cuda_sm80 {

template <typename Element>
__device__ __forceinline__ float to_float(Element x) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __half2float(x);
  } else {
    return __bfloat162float(x);
  }
}

template <typename Element>
__device__ __forceinline__ Element from_float(float x) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __float2half_rn(x);
  } else {
    return __float2bfloat16_rn(x);
  }
}

}  // namespace flashattn::detail::cuda_sm80
