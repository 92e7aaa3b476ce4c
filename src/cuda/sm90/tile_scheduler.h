// Persistent tile scheduler: the grid has at most one CTA per SM and CTA c works
// on tiles c, c + gridDim.x, ... A tile is (query block, head, batch).
//
// Order: head-major, query blocks descending inside a head. Consecutive tiles,
// which run concurrently on neighbouring SMs, then share one (batch, kv head),
// so its K/V stream through L2 once for all of them instead of once per tile;
// descending query blocks put the longest causal tiles first in each head.
// Producer and consumers walk the same static sequence, so no state is shared.
#pragma once

#include "cuda/sm90/kernel_params.h"

namespace flashattn::detail::cuda_sm90 {

struct WorkTile {
  int m_block, head, batch;
};

struct StaticTileScheduler {
  int tile;  // current linear tile index

  __device__ explicit StaticTileScheduler() : tile(static_cast<int>(blockIdx.x)) {}
  __device__ bool valid(const ForwardKernelParams& p) const { return tile < p.num_tiles; }
  __device__ void advance() { tile += static_cast<int>(gridDim.x); }
  __device__ WorkTile work(const ForwardKernelParams& p) const {
    const int bh = tile / p.m_blocks;
    WorkTile w;
    w.m_block = p.m_blocks - 1 - (tile - bh * p.m_blocks);
    w.head = bh % p.heads;
    w.batch = bh / p.heads;
    return w;
  }
};

}  // namespace flashattn::detail::cuda_sm90
