// Hopper forward kernel instantiation: head dims up to 96 on d = 128's kernels with GEMMs over 96 columns
// (forward_config.h narrowed_gemm_dim), fp16.
#include "cuda/sm90/forward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_forward<128, 128, __half, 96>(const AttentionParams&, void*, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
