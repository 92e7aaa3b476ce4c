// Persistent, dynamic tile scheduler. The grid has at most one CTA per SM; CTA c
// starts on tile c, and its producer thread claims each further tile with one
// atomicAdd on a counter in the caller's workspace (zeroed by the launch), so
// CTAs that drew short causal tiles simply take more of them. The producer
// passes the tile index to the consumers through shared memory together with
// the tile's Q (written before the arrive on q_full, read after the wait).
//
// Order of the linear tile index (a tile is (query block, head, batch)):
// (batch, head) pairs are grouped in L2 sections of sec_heads consecutive query
// heads whose K/V fit in about half of L2; inside a section query blocks run
// last-to-first (longest causal tiles first), heads fastest. Concurrent tiles
// then share few K/V heads, which stream through L2 once for all of them.
#pragma once

#include "cuda/sm90/kernel_params.h"

namespace flashattn::detail::cuda_sm90 {

struct WorkTile {
  int m_block, head, batch;
};

__device__ __forceinline__ WorkTile tile_work(const ForwardKernelParams& p, int tile) {
  const int per_section = p.sec_heads * p.m_blocks;
  const int section = tile / per_section;
  const int index = tile - section * per_section;
  const int first_bh = section * p.sec_heads;
  const int size = min(p.sec_heads, p.batch * p.heads - first_bh);
  const int m_rank = index / size;
  const int bh = first_bh + (index - m_rank * size);
  WorkTile w;
  w.m_block = p.m_blocks - 1 - m_rank;
  w.head = bh % p.heads;
  w.batch = bh / p.heads;
  return w;
}

// The producer's next tile after this CTA's first (blockIdx.x).
__device__ __forceinline__ int claim_next_tile(const ForwardKernelParams& p) {
  return static_cast<int>(gridDim.x) + atomicAdd(p.tile_counter, 1);
}

}  // namespace flashattn::detail::cuda_sm90
