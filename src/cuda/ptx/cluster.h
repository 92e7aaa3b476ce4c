// Thread-block cluster wrappers (sm_90): the CTA's rank in its cluster, the
// cluster-wide barrier, shared addresses of a peer CTA (distributed shared
// memory) and arrivals on a peer's mbarrier. A cluster's CTAs run at the same
// time on one GPC; a CTA may write to (TMA multicast) and arrive on barriers of
// its peers, which is why a cluster kernel must not let a CTA exit while a peer
// may still do so (barrier_cluster_arrive / _wait at the end).
#pragma once

#include <cstdint>

namespace flashattn::ptx {

__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every CTA of the cluster arrives once per phase; wait blocks
// until all have arrived. release / acquire: shared-memory writes (barrier
// initialisation included) before the arrive are visible to every waiter after
// the wait. Not .aligned: the threads of a warp may reach it apart.
__device__ __forceinline__ void barrier_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}

// No ordering of the thread's earlier memory accesses (barrier.cluster.arrive.release compiles to a
// MEMBAR.ALL.GPU before the arrival, which waits for the thread's outstanding accesses): for an arrival whose
// only message is that this CTA's mbarriers are initialised, which fence_mbarrier_init (mbarrier.h) already
// releases to the cluster.
__device__ __forceinline__ void barrier_cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;\n" ::: "memory");
}

__device__ __forceinline__ void barrier_cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

// The shared::cluster address of the same offset `smem` (a shared::cta address) in
// the shared memory of the cluster's CTA `rank`.
__device__ __forceinline__ std::uint32_t mapa_shared(std::uint32_t smem, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem), "r"(rank));
  return remote;
}

// Arrival on an mbarrier given by its shared::cluster address (mapa_shared), in this
// CTA or a peer, with the default semantics (release, CTA scope), as CUTLASS's cluster
// pipelines release a multicast stage: what is ordered is this warp's wgmma reads of the
// stage (complete at its wgmma.wait_group) before the peer's TMA overwrites it. An
// explicit .release.cluster compiles to MEMBAR.ALL.GPU before every arrive (nvcc 13.0),
// too dear in the key-block loop.
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar) : "memory");
}

// mbarrier_arrive_cluster where `pred` holds, as one predicated instruction (no branch).
__device__ __forceinline__ void mbarrier_arrive_cluster_if(std::uint32_t remote_bar, bool pred) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n@p mbarrier.arrive.shared::cluster.b64 _, [%0];\n}\n" ::"r"(
          remote_bar),
      "r"(static_cast<std::uint32_t>(pred))
      : "memory");
}

// st.async: `value` to the shared::cluster address `remote` (this CTA's or a peer's), its 4 bytes completed
// as transaction bytes on the mbarrier at `remote_bar` (a shared::cluster address in the same CTA), whose
// waiters then see them: a record sent without a fence, a flag or a round trip.
__device__ __forceinline__ void st_async_b32(std::uint32_t remote, float value, std::uint32_t remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(remote),
               "r"(__float_as_uint(value)), "r"(remote_bar)
               : "memory");
}

}  // namespace flashattn::ptx
