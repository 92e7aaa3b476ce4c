// Fast approximate special functions used by the sm90 kernels beyond those in ptx.h.
#pragma once

namespace flashattn::ptx {

// tanh(x) with ~2^-11 relative error (sm_75+); softcapping tolerates it because
// the result is rounded to 16 bits before the P*V product anyway.
__device__ __forceinline__ float tanh_approx_f32(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// 1 / x with at most 1 ulp error (flush-to-zero): the final softmax normalisation, where an
// IEEE division costs a multi-instruction sequence with a slow-path branch.
__device__ __forceinline__ float rcp_approx_ftz_f32(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// log2(x) with ~2^-22 absolute error (flush-to-zero): the LSE of a row sum.
__device__ __forceinline__ float lg2_approx_ftz_f32(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace flashattn::ptx
