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

// The same without .aligned: the warps that meet at the barrier may reach it from different instructions
// (bar.sync is barrier.sync.aligned, which requires one instruction for all of them; compute-sanitizer's
// synccheck reports the difference as divergent threads): two instances of one role's code, say.
__device__ __forceinline__ void bar_sync_unaligned(int id, int threads) {
  asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void bar_arrive_unaligned(int id, int threads) {
  asm volatile("barrier.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// bar_sync that also returns whether any of the `threads` threads passed true (bar.red.or).
__device__ __forceinline__ bool bar_red_or(int id, int threads, bool value) {
  std::uint32_t any;
  asm volatile(
      "{\n"
      ".reg .pred p, q;\n"
      "setp.ne.u32 p, %1, 0;\n"
      "bar.red.or.pred q, %2, %3, p;\n"
      "selp.u32 %0, 1, 0, q;\n"
      "}\n"
      : "=r"(any)
      : "r"(static_cast<std::uint32_t>(value)), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}

}  // namespace flashattn::ptx
