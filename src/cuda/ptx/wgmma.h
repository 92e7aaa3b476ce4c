// Warpgroup MMA (wgmma, sm_90a): shared-memory matrix descriptors and the
// fence / commit / wait protocol around the asynchronous MMAs
// (the instructions themselves are in wgmma_instructions.h).
//
// Protocol, per warpgroup:
//   wgmma_fence();                     // prior register writes (accumulators, A fragments) are visible
//   wgmma_m64k16_...(...) x k-steps;   // issue, asynchronous
//   wgmma_commit_group();              // close a group
//   ...independent work...
//   wgmma_wait_group<n>();             // at most n groups still running
//   wgmma_fence_operand(accumulators); // keep the compiler from reading them earlier
#pragma once

#include <cstdint>

#include "cuda/ptx/wgmma_instructions.h"

namespace flashattn::ptx {

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// The asm statements of wgmma "write" their accumulators at issue as far as the
// compiler knows; this empty asm pins each register after a wait (and before an
// issue), so no use of a result is scheduled before the MMA has completed.
template <int N>
__device__ __forceinline__ void wgmma_fence_operand(float (&registers)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(registers[i])::"memory");
}

template <int N>
__device__ __forceinline__ void wgmma_fence_operand(std::uint32_t (&registers)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(registers[i])::"memory");
}

// Returns x, opaque to the compiler: descriptors built from the result inside a
// loop are rebuilt there (a few integer ops per wgmma) instead of hoisted and
// kept live across the loop, where at large head dims they crowd out (and spill)
// the accumulators.
__device__ __forceinline__ std::uint32_t opaque_u32(std::uint32_t x) {
  asm volatile("" : "+r"(x));
  return x;
}

// Shared-memory matrix descriptor for the 128-byte swizzle used everywhere in
// the sm90 kernels (the layout TMA writes with CU_TENSOR_MAP_SWIZZLE_128B):
// rows of 64 16-bit elements (128 bytes), 8 rows form a 1024-byte swizzle atom
// in which 16-byte chunk c of row r sits at chunk c ^ (r % 8). Atoms must be
// 1024-byte aligned. Fields (PTX ISA "matrix descriptor"): start address >> 4
// in bits 0-13, leading-dimension byte offset >> 4 in 16-29, stride-dimension
// byte offset >> 4 in 32-45, base offset 0, swizzle mode 1 (128B) in 62-63.
//   K-major operand (rows = M or N, 64 K-elements per row): SBO = 1024 (next 8
//   rows); LBO unused. Advancing K by 16 elements inside the 128-byte row adds
//   32 bytes to the start address (the swizzle is applied to the final address).
//   MN-major operand (rows = K, 64 M/N-elements per row): SBO = 1024 (next 8
//   K rows), LBO = byte distance to the next 64 M/N elements.
__device__ __forceinline__ std::uint64_t make_smem_desc_sw128(std::uint32_t smem_addr,
                                                              std::uint32_t lbo_bytes,
                                                              std::uint32_t sbo_bytes) {
  std::uint64_t desc = 0;
  desc |= static_cast<std::uint64_t>((smem_addr & 0x3FFFF) >> 4);
  desc |= static_cast<std::uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16;
  desc |= static_cast<std::uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32;
  desc |= static_cast<std::uint64_t>(1) << 62;
  return desc;
}

// desc (from make_smem_desc_sw128) with its start address moved by start_bytes and its leading
// byte offset by lbo_bytes (multiples of 16): one add on the low word for constant moves. Both
// fields must stay inside their 14 bits (no borrow or carry between them); the caller knows.
__device__ __forceinline__ std::uint64_t smem_desc_moved(std::uint64_t desc, int start_bytes, int lbo_bytes) {
  const std::uint32_t lo = static_cast<std::uint32_t>(desc) + static_cast<std::uint32_t>(start_bytes / 16) +
                           (static_cast<std::uint32_t>(lbo_bytes / 16) << 16);
  return (desc & 0xFFFFFFFF00000000ull) | lo;
}

}  // namespace flashattn::ptx
