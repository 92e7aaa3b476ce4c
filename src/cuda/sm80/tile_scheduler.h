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
// - grouped heads fastest (head_group > 0, with heads_fastest): the triples are dealt out in groups of
//   head_group, each group heads fastest as above, one group after the other. Longest first within a
//   group, and the next group's long tiles start while the previous group's short ones finish; the
//   group is small enough that its K/V stays in L2 while its tiles run (heads fastest over all heads
//   re-reads each head's K/V from DRAM once per query tile at s >= 1k), and large enough that its
//   tiles outlast its longest one (grouped_head_count).
// Heads of one GQA group are adjacent in all, so their tiles run close together.
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

// Index arithmetic in 32 bits when every tile index fits (always, short of 2^31 tiles): a 64-bit
// division is a ~70-instruction subroutine, and decoding one tile took five of them, paid once per
// CTA -- a few percent of a 15 us CTA at s = 512.
template <typename Int>
__device__ __forceinline__ TileIndex decode_tile_as(const ForwardKernelArgs& args, Int tile) {
  const Int m_blocks = static_cast<Int>(args.m_blocks), splits = static_cast<Int>(args.num_splits);
  const Int heads = static_cast<Int>(args.p.heads);
  TileIndex t;
  Int rest;
  if (args.heads_fastest) {
    const Int per_m_block = static_cast<Int>(args.p.batch) * heads * splits;
    const Int group = static_cast<Int>(args.head_group);
    if (group > 0 && group < per_m_block) {
      // Group g holds triples [g * group, g * group + size); the last one may be smaller.
      const Int per_group = group * m_blocks;
      const Int g = tile / per_group;
      const Int first = g * group;
      const Int size = per_m_block - first < group ? per_m_block - first : group;
      const Int within = tile - g * per_group;
      t.m_block = args.m_blocks - 1 - static_cast<int>(within / size);
      rest = first + within % size;
    } else {
      t.m_block = args.m_blocks - 1 - static_cast<int>(tile / per_m_block);
      rest = tile % per_m_block;
    }
  } else {
    t.m_block = args.m_blocks - 1 - static_cast<int>(tile % m_blocks);
    rest = tile / m_blocks;
  }
  t.split = static_cast<int>(rest % splits);
  rest /= splits;
  t.head = static_cast<std::int64_t>(rest % heads);
  t.batch = static_cast<std::int64_t>(rest / heads);
  return t;
}

// decode_tile_as<std::uint32_t> with every division by a launch constant as a multiply-high and a
// shift (lean_setup; the host's divisors in ForwardKernelArgs). The 32-bit divisions by values read
// from the kernel arguments compile to per-thread float reciprocal sequences (I2F, MUFU.RCP and
// corrections, ~20 dependent instructions each, six of them plus the GQA group's), paid by every CTA
// before its first copy; the multiply-highs are a few integer instructions on values that are the
// same in every thread. Needs tile < 2^31 (fast_divide's range): total_tiles <= 0x7fffffff.
__device__ __forceinline__ TileIndex decode_tile_fast(const ForwardKernelArgs& args, int tile) {
  TileIndex t;
  int rest;
  if (args.heads_fastest) {
    const int per_m_block = static_cast<int>(args.p.batch * args.p.heads) * args.num_splits;
    const int group = args.head_group;
    if (group > 0 && group < per_m_block) {
      const int g = fast_divide(tile, args.div_per_group);
      const int first = g * group;
      const bool full = per_m_block - first >= group;  // the last group may be smaller
      const int within = tile - g * group * args.m_blocks;
      const int m = fast_divide(within, full ? args.div_group : args.div_last_group);
      t.m_block = args.m_blocks - 1 - m;
      rest = first + within - m * (full ? group : per_m_block - first);
    } else {
      const int m = fast_divide(tile, args.div_per_m_block);
      t.m_block = args.m_blocks - 1 - m;
      rest = tile - m * per_m_block;
    }
  } else {
    const int q = fast_divide(tile, args.div_m_blocks);
    t.m_block = args.m_blocks - 1 - (tile - q * args.m_blocks);
    rest = q;
  }
  const int q_split = fast_divide(rest, args.div_splits);
  t.split = rest - q_split * args.num_splits;
  const int q_head = fast_divide(q_split, args.div_heads);
  t.head = q_split - q_head * static_cast<int>(args.p.heads);
  t.batch = q_head;
  return t;
}

// Triples per group of the grouped order: the group's tiles, m_blocks * (m_blocks + 1) / 2 longest-tile
// units per triple under a causal mask, should keep `slots` CTAs busy `factor` times as long as its
// longest tile (m_blocks units) runs, so that the last group's tail is short:
// head_group * (m_blocks + 1) / 2 >= factor * slots. Groups are then evened out (the last one is not
// left small). 0 (no grouping) when one group would hold every triple.
inline int grouped_head_count(std::int64_t triples, int m_blocks, std::int64_t slots, int factor) {
  const std::int64_t wanted = (2 * factor * slots + m_blocks) / (m_blocks + 1);
  if (wanted <= 0 || wanted >= triples) return 0;
  const std::int64_t groups = (triples + wanted - 1) / wanted;
  return static_cast<int>((triples + groups - 1) / groups);
}

__device__ __forceinline__ TileIndex decode_tile(const ForwardKernelArgs& args, std::int64_t tile) {
  if (args.total_tiles <= 0x7fffffff)
    return decode_tile_as<std::uint32_t>(args, static_cast<std::uint32_t>(tile));
  return decode_tile_as<std::int64_t>(args, tile);
}

}  // namespace flashattn::detail::cuda_sm80
