// Warpgroup-level control (sm_90a): register reallocation between
// warp-specialised roles and named barriers between groups of warps.
#pragma once

#include <cstdint>

namespace flashattn::ptx {

// setmaxnreg: every thread of the warpgroup must execute the same one. The
// kernel needs a register cap at entry (__launch_bounds__(threads, 1)) for the
// hardware to have registers to hand out; dec returns them to the pool, inc
// blocks until the pool can supply them.
template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// Named barrier `id` (1..15; 0 is __syncthreads) completing once `threads`
// threads (a multiple of 32) have arrived; bar_sync waits, bar_arrive does not.
__device__ __forceinline__ void bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace flashattn::ptx
