// mbarrier wrappers (sm_90): the shared-memory barriers that pipeline stages
// wait on. A barrier completes a phase when its expected arrivals have arrived
// and, for TMA stages, the expected transaction bytes have landed; waiters
// name the phase by its parity (0, 1, 0, ...), so a stage reused every
// `stages` iterations waits for parity (iteration / stages) & 1.
//
// Addresses are 32-bit shared-memory addresses (ptx::cvta_to_shared).
#pragma once

#include <cstdint>

namespace flashattn::ptx {

__device__ __forceinline__ void mbarrier_init(std::uint32_t bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes barrier initialisation visible to the async proxy (TMA) and to other threads
// before any of them touches the barrier.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// An arrival made only where `pred` holds, as one predicated instruction: no branch, so the
// compiler keeps the surrounding code in one basic block (a warp leader's `if (lane == 0)
// arrive` splits it, and ptxas then cannot schedule the following work across it).
__device__ __forceinline__ void mbarrier_arrive_if(std::uint32_t bar, bool pred) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(bar),
      "r"(static_cast<std::uint32_t>(pred))
      : "memory");
}

// One thread standing for `count` arrivals.
__device__ __forceinline__ void mbarrier_arrive_count(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Arrives and adds `bytes` to the transaction count the phase waits for (the
// bytes the TMA copies issued next will deliver with complete_tx).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// Adds `bytes` to the transaction count of the current phase without arriving: the phase then
// completes at the later arrive (made after writes of another kind, e.g. cp.async ones into the
// same stage) or when the bytes have landed, whichever comes last.
__device__ __forceinline__ void mbarrier_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until the phase of the given parity has completed. try_wait already
// suspends the thread for a hardware-chosen time, so the loop does not spin hot.
__device__ __forceinline__ void mbarrier_wait_parity(std::uint32_t bar, std::uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

}  // namespace flashattn::ptx
