// Hopper backward main kernel instantiation: head dim 64, bf16, with softcap, ALiBi and / or
// dropout (BackwardConfig::kGeneral; a unit of its own: the units compile in parallel).
#include "cuda/sm90/backward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_backward<64, __nv_bfloat16, false, true, 64>(const cuda_sm80::BackwardKernelArgs&,
                                                                      cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
