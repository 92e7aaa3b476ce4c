// Hopper backward main kernel instantiation: head dims up to 96 on d = 128's kernel with GEMMs over 96
// columns (forward_config.h narrowed_gemm_dim; backward_config.h kGemmDim_), bf16, deterministic mode with
// softcap, ALiBi and / or dropout.
#include "cuda/sm90/backward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_backward<128, __nv_bfloat16, true, true, 128, 96>(
    const cuda_sm80::BackwardKernelArgs&, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
