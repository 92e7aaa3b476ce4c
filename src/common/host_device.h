// Lets the small semantic helpers (masking, Philox, sequence resolution) be
// compiled once for the host and once for CUDA kernels, so every backend
// shares one definition of what attention means.
#pragma once

#if defined(__CUDACC__)
#define FLASHATTN_HD __host__ __device__ __forceinline__
#else
#define FLASHATTN_HD inline
#endif
