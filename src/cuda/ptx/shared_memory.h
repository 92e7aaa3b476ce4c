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

// Two fp32 values from an 8-byte aligned shared address.
__device__ __forceinline__ float2 ld_shared_v2_f32(std::uint32_t addr) {
  float2 value;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(value.x), "=f"(value.y) : "r"(addr) : "memory");
  return value;
}

__device__ __forceinline__ std::uint32_t ld_shared_b32(std::uint32_t addr) {
  std::uint32_t value;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(value) : "r"(addr) : "memory");
  return value;
}

// 16 bytes to a 16-byte aligned shared address.
__device__ __forceinline__ void st_shared_v4_b32(std::uint32_t addr, uint4 value) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(value.x), "r"(value.y),
               "r"(value.z), "r"(value.w)
               : "memory");
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

// Rows [first_row, end_row) of the `chunks` 64-column chunks (chunk_bytes apart) of a tile of 128-byte rows
// at `tile` set to zero by `threads` threads, thread `t` taking every threads-th 16-byte unit: whole rows, so
// the 128B swizzle (which permutes the units within a row) does not matter. The caller fences the stores for
// the async proxy before a TMA or wgmma reads the tile.
__device__ __forceinline__ void zero_rows_128b(std::uint32_t tile, int chunk_bytes, int chunks, int first_row,
                                               int end_row, int t, int threads) {
  constexpr int kRowUnits = 128 / 16;
  const int chunk_units = (end_row - first_row) * kRowUnits;
  const std::uint32_t first = tile + first_row * 128;
#pragma unroll 1
  for (int i = t; i < chunk_units * chunks; i += threads) {
    const int chunk = i / chunk_units;
    st_shared_v4_b32(first + chunk * chunk_bytes + (i - chunk * chunk_units) * 16,
                     make_uint4(0u, 0u, 0u, 0u));
  }
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

// Four 8x8 matrices of 16-bit elements to shared memory (sm_90): register r[j] of lane l is
// row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of matrix j; lanes 8j .. 8j + 7 give the
// 16-byte aligned addresses of matrix j's rows 0 .. 7 (the wgmma/mma accumulator layout
// packed to pairs, written without per-lane 4-byte stores).
__device__ __forceinline__ void stmatrix_x4(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1,
                                            std::uint32_t r2, std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// stmatrix_x4 / _x2 transposed: matrix j is stored with its rows and columns swapped, so row i of the
// stored matrix (at the address lane 8j + i gives) holds element i of every register's pair across the
// lanes: column i of the fragment, the 8 elements lane i % 4 ... hold in rows 0 .. 7. From a wgmma
// accumulator of M x 8 (rows 8 apart in the fragment) this writes its transpose, 8 rows of M elements.
__device__ __forceinline__ void stmatrix_x4_trans(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1,
                                                  std::uint32_t r2, std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}
__device__ __forceinline__ void stmatrix_x2_trans(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};\n" ::"r"(addr), "r"(r0),
               "r"(r1)
               : "memory");
}

}  // namespace flashattn::ptx
