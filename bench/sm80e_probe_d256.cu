// Helper sm80e: the kernels whose registers / spills / setup SASS were checked locally (nvcc -arch=sm_90 -cubin
// -Xptxas=-v -I include -I src), plain instance (no kGeneral, no paged loads), without / with lean_setup, peel_first.
#include "cuda/sm80/forward_launch.h"
namespace flashattn::detail::cuda_sm80 {
#define XA(L, P) TileShape{1, 4, 64, 1, false, 2, false, false, true, false, false, false, true, true, true, true, true, true, L, P}
template __global__ void forward_kernel<ForwardConfig<256, __nv_bfloat16, XA(false, false)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<256, __nv_bfloat16, XA(true, false)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<256, __nv_bfloat16, XA(true, true)>, false, false>(const __grid_constant__ ForwardKernelArgs);
}
