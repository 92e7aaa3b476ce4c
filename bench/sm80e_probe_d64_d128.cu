// Helper sm80e: the kernels whose registers / spills / setup SASS were checked locally (nvcc -arch=sm_90 -cubin
// -Xptxas=-v -I include -I src), plain instance (no kGeneral, no paged loads), without / with lean_setup, peel_first.
#include "cuda/sm80/forward_launch.h"
namespace flashattn::detail::cuda_sm80 {
#define D128(L, P) TileShape{2, 4, 64, 2, false, 2, false, true, true, false, false, false, true, false, false, false, false, true, L, P}
#define D64(L, P) TileShape{2, 4, 128, 2, false, 2, false, true, true, false, false, false, true, false, false, false, false, true, L, P}
template __global__ void forward_kernel<ForwardConfig<128, __nv_bfloat16, D128(false, false)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<128, __nv_bfloat16, D128(true, false)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<128, __nv_bfloat16, D128(true, true)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<64, __nv_bfloat16, D64(false, false)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<64, __nv_bfloat16, D64(true, false)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<64, __nv_bfloat16, D64(true, true)>, false, false>(const __grid_constant__ ForwardKernelArgs);
template __global__ void forward_kernel<ForwardConfig<64, __nv_bfloat16, D64(true, true)>, true, false>(const __grid_constant__ ForwardKernelArgs);
}
