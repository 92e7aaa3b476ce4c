// Plain shared-memory accesses by 32-bit shared address (the form the TMA and
// wgmma descriptors use), so code computing swizzled addresses needs no
// generic pointer alongside.
#pragma once

#include <vector_types.h>

#include <cstdint>

namespace flashattn::ptx {

__device__ __forceinline__ void st_shared_b32(std::uint32_t addr, std::uint32_t value) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(value) : "memory");
}

// Two fp32 values to an 8-byte aligned shared address.
__device__ __forceinline__ void st_shared_v2_f32(std::uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

__device__ __forceinline__ std::uint32_t ld_shared_b32(std::uint32_t addr) {
  std::uint32_t value;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(value) : "r"(addr) : "memory");
  return value;
}

// 16 bytes from a 16-byte aligned shared address.
__device__ __forceinline__ uint4 ld_shared_v4_b32(std::uint32_t addr) {
  uint4 value;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
               : "r"(addr)
               : "memory");
  return value;
}

// Asynchronous store of one word into (this CTA's) shared memory that completes
// as 4 transaction bytes on the mbarrier `bar`, like a TMA load: a consumer that
// waited on the barrier's phase may read it, ordered by the barrier itself (which
// compute-sanitizer's racecheck models, unlike st.shared + arrive).
__device__ __forceinline__ void st_async_b32(std::uint32_t addr, std::uint32_t value, std::uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(addr),
               "r"(value), "r"(bar)
               : "memory");
}

}  // namespace flashattn::ptx
