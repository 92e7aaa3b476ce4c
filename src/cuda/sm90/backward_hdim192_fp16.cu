// Hopper backward main kernel instantiation: head dim 192, fp16 (the split-column kernel and the dQ pass,
// default mode only: deterministic mode runs the same kernels).
#include "cuda/sm90/backward_launch.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_backward<192, __half, false, false, 192>(const cuda_sm80::BackwardKernelArgs&,
                                                                  cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
