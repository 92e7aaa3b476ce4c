// Hopper forward kernel instantiation: head dim 96, bf16.
#include "cuda/sm90/forward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_forward<96, 96, __nv_bfloat16>(const AttentionParams&, void*, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
