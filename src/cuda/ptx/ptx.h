// The PTX layer: every inline-assembly instruction the CUDA kernels use, each
// wrapped in a small function named after the instruction. Kernels call these
// and never contain asm themselves, so the instruction set a kernel depends on
// is visible in one place and portable changes (a new arch) touch one file.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace flashattn::ptx {

// Shared-memory pointers as the 32-bit addresses that ldmatrix/cp.async take.
__device__ __forceinline__ std::uint32_t cvta_to_shared(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// ---------------------------------------------------------------------------
// Asynchronous global -> shared copies (sm_80+).

// Copies 16 bytes; when `valid` is false the 16 destination bytes are zero-filled
// and global memory is not read (src-size 0), which is how tile edges are handled.
// .cg bypasses L1: each tile is read once per CTA, so L1 would only be polluted.
__device__ __forceinline__ void cp_async_cg_16(std::uint32_t smem_addr, const void* gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gmem), "r"(src_bytes)
               : "memory");
}

// cp_async_cg_16 of a chunk known to be in bounds: no source-size operand, so the caller needs no
// per-copy select (the forward's whole-tile K/V loader).
__device__ __forceinline__ void cp_async_cg_16_full(std::uint32_t smem_addr, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem) : "memory");
}

__device__ __forceinline__ void cp_async_commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Arrives on the mbarrier at `bar` once every cp.async this thread issued before has landed, without
// raising the barrier's expected count (.noinc): the count the barrier was made with includes this arrival.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// ---------------------------------------------------------------------------
// Shared -> register matrix loads. Each lane passes the address of one 16-byte
// row; x4 loads four 8x8 b16 matrices (lanes 8i..8i+7 address matrix i).

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

// ---------------------------------------------------------------------------
// Tensor-core MMA, D = A * B + D with fp32 accumulation. Fragment layouts are
// those of the PTX ISA for m16n8k16: a[4] (row-major A), b[2] (column-major B),
// d[4] (c0,c1: row lane/4; c2,c3: row lane/4 + 8; columns 2*(lane%4) + {0,1}).

__device__ __forceinline__ void mma_m16n8k16_f32_f16(float (&d)[4], const std::uint32_t (&a)[4],
                                                     const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_m16n8k16_f32_bf16(float (&d)[4], const std::uint32_t (&a)[4],
                                                      const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---------------------------------------------------------------------------
// Conversions and special functions.

// Two fp32 -> one register of two 16-bit floats, round to nearest even; `lo` lands in the low half.
__device__ __forceinline__ std::uint32_t cvt_rn_f16x2_f32(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ std::uint32_t cvt_rn_bf16x2_f32(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// prmt.b32 in its default mode, selector kSelector: result byte n is the byte that nibble n picks from {b, a}
// (0-3: a's, 4-7: b's), or, with the nibble's bit 3 set, that byte's sign bit replicated (0x00 or 0xff).
template <std::uint32_t kSelector>
__device__ __forceinline__ std::uint32_t prmt_b32(std::uint32_t a, std::uint32_t b) {
  std::uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "n"(kSelector));
  return d;
}

// 2^x, relative error ~2^-22; ex2.approx(-inf) = +0, which the softmax relies on.
__device__ __forceinline__ float ex2_approx_ftz_f32(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Atomic add at GPU scope with acquire-release semantics (returns the old value): a release of this thread's
// earlier writes (and of those a barrier ordered before it) and an acquire of the writes released by the
// earlier adds to the same word.
__device__ __forceinline__ int atom_add_acq_rel_gpu(int* address, int value) {
  int old;
  asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(address), "r"(value)
               : "memory");
  return old;
}

// A GPU-scope acquire load (a spin on a flag another CTA releases) and a GPU-scope release add without a
// return value (the release of this thread's earlier writes, and of those a barrier ordered before it).
__device__ __forceinline__ int ld_acquire_gpu_s32(const int* address) {
  int value;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void red_release_gpu_add_s32(int* address, int value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(address), "r"(value) : "memory");
}

// fp32 pair reduction into global memory without a return value (sm_90+, PTX 8.1): one
// transaction for two adjacent, 8-byte aligned floats instead of two scalar atomics.
__device__ __forceinline__ void red_global_add_v2_f32(float* address, float x, float y) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(address), "f"(x), "f"(y) : "memory");
}
// The same for four adjacent, 16-byte aligned floats (sm_90).
__device__ __forceinline__ void red_global_add_v4_f32(float* address, float x, float y, float z, float w) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(address), "f"(x), "f"(y), "f"(z),
               "f"(w)
               : "memory");
}

}  // namespace flashattn::ptx
