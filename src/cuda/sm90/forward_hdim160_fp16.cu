// Hopper forward kernel instantiation: head dims 136-160 on d = 192's kernels with GEMMs over 160 columns
// (forward_config.h narrowed_gemm_dim), fp16.
#include "cuda/sm90/forward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_forward<192, 192, __half, 160>(const AttentionParams&, void*, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
