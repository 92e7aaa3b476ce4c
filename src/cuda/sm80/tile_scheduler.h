// Which (query tile, sequence, head, split) a CTA computes.
//
// The grid is one-dimensional (grid.x allows 2^31 - 1 CTAs, where y and z stop
// at 65535), and a CTA walks tiles with a grid stride, so no problem size
// overflows the grid.
//
// Order (v7): the query tiles of one (sequence, head, split) are consecutive,
// so the CTAs that run side by side read the same K/V and share it in L2
// (FlashAttention 2's grid has the m-block in blockIdx.x for the same reason).
// With heads fastest (the order before v7), the 264 CTAs of one wave at
// s = 512 touched 264 different heads' K/V and each head's K/V came from DRAM
// once per query tile: at 128-row tiles a CTA reads about as many bytes as it
// does FLOPs / 110, at the H200's ratio of MMA rate to DRAM bandwidth. Within
// a (sequence, head) the query tiles are handed out last-to-first: with a
// causal mask the last tiles see the most keys, and starting them first keeps
// the tail of the launch short. Heads of one GQA group are adjacent, so their
// tiles still run close together.
#pragma once

#include <cstdint>

#include "cuda/sm80/kernel_args.h"

namespace flashattn::detail::cuda_sm80 {

struct TileIndex {
  int m_block;
  std::int64_t batch;
  std::int64_t head;
  int split;
};

__device__ __forceinline__ TileIndex decode_tile(const ForwardKernelArgs& args, std::int64_t tile) {
  TileIndex t;
  std::int64_t rest;
  if (args.heads_fastest) {
    const std::int64_t per_m_block = args.p.batch * args.p.heads * args.num_splits;
    t.m_block = args.m_blocks - 1 - static_cast<int>(tile / per_m_block);
    rest = tile % per_m_block;
  } else {
    t.m_block = args.m_blocks - 1 - static_cast<int>(tile % args.m_blocks);
    rest = tile / args.m_blocks;
  }
  t.split = static_cast<int>(rest % args.num_splits);
  rest /= args.num_splits;
  t.head = rest % args.p.heads;
  t.batch = rest / args.p.heads;
  return t;
}

}  // namespace flashattn::detail::cuda_sm80
