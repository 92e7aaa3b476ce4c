// Hopper forward kernel instantiation: head dim 128, fp16.
#include "cuda/sm90/forward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_forward<128, 128, __half>(const AttentionParams&, void*, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
