// Persistent, dynamic tile scheduler. The grid has at most one CTA per SM; CTA c
// starts on tile c, and its producer thread claims each further tile with one
// atomicAdd on a counter in the caller's workspace (zeroed by the launch), so
// CTAs that drew short causal tiles simply take more of them. The producer
// passes the tile index to the consumers through one shared-memory slot guarded
// by two mbarriers (publish_tile / receive_tile below).
//
// Order of the linear tile index (a tile is (query block, head, batch)):
// (batch, head) pairs are grouped in L2 sections of consecutive query heads whose
// K/V fit in a part of L2; inside a section query blocks run last-to-first
// (longest causal tiles first), heads fastest. Concurrent tiles then share few
// K/V heads, which stream through L2 once for all of them. The dynamic schedule's
// last section is large enough that its longest tiles do not start at the end
// (tile_sections.h). Causal problems whose sections hold one kv head take their
// query blocks in complementary couples instead, a couple per claim (tile_sections.h
// paired, claim_next_tile).
#pragma once

#include <cstdint>

#include "common/fast_division.h"
#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/tile_sections.h"

namespace flashattn::detail::cuda_sm90 {

struct WorkTile {
  int m_block, head, batch;
  int seqlen_q, seqlen_k;  // of this tile's sequence
  int q_offset;            // global row of its query 0 (LSE address; varlen only)
  int map_batch;           // batch coordinate in the tensor maps (0 with per-sequence maps)
};

// True when the tile has no query rows (a short sequence of a variable-length
// batch, whose tiles are enumerated up to the longest one): skipped by the producer.
// Rows are packed rows (seqlen_q x pack) under packed GQA.
template <int kBlockM>
__device__ __forceinline__ bool tile_empty(const ForwardKernelParams& p, const WorkTile& w) {
  return w.m_block * kBlockM >= (w.seqlen_q << p.pack_shift);
}

// The tensor maps a tile's loads and stores go through.
__device__ __forceinline__ const SequenceMaps* tile_maps(const ForwardKernelParams& p, const WorkTile& w) {
  return p.sequence_maps != nullptr ? &p.sequence_maps[w.batch] : &p.maps;
}
__device__ __forceinline__ const CUtensorMap* map_q(const ForwardKernelParams& p, const WorkTile& w) {
  return p.sequence_maps != nullptr ? &p.sequence_maps[w.batch].q : &p.maps.q;
}
__device__ __forceinline__ const CUtensorMap* map_o(const ForwardKernelParams& p, const WorkTile& w) {
  return p.sequence_maps != nullptr ? &p.sequence_maps[w.batch].o : &p.maps.o;
}

// kClusterM = 2 (K/V multicast, forward_config.h): tiles 2c and 2c + 1 are the two
// adjacent query blocks of one head that cluster c's CTAs (ranks 0 and 1) work on
// together: the same order over pairs of query blocks (m_blocks is even there, and the
// sections count pairs of query blocks). CTA b starts on tile b and strides by the (even)
// grid, so it keeps its rank's half.
// A KV cache's sequence b (CacheLengths): the cache position of its key 0 and its number of keys, every value
// read clamped as cuda_sm80::clipped_sequence_lengths clamps it.
__device__ __forceinline__ int clamp_index(int x, int hi) { return x < 0 ? 0 : (x > hi ? hi : x); }
__device__ __forceinline__ int cache_key_offset(const CacheLengths& c, int b) {
  return c.leftpad != nullptr ? clamp_index(c.leftpad[b], c.capacity) : 0;
}
__device__ __forceinline__ int cache_keys(const CacheLengths& c, int b) {
  const int end =
      c.cache_seqlens != nullptr ? clamp_index(c.cache_seqlens[b], c.capacity - c.appended) : c.capacity;
  return max(end + c.appended - cache_key_offset(c, b), 0);
}

// kCacheLengths (Config::kCacheLengths): the launch may carry a KV cache's lengths (p.cache.active).
template <int kClusterM = 1, bool kCacheLengths = false>
__device__ __forceinline__ WorkTile tile_work(const ForwardKernelParams& p, int tile) {
  static_assert(kClusterM == 1 || kClusterM == 2);
  WorkTile w;
  const SectionUnit u = section_unit(p.sections, kClusterM == 1 ? tile : tile >> 1);
  const int m_rank = kClusterM == 1 ? u.m_rank : 2 * u.m_rank + (tile & 1);
  w.m_block = p.m_blocks - 1 - m_rank;
  w.batch = fast_divide(u.bh, p.heads_div);
  w.head = u.bh - w.batch * p.heads;
  if (p.sequences != nullptr) {
    const SequenceInfo s = p.sequences[w.batch];
    w.seqlen_q = s.seqlen_q, w.seqlen_k = s.seqlen_k, w.q_offset = s.q_offset, w.map_batch = 0;
  } else if (kCacheLengths && p.cache.active) {
    w.seqlen_q = p.seqlen_q, w.seqlen_k = cache_keys(p.cache, w.batch), w.q_offset = 0, w.map_batch = w.batch;
  } else {
    w.seqlen_q = p.seqlen_q, w.seqlen_k = p.seqlen_k, w.q_offset = 0, w.map_batch = w.batch;
  }
  return w;
}

// The producer's next tile after `tile`. When every tile costs the same
// (static_schedule: no causal/window mask, one length) CTAs simply stride by
// the grid size: no atomic, and the same order as the dynamic claims would give.
// Paired sections (tile_sections.h): units come in couples 2c, 2c + 1 of equal total length, and a CTA (a
// cluster, each CTA on its rank's tiles of the two units) takes a couple at once: after a couple's first unit
// the second, and then the next couple, claimed by one atomic (dynamic schedule) or its group's couple one
// grid further on (static couples: every couple is the same work). A unit is kClusterM consecutive tiles.
template <int kClusterM = 1>
__device__ __forceinline__ int claim_next_tile(const ForwardKernelParams& p, int tile) {
  const int grid = static_cast<int>(gridDim.x);
  if (p.sections.paired) {
    if (p.static_schedule) return static_couple_next(tile, grid, kClusterM);
    if (couple_first_unit(tile, kClusterM)) return tile + kClusterM;
    return 2 * (grid + atomicAdd(p.tile_counter, 1));  // dynamic couples run with kClusterM 1 only
  }
  if (p.static_schedule) return tile + grid;
  return grid + atomicAdd(p.tile_counter, 1);
}
// CTA b's first tile: tile b, or under paired sections the first unit of couple b / kClusterM (its rank's
// tile).
template <int kClusterM = 1>
__device__ __forceinline__ int first_tile(const ForwardKernelParams& p) {
  const int b = static_cast<int>(blockIdx.x);
  return p.sections.paired ? couple_first_tile(b, kClusterM) : b;
}

// Tile-index handoff, producer -> consumers, through one word of shared memory
// (`slot`). Every access to it is ordered by a barrier that every accessing
// thread itself waits on or arrives at:
//   producer: wait empty  st.shared slot  arrive full (count 1)
//   consumer: wait full   ld.shared slot  arrive empty (every consumer thread)
// so each consumer thread's read happens before the next write, and the write
// before each thread's read (mbarrier arrive releases, try_wait acquires). The
// first design published the index with the q_full arrive and took it back with
// q_empty, which only lane 0 of each consumer warp arrives at: correct only
// because a warp's lanes run together, which racecheck (rightly) does not assume;
// a version on named barriers (bar.arrive / bar.sync) still drew racecheck
// reports (docs/kernel-notes-sm90.md, 2026-11-22).
struct TileSlot {
  std::uint32_t slot, full, empty;  // shared addresses (pipeline.h)
};

// `parity`: the number of indices published (received) before this one, mod 2.
__device__ __forceinline__ void publish_tile(const TileSlot& t, int tile, std::uint32_t parity) {
  ptx::mbarrier_wait_parity(t.empty, parity ^ 1);  // the first wait passes on a fresh barrier
  ptx::st_shared_b32(t.slot, static_cast<std::uint32_t>(tile));
  ptx::mbarrier_arrive(t.full);
}

__device__ __forceinline__ int receive_tile(const TileSlot& t, std::uint32_t parity) {
  ptx::mbarrier_wait_parity(t.full, parity);
  const int tile = static_cast<int>(ptx::ld_shared_b32(t.slot));
  ptx::mbarrier_arrive(t.empty);
  return tile;
}

// Config::kDecodedHandoff (forward_config.h): the tile as the producer decoded it for its own loads, handed
// over whole through the same protocol (the slot is then 48 bytes, pipeline.h decoded_slot): its index, its
// WorkTile and its key blocks [first_block, end_block) (score_mask.h key_block_range). Past the last tile
// only `tile` (>= num_tiles) is meaningful.
// publish_decoded_tile / receive_decoded_tile copy WorkTile field by field: a new field must join them.
static_assert(sizeof(WorkTile) == 7 * sizeof(int), "the decoded handoff carries WorkTile's seven fields");
struct DecodedTile {
  int tile;
  WorkTile w;
  int first_block, end_block;
};

__device__ __forceinline__ void publish_decoded_tile(const TileSlot& t, const DecodedTile& d,
                                                     std::uint32_t parity) {
  auto u = [](int x) { return static_cast<unsigned>(x); };
  ptx::mbarrier_wait_parity(t.empty, parity ^ 1);
  ptx::st_shared_v4_b32(t.slot, make_uint4(u(d.tile), u(d.w.m_block), u(d.w.head), u(d.w.batch)));
  ptx::st_shared_v4_b32(t.slot + 16,
                        make_uint4(u(d.w.seqlen_q), u(d.w.seqlen_k), u(d.w.q_offset), u(d.w.map_batch)));
  ptx::st_shared_v4_b32(t.slot + 32, make_uint4(u(d.first_block), u(d.end_block), 0u, 0u));
  ptx::mbarrier_arrive(t.full);
}

__device__ __forceinline__ DecodedTile receive_decoded_tile(const TileSlot& t, std::uint32_t parity) {
  ptx::mbarrier_wait_parity(t.full, parity);
  const uint4 a = ptx::ld_shared_v4_b32(t.slot);
  const uint4 b = ptx::ld_shared_v4_b32(t.slot + 16);
  const uint4 c = ptx::ld_shared_v4_b32(t.slot + 32);
  ptx::mbarrier_arrive(t.empty);
  auto i = [](unsigned x) { return static_cast<int>(x); };
  DecodedTile d;
  d.tile = i(a.x);
  d.w.m_block = i(a.y), d.w.head = i(a.z), d.w.batch = i(a.w);
  d.w.seqlen_q = i(b.x), d.w.seqlen_k = i(b.y), d.w.q_offset = i(b.z), d.w.map_batch = i(b.w);
  d.first_block = i(c.x), d.end_block = i(c.y);
  return d;
}

}  // namespace flashattn::detail::cuda_sm90
