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

}  // namespace flashattn::ptx
