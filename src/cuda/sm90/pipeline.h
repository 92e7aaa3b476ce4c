// The shared-memory pipeline between the producer warp and the consumer
// warpgroups: addresses of the Q, K, V, O buffers and of the mbarriers that
// hand them over, derived from the Config layout and one aligned base address.
//
// Barriers (each purpose, one barrier):
//   q_full        producer -> consumers: Q of the current tile has landed (TMA tx bytes).
//                 Config::kSplitQ: one q_full / q_empty pair per consumer warpgroup, for
//                 its own 64 rows of Q (the box loaded for it alone).
//   q_empty       consumers -> producer: every consumer warp is done reading Q
//                 (its last S GEMM completed, or, when O reuses Q's buffer, the
//                 O store has read it), so the next tile's Q may overwrite it.
//   k_full[s]     producer -> consumers: K stage s has landed.
//   k_empty[s]    consumers -> producer: all consumer warps' S GEMMs on stage s completed.
//   v_full[s], v_empty[s]: the same for V and the O += P V GEMMs. Config::kOOverV: also for the O
//                 stores, which take one use of the V ring per consumer after each tile's blocks
//                 (VRing below): the producer hands such a use over with a plain arrive on v_full
//                 once the stage's previous use was released, and the consumer that stores its O
//                 there releases it for all consumer warps once the TMA store has read it.
//   tile_full     producer -> consumers: tile_slot holds the next tile index
//                 (>= num_tiles: no more work); one arrive by the producer. Config::kDecodedHandoff:
//                 decoded_slot holds it, decoded by the dense producer (forward_kernel).
//   tile_empty    consumers -> producer: every consumer thread has read it.
// (tile_scheduler.h: publish_tile / receive_tile.)
// Empty barriers count one arrival per consumer warp (lane 0, after that warp's
// wgmma.wait_group): completion is tracked per thread, so every warp vouches
// for itself. Full barriers count the producer's one arrive_expect_tx.
// K/V multicast (Config::kClusterM > 1): a K/V stage is written by every producer of
// the cluster (each its slice, forward_config.h), so k_empty / v_empty count the
// consumer warps of all the cluster's CTAs, each of which arrives on the stage's empty
// barrier in every CTA (release_kv); a full barrier's bytes come from every producer,
// its one arrival (with the whole stage's bytes expected) from the CTA's own.
#pragma once

#include <cstdint>

#include "cuda/ptx/cluster.h"
#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

template <class Config>
struct SharedPipeline {
  std::uint32_t base;                                      // shared address, 1024-byte aligned
  static constexpr int kQPairs = 5 + 4 * Config::kStages;  // first barrier index of kSplitQ's pairs

  __device__ std::uint32_t q() const { return base + Config::kQOffset; }
  __device__ std::uint32_t k(int stage) const { return base + Config::kKOffset + stage * Config::kKVBytes; }
  __device__ std::uint32_t v(int stage) const {
    return base + Config::kVOffset + stage * Config::kVStageBytes;
  }
  // Config::kRowSumFused: the chunk of ones after V stage `stage`'s two chunks (written once per CTA by
  // forward_kernel, read by the P V GEMM as its third chunk of B).
  __device__ std::uint32_t v_ones(int stage) const {
    return v(stage) + Config::kChunksV * Config::kKVChunkBytes;
  }
  __device__ std::uint32_t o(int warpgroup) const {
    return base + Config::kOOffset + warpgroup * Config::kOWarpgroupStride;
  }
  // Config::kRowSumMma: kOnesBytes of the element type's 1.0 (fill_ones), read by the P V GEMM.
  __device__ std::uint32_t ones() const { return base + Config::kOnesOffset; }
  // Config::kNarrowRows (decode_consumer.h): P^T's buffer `buffer` (0 / 1) and the exchange's (0 / 1: row
  // maxima by block parity, 2: row sums), each 4 warps x kNarrowRowsMax floats.
  __device__ std::uint32_t narrow_p(int buffer) const {
    return base + Config::kNarrowOffset + buffer * Config::kNarrowPBytes;
  }
  __device__ std::uint32_t narrow_exchange(int buffer) const {
    return base + Config::kNarrowExchangeOffset + buffer * 4 * 8 * 4;
  }

  __device__ std::uint32_t barrier(int index) const { return base + Config::kBarrierOffset + 8 * index; }
  // Config::kSplitQ: consumer c's rows of Q have their own pair (after the tile-index slot);
  // otherwise one pair for the whole tile, whatever `part`.
  __device__ std::uint32_t q_full(int part = 0) const {
    return Config::kSplitQ ? barrier(kQPairs + 2 * part) : barrier(0);
  }
  __device__ std::uint32_t q_empty(int part = 0) const {
    return Config::kSplitQ ? barrier(kQPairs + 2 * part + 1) : barrier(1);
  }
  // Shared address of Q part `part`'s rows (kQBoxRows of them in each column chunk).
  __device__ std::uint32_t q_part(int part) const {
    return q() + part * Config::kQBoxRows * Config::kRowBytes;
  }
  __device__ std::uint32_t k_full(int stage) const { return barrier(2 + stage); }
  __device__ std::uint32_t k_empty(int stage) const { return barrier(2 + Config::kStages + stage); }
  __device__ std::uint32_t v_full(int stage) const { return barrier(2 + 2 * Config::kStages + stage); }
  __device__ std::uint32_t v_empty(int stage) const { return barrier(2 + 3 * Config::kStages + stage); }
  __device__ std::uint32_t tile_full() const { return barrier(2 + 4 * Config::kStages); }
  __device__ std::uint32_t tile_empty() const { return barrier(3 + 4 * Config::kStages); }
  __device__ std::uint32_t tile_slot() const { return barrier(4 + 4 * Config::kStages); }
  // Config::kSingleConsumer: the paged producer's barrier for the V boxes of a sequence's last key block,
  // which it completes itself (producer.h kTailBoxes); after the others.
  static constexpr int kTailFull = kQPairs + (Config::kSplitQ ? 2 * Config::kQParts : 0);
  __device__ std::uint32_t tail_full() const { return barrier(kTailFull); }
  // Config::kNarrowRows: the barrier on which a row owner of the cluster receives every piece's values of its
  // rows (their bytes by st.async, decode_consumer.h send_piece_record; expected once per launch,
  // forward_kernel); after tail_full.
  __device__ std::uint32_t cluster_full() const { return barrier(kTailFull + 1); }
  // Config::kClusterPieces: the slot of the cluster's piece `piece` (slot_bytes: cluster_slot_bytes of the
  // launch's rows; its rows of dv values, then their LSEs).
  __device__ std::uint32_t cluster_record(int piece, std::uint32_t slot_bytes) const {
    return base + Config::kClusterRecordsOffset + piece * slot_bytes;
  }
  __device__ TileSlot tile_handoff() const {
    return TileSlot{Config::kDecodedHandoff ? decoded_slot() : tile_slot(), tile_full(), tile_empty()};
  }
  // Config::kDecodedHandoff: the decoded tile (tile_scheduler.h DecodedTile) after the barriers, 16-byte
  // aligned.
  __device__ std::uint32_t decoded_slot() const {
    return base + Config::kBarrierOffset + Config::kDecodedSlotOffset;
  }

  __device__ void init_barriers() const {
    // q_empty: one arrival per consumer warp that reads the part (kSplitQ: a warpgroup's four).
#pragma unroll
    for (int part = 0; part < Config::kQParts; ++part) {
      ptx::mbarrier_init(q_full(part), 1);
      ptx::mbarrier_init(q_empty(part), Config::kConsumerWarps / Config::kQParts);
    }
    for (int s = 0; s < Config::kStages; ++s) {
      ptx::mbarrier_init(k_full(s), 1);
      ptx::mbarrier_init(k_empty(s), Config::kConsumerWarps * Config::kClusterM);
      ptx::mbarrier_init(v_full(s), 1);
      ptx::mbarrier_init(v_empty(s), Config::kConsumerWarps * Config::kClusterM);
    }
    ptx::mbarrier_init(tile_full(), 1);
    ptx::mbarrier_init(tile_empty(), 128 * Config::kConsumerWarpgroups);
    if constexpr (Config::kSingleConsumer) ptx::mbarrier_init(tail_full(), 1);
    if constexpr (Config::kNarrowRows) ptx::mbarrier_init(cluster_full(), 1);
    ptx::fence_mbarrier_init();
  }

  // A consumer warp's release of a K or V stage (k_empty / v_empty): in every CTA of
  // the cluster under K/V multicast, else in its own.
  __device__ void release_kv(std::uint32_t empty_bar) const {
    if constexpr (Config::kClusterM == 1) {
      ptx::mbarrier_arrive(empty_bar);
    } else {
#pragma unroll
      for (int rank = 0; rank < Config::kClusterM; ++rank) {
        ptx::mbarrier_arrive_cluster(ptx::mapa_shared(empty_bar, rank));
      }
    }
  }
  // The same, made only where `pred` holds (the warp's leader lane), without a branch.
  __device__ void release_kv_if(std::uint32_t empty_bar, bool pred) const {
    if constexpr (Config::kClusterM == 1) {
      ptx::mbarrier_arrive_if(empty_bar, pred);
    } else {
#pragma unroll
      for (int rank = 0; rank < Config::kClusterM; ++rank) {
        ptx::mbarrier_arrive_cluster_if(ptx::mapa_shared(empty_bar, rank), pred);
      }
    }
  }
};

// Rows [first_row, kBlockN) of every 64-column chunk of the V stage at `v` set to zero by `threads` threads
// (ptx::zero_rows_128b). The caller fences the stores for the async proxy before the GEMM.
template <class Config>
__device__ __forceinline__ void zero_v_rows(std::uint32_t v, int first_row, int t, int threads) {
  static_assert(Config::kRowBytes == 128);
  ptx::zero_rows_128b(v, Config::kKVChunkBytes, Config::kChunksV, first_row, Config::kBlockN, t, threads);
}

// Position in the K/V ring: stage index and the parity of its current phase.
template <int kStages>
struct RingPosition {
  int stage = 0;
  std::uint32_t phase = 0;
  __device__ void advance() {
    if (++stage == kStages) stage = 0, phase ^= 1;
  }
};

// Config::kOOverV: the V ring runs ahead of the K ring by the O stores' uses, one per consumer and tile:
// with two stages and two consumers one whole turn of the ring, so a V use sits in the same stage as its
// block's K use, its phase flipped once per tile so far. Without kOOverV the two rings coincide.
template <class Config>
struct VRing {
  std::uint32_t flip = 0;
  // The V use of the block whose K use is at `k`.
  __device__ RingPosition<Config::kStages> at(RingPosition<Config::kStages> k) const {
    if constexpr (Config::kOOverV) k.phase ^= flip;
    return k;
  }
  // Past a tile's O stores.
  __device__ void pass_output_slots() {
    if constexpr (Config::kOOverV) flip ^= 1;
  }
};

}  // namespace flashattn::detail::cuda_sm90
