// The Hopper forward kernel: warp-specialised, persistent, TMA + wgmma.
//   warpgroup 0  producer: gives most of its registers away, one thread issues
//                every TMA load (producer.h);
//   warpgroups 1, 2  consumers: take the registers, run the GEMMs, the online
//                softmax and the epilogue of 64 query rows each (consumer.h);
//                three or four at d = 64, one for decoding (forward_config.h), of
//                which the narrow tile's is decode_consumer.h's.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/ptx/cluster.h"
#include "cuda/ptx/grid_dependency.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/sm90/consumer.h"
#include "cuda/sm90/decode_consumer.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/pipeline.h"
#include "cuda/sm90/producer.h"

namespace flashattn::detail::cuda_sm90 {

// kPaged: K/V through a block table (producer_loop_paged). A template parameter
// rather than a branch: with both producers in one kernel, the dense one spilled at
// the producer's 24 registers (28-72 B of local memory in every instantiation; now
// 8 B, one reload per tile outside the K/V loop). The paged kernels give their
// producer 40 registers (forward_config.h). Config::kCtasPerSm: 2 for the decode kernel that shares a SM
// (TWO_CTAS_PER_SM), whose threads then hold at most 128 registers.
template <class Config, bool kPaged>
__global__ void __launch_bounds__(Config::kThreads, Config::kCtasPerSm)
    forward_kernel(const __grid_constant__ ForwardKernelParams p) {
  extern __shared__ unsigned char shared_buffer[];
  // 128B-swizzle atoms (TMA boxes, wgmma descriptors) need 1024-byte alignment.
  const std::uint32_t raw = ptx::cvta_to_shared(shared_buffer);
  const SharedPipeline<Config> pipe{(raw + 1023u) & ~1023u};

  if (threadIdx.x == 0) pipe.init_barriers();
  if constexpr (Config::kRowSumMma) {
    // The constant operand of the row sums (consumer.h gemm_pv), written once per CTA through
    // the generic proxy and fenced before the barrier, so that the tensor cores (async proxy)
    // read it after it.
    const std::uint32_t one_pair =
        std::is_same_v<typename Config::Element, __half> ? 0x3C003C00u : 0x3F803F80u;
    auto fill_ones = [&](std::uint32_t at, int bytes) {
      for (int i = static_cast<int>(threadIdx.x); i < bytes / 4; i += Config::kThreads) {
        ptx::st_shared_b32(at + 4 * i, one_pair);
      }
    };
    fill_ones(pipe.ones(), Config::kOnesBytes);
    if constexpr (Config::kRowSumFused) {
      for (int stage = 0; stage < Config::kStages; ++stage) {
        fill_ones(pipe.v_ones(stage), Config::kKVChunkBytes);
      }
    }
    ptx::fence_proxy_async_shared_cta();
  }
  // PREPARE_OVERLAP (forward_config.h): launched while the prepare kernel may still run, every thread waits
  // for its per-sequence lengths, maps and tile counter before the first read of any of them (past the
  // barrier below).
  if constexpr (FLASHATTN_SM90_PREPARE_OVERLAP != 0) {
    if (p.sequence_maps != nullptr) ptx::griddepcontrol_wait();
  }
  // Every thread must see initialised barriers (and the ones block) before its first use;
  // under K/V multicast every thread of the cluster, whose producers complete bytes on
  // and whose consumers arrive at this CTA's barriers.
  if constexpr (Config::kClusterM > 1) {
    ptx::barrier_cluster_arrive();
    ptx::barrier_cluster_wait();
  } else {
    __syncthreads();
  }
  // CLUSTER_COMBINE (a split tile's pieces in clusters, decode_consumer.h): each CTA that owns rows of the
  // tile expects every piece's bytes of those rows on its cluster_full (initialised above), and every thread
  // arrives on the cluster barrier, on which a consumer thread waits before its first st.async into a peer
  // (send_piece_record): no wait here, so the loads start at once. The arrival is relaxed: what the peers
  // need ordered before their st.async is cluster_full's initialisation, which init_barriers' fence releases
  // to the cluster; a release arrival (a MEMBAR.ALL.GPU) held the producer 0.3-0.4 us before its first load
  // (session 53's trace). The expectation may reach cluster_full after a peer's bytes: its transaction count
  // goes negative meanwhile, and the phase cannot complete before this CTA's one arrival, which carries it.
  if constexpr (Config::kClusterPieces) {
    if (p.split_kv.clustered()) {
      if (threadIdx.x == 0) {
        const std::uint32_t bytes = owner_bytes<Config>(p.split_kv, static_cast<int>(ptx::cluster_ctarank()));
        if (bytes > 0) ptx::mbarrier_arrive_expect_tx(pipe.cluster_full(), bytes);
      }
      ptx::barrier_cluster_arrive_relaxed();
    }
  }

  constexpr int kProducerRegisters = kPaged ? Config::kPagedProducerRegisters : Config::kProducerRegisters;
  constexpr int kConsumerRegisters = kPaged ? Config::kPagedConsumerRegisters : Config::kConsumerRegisters;
  // The paged kernels hand the tile index over alone (producer_loop_paged): with the decoded tile their
  // consumers spilled in the key-block loop (d128, 232 registers).
  constexpr bool kDecodedHandoff = Config::kDecodedHandoff && !kPaged;
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    if constexpr (Config::kMovesRegisters) ptx::setmaxnreg_dec<kProducerRegisters>();
    if constexpr (kPaged) {
      if (threadIdx.x < 32) producer_loop_paged<Config>(p, pipe);  // paged K/V: a gathering warp
    } else if (threadIdx.x == 0) {
      producer_loop<Config>(p, pipe);
    }
  } else {
    if constexpr (Config::kMovesRegisters) ptx::setmaxnreg_inc<kConsumerRegisters>();
    if constexpr (Config::kNarrowRows) {
      narrow_consumer_loop<Config, kPaged>(p, pipe);
    } else if constexpr (Config::kUniformConsumer) {
      // threadIdx.x / 128 is the same in every lane of a warp, but ptxas cannot prove it, so
      // values derived from it (Q's rows, O's buffer, per-consumer barrier addresses) live in
      // per-thread registers and pull the shared base with them off the uniform datapath
      // (docs/kernel-notes-sm90.md, sm90q). A shuffle from a constant lane is warp-uniform by
      // construction, and ptxas knows it.
      consumer_loop<Config, kDecodedHandoff, kPaged>(p, pipe, __shfl_sync(0xffffffffu, warpgroup, 0) - 1);
    } else {
      consumer_loop<Config, kDecodedHandoff, kPaged>(p, pipe, warpgroup - 1);
    }
  }
  // K/V multicast: no CTA leaves while a peer may still arrive on its empty barriers
  // (its consumers' last releases) or write into its stages.
  if constexpr (Config::kClusterM > 1) {
    ptx::barrier_cluster_arrive();
    ptx::barrier_cluster_wait();
  }
}

}  // namespace flashattn::detail::cuda_sm90
