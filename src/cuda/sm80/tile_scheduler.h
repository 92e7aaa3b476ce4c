// Which (query tile, sequence, head, split) a CTA computes.
//
// The grid is one-dimensional (grid.x allows 2^31 - 1 CTAs, where y and z stop
// at 65535), and a CTA walks tiles with a grid stride, so no problem size
// overflows the grid.
//
// Two orders, chosen by the host (backend.cu: heads_fastest_order):
// - heads fastest: tile t's query block is m_blocks - 1 - t / (batch * heads * splits). Every
//   head's last query tiles go first, which with a causal mask (the last tiles see the most keys)
//   is a longest-first schedule with a short tail.
// - query tiles of one (sequence, head, split) consecutive, last first: the CTAs that run side by
//   side read the same K/V and share it in L2 (FlashAttention 2's grid has the m-block in
//   blockIdx.x for the same reason). When every tile costs the same (no causal mask) this is
//   as balanced as the other and the K/V re-reads of short sequences hit L2.
// Heads of one GQA group are adjacent in both, so their tiles run close together.
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
