// Hopper forward kernel instantiation: head dims (64, 256) (q/k, v/out), fp16.
#include "cuda/sm90/forward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_forward<64, 256, __half>(const AttentionParams&, void*, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
