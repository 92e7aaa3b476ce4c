// Helper sm80e: the kernels whose registers / spills / setup SASS were checked locally (nvcc -arch=sm_90
// -cubin -Xptxas=-v -I include -I src): the d256 X A shape (forward_tuning.json's s <= 2048 rows) without /
// with lean_setup, plain, kGeneral and paged instances. (Call 1's probes also had peel_first, since taken
// out.)
#include "cuda/sm80/forward_launch.h"
namespace flashattn::detail::cuda_sm80 {
#define XA(L)                                                                                             \
  TileShape {                                                                                             \
    1, 4, 64, 1, false, 2, false, false, true, false, false, false, true, true, true, true, true, true, L \
  }
template __global__ void forward_kernel<ForwardConfig<256, __nv_bfloat16, XA(false)>, false, false>(
    const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<256, __nv_bfloat16, XA(true)>, false, false>(
    const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<256, __nv_bfloat16, XA(true)>, true, false>(
    const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<256, __nv_bfloat16, XA(true)>, false, true>(
    const __grid_constant__ ForwardKernelArgs);
}  // namespace flashattn::detail::cuda_sm80
