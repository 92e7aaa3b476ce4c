// Producer warp: one thread walks the tile sequence and issues every TMA load
// (Q once per tile, then K and V of each key block into the stage ring, last key
// block first, the order in which the consumers use them). It waits on a
// buffer's empty barrier before overwriting it; the first pass through the ring
// waits for parity 1, which a freshly initialised barrier reports as complete.
#pragma once

#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/pipeline.h"
#include "cuda/sm90/score_mask.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

template <class Config>
__device__ void producer_loop(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe) {
  ptx::prefetch_tensormap(&p.tma_q);
  ptx::prefetch_tensormap(&p.tma_k);
  ptx::prefetch_tensormap(&p.tma_v);
  RingPosition<Config::kStages> ring;
  std::uint32_t q_phase = 0;
  int tile = static_cast<int>(blockIdx.x);
  for (;;) {
    // Tiles of a short sequence past its last query row (variable length) carry no work.
    WorkTile w{};
    while (tile < p.num_tiles) {
      w = tile_work(p, tile);
      if (w.m_block * Config::kBlockM < (w.seqlen_q << p.pack_shift)) break;  // packed rows
      tile = claim_next_tile(p, tile);
    }
    // Q's buffer and the tile slot are free once every consumer warp released the previous Q.
    ptx::mbarrier_wait_parity(pipe.q_empty(), q_phase ^ 1);
    q_phase ^= 1;
    ptx::st_shared_b32(pipe.tile_slot(), static_cast<std::uint32_t>(tile));
    if (tile >= p.num_tiles) {
      ptx::mbarrier_arrive(pipe.q_full());  // no bytes: announces the end
      break;
    }
    const int kv_head = w.head / p.heads_per_kv;
    const KeyBlockRange range = key_block_range<Config>(p, w);
    const CUtensorMap* tma_q = map_q(p, w);
    const CUtensorMap* tma_k = map_k(p, w);
    const CUtensorMap* tma_v = map_v(p, w);
    if (p.sequence_maps != nullptr) {
      // Written by the prepare kernel through the generic proxy.
      ptx::tensormap_acquire_fence(tma_q);
      ptx::tensormap_acquire_fence(tma_k);
      ptx::tensormap_acquire_fence(tma_v);
    }

    ptx::mbarrier_arrive_expect_tx(pipe.q_full(), Config::kQBytes);
#pragma unroll
    for (int c = 0; c < Config::kChunks; ++c) {
      if (p.pack > 1) {  // packed GQA: one {64, pack, kBlockM / pack} box of the 5-D view per chunk
        ptx::tma_load_5d(pipe.q() + c * Config::kQChunkBytes, tma_q, pipe.q_full(), c * Config::kChunkCols, 0,
                         (w.m_block * Config::kBlockM) >> p.pack_shift, w.head, w.map_batch);
      } else {
        ptx::tma_load_4d(pipe.q() + c * Config::kQChunkBytes, tma_q, pipe.q_full(), c * Config::kChunkCols,
                         w.m_block * Config::kBlockM, w.head, w.map_batch);
      }
    }
    // Claimed now, used next iteration: the atomic's latency hides behind this tile's loads.
    tile = claim_next_tile(p, tile);

    for (int n = range.end - 1; n >= range.begin; --n) {
      ptx::mbarrier_wait_parity(pipe.k_empty(ring.stage), ring.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(pipe.k_full(ring.stage), Config::kKVBytes);
#pragma unroll
      for (int c = 0; c < Config::kChunks; ++c) {
        ptx::tma_load_4d(pipe.k(ring.stage) + c * Config::kKVChunkBytes, tma_k, pipe.k_full(ring.stage),
                         c * Config::kChunkCols, n * Config::kBlockN, kv_head, w.map_batch);
      }
      ptx::mbarrier_wait_parity(pipe.v_empty(ring.stage), ring.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(pipe.v_full(ring.stage), Config::kVBytes);
#pragma unroll
      for (int c = 0; c < Config::kChunksV; ++c) {
        ptx::tma_load_4d(pipe.v(ring.stage) + c * Config::kKVChunkBytes, tma_v, pipe.v_full(ring.stage),
                         c * Config::kChunkCols, n * Config::kBlockN, kv_head, w.map_batch);
      }
      ring.advance();
    }
  }
}

}  // namespace flashattn::detail::cuda_sm90
