// Which (query tile, sequence, head, split) a CTA computes.
//
// The grid is one-dimensional (grid.x allows 2^31 - 1 CTAs, where y and z stop
// at 65535), and a CTA walks tiles with a grid stride, so no problem size
// overflows the grid. Query tiles are handed out last-to-first: with a causal
// mask the last tiles see the most keys, and starting them first keeps the
// tail of the launch short. Heads vary fastest, so the q heads of one GQA group
// (which read the same K/V) run side by side and share L2.
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
  const std::int64_t per_m_block = args.p.batch * args.p.heads * args.num_splits;
  TileIndex t;
  t.m_block = args.m_blocks - 1 - static_cast<int>(tile / per_m_block);
  std::int64_t rest = tile % per_m_block;
  t.split = static_cast<int>(rest % args.num_splits);
  rest /= args.num_splits;
  t.head = rest % args.p.heads;
  t.batch = rest / args.p.heads;
  return t;
}

}  // namespace flashattn::detail::cuda_sm80
