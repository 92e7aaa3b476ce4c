// Hopper backward main kernel instantiation: head dim 64, bf16, the default mode's kernel for calls with a
// causal or window band below 2048 keys (BackwardConfig::kSkipHidden; a unit of its own: the units compile in
// parallel).
#include "cuda/sm90/backward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t launch_backward<BackwardConfig<64, __nv_bfloat16, 2, false, false, true>>(
    const cuda_sm80::BackwardKernelArgs&, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
