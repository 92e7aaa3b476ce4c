// Tensor memory accelerator (TMA, sm_90) wrappers: bulk tensor copies between
// global and shared memory described by a CUtensorMap (encoded on the host,
// passed to the kernel as a __grid_constant__ parameter so its address is a
// parameter-space address the copy engine can read), plus the proxy fence that
// orders ordinary shared-memory stores before the copy engine reads them.
//
// Coordinates are element indices, innermost dimension first; out-of-bounds
// elements of a load are zero-filled, out-of-bounds elements of a store are
// dropped, which is how tile edges are handled without predication.
#pragma once

#include <cstdint>

namespace flashattn::ptx {

__device__ __forceinline__ void prefetch_tensormap(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(tensor_map)) : "memory");
}

// Global -> L2 only: the box at these coordinates is fetched into L2 so that a later load of it hits there.
// No shared memory, no barrier, nothing to wait for; out-of-bounds parts are not fetched.
__device__ __forceinline__ void tma_prefetch_l2_4d(const void* tensor_map, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(tensor_map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}

// Global -> shared; completion is signalled to `bar` as transaction bytes.
__device__ __forceinline__ void tma_load_2d(std::uint32_t smem, const void* tensor_map, std::uint32_t bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, "
      "%4}], "
      "[%2];\n" ::"r"(smem),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void tma_load_3d(std::uint32_t smem, const void* tensor_map, std::uint32_t bar,
                                            int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, "
      "%5}], "
      "[%2];\n" ::"r"(smem),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void tma_load_4d(std::uint32_t smem, const void* tensor_map, std::uint32_t bar,
                                            int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, "
      "%5, "
      "%6}], [%2];\n" ::"r"(smem),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// The same box written to the same shared offset of every CTA of the cluster in
// cta_mask (bit r: cluster rank r), each completing `bytes` of the box on the mbarrier
// at offset `bar` of that CTA (TMA multicast, sm_90). One CTA's L2 read feeds several.
__device__ __forceinline__ void tma_load_4d_multicast(std::uint32_t smem, const void* tensor_map,
                                                      std::uint32_t bar, int c0, int c1, int c2, int c3,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5, %6}], [%2], %7;\n" ::"r"(smem),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
      "h"(cta_mask)
      : "memory");
}

// 5-D: the packed-GQA query view (cols, heads in group, rows, kv heads, batch).
__device__ __forceinline__ void tma_load_5d(std::uint32_t smem, const void* tensor_map, std::uint32_t bar,
                                            int c0, int c1, int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, "
      "%5, %6, %7}], [%2];\n" ::"r"(smem),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// Global -> shared, `bytes` contiguous bytes (a multiple of 16; both addresses 16-byte aligned), no
// tensor map; completion is signalled to `bar` as transaction bytes.
__device__ __forceinline__ void bulk_load(std::uint32_t smem, const void* global, std::uint32_t bytes,
                                          std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem),
      "l"(reinterpret_cast<std::uint64_t>(global)), "r"(bytes), "r"(bar)
      : "memory");
}

// Shared -> global, tracked by the issuing thread's bulk async-groups.
__device__ __forceinline__ void tma_store_4d(const void* tensor_map, std::uint32_t smem, int c0, int c1,
                                             int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(tensor_map)),
      "r"(smem), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

__device__ __forceinline__ void tma_store_5d(const void* tensor_map, std::uint32_t smem, int c0, int c1,
                                             int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(tensor_map)),
      "r"(smem), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// Shared -> global element-wise fp32 add of `bytes` (a multiple of 16; both addresses 16-byte
// aligned), done by the copy engine; tracked by the issuing thread's bulk async-groups (sm_90).
__device__ __forceinline__ void cp_reduce_async_bulk_add_f32(float* global, std::uint32_t smem,
                                                             std::uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(global),
               "r"(smem), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most kPending bulk groups still READ their shared-memory source
// (the buffer may then be overwritten; the global writes may still be in flight).
template <int kPending>
__device__ __forceinline__ void cp_async_bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// Waits until at most kPending bulk groups are incomplete (global writes done).
template <int kPending>
__device__ __forceinline__ void cp_async_bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Orders this thread's generic-proxy shared-memory accesses before later
// async-proxy accesses (TMA stores reading what st.shared wrote, wgmma reading
// operands written by ordinary stores).
__device__ __forceinline__ void fence_proxy_async_shared_cta() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// The same between the async proxy's and the generic proxy's accesses to global memory: bulk reductions
// this thread has waited for (cp_async_bulk_wait_group) before a generic release that publishes them.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// Tensor maps rewritten on the device (sm_90a): a copy of a host-encoded map in
// global memory gets a new base address / extent of one dimension. The writes
// are generic-proxy writes; a later user of the map must acquire it for the
// tensormap proxy (tensormap_acquire_fence) before the copy engine reads it.
__device__ __forceinline__ void tensormap_replace_global_address(void* tensor_map, const void* address) {
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(tensor_map)),
               "l"(reinterpret_cast<std::uint64_t>(address))
               : "memory");
}

template <int kDim>
__device__ __forceinline__ void tensormap_replace_global_dim(void* tensor_map, std::uint32_t extent) {
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], %1, %2;\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(tensor_map)),
               "n"(kDim), "r"(extent)
               : "memory");
}

// Makes a tensor map written through the generic proxy (by an earlier kernel)
// visible to the copy engine's tensormap proxy for this thread's later TMA ops.
__device__ __forceinline__ void tensormap_acquire_fence(const void* tensor_map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(tensor_map))
               : "memory");
}

}  // namespace flashattn::ptx
