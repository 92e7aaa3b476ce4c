// Which key blocks a query tile visits and which scores inside them are masked,
// by common/mask.h's visible_keys_in (the arithmetic of visible_keys, here in
// 32 bits: lengths are int, and 64-bit temporaries cost registers at d = 256):
// query i of a sequence with sq queries and sk keys sees keys
// [i + sk - sq - left, i + sk - sq + right] clipped to [0, sk)
// (left/right -1 = unbounded; causal is (-1, 0)).
#pragma once

#include <cmath>
#include <cstdint>

#include "common/mask.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

__device__ __forceinline__ BasicKeyRange<int> visible_keys_of(const ForwardKernelParams& p, const WorkTile& w,
                                                              int row) {
  return visible_keys_in<int>(p.window_left, p.window_right, row, w.seqlen_q, w.seqlen_k);
}

struct KeyBlockRange {
  int begin, end;  // key blocks [begin, end); empty when begin >= end
};

// The key blocks that the packed rows [packed_first, packed_first + rows), clipped to the sequence end
// and not empty, see: from the first row's first visible key to the last row's last one (windows slide
// with the row; packed GQA: packed row >> pack_shift is the query position); `none` when they see no key.
template <class Config>
__device__ __forceinline__ KeyBlockRange rows_key_block_range(const ForwardKernelParams& p, const WorkTile& w,
                                                              int packed_first, int rows,
                                                              const KeyBlockRange& none) {
  const int row_first = packed_first >> p.pack_shift;
  const int row_last = (min(packed_first + rows, w.seqlen_q << p.pack_shift) - 1) >> p.pack_shift;
  const int key_first = visible_keys_of(p, w, row_first).first;
  const int key_last = visible_keys_of(p, w, row_last).last;
  if (key_last < key_first) return none;
  return {key_first / Config::kBlockN, key_last / Config::kBlockN + 1};
}

// The key blocks a tile visits (empty when its rows see no key). Under K/V multicast (kClusterM 2) both CTAs
// of a cluster walk the blocks that the rows of both their query blocks see (tile_work: m_blocks even, the
// pair is m_block & ~1 and its successor), since every block is loaded half by each; under a causal mask that
// is one block more than the lower query block sees, which its consumers skip (kConsumerKeyRange).
template <class Config>
__device__ __forceinline__ KeyBlockRange key_block_range(const ForwardKernelParams& p, const WorkTile& w) {
  const int first_block = Config::kClusterM == 1 ? w.m_block : w.m_block & ~(Config::kClusterM - 1);
  return rows_key_block_range<Config>(p, w, first_block * Config::kBlockM,
                                      Config::kClusterM * Config::kBlockM, KeyBlockRange{0, 0});
}

// The key blocks consumer warpgroup `consumer` visits (forward_config.h kConsumerKeyRange): those
// its own 64 rows see, a sub-range of the tile's (visible_keys_in's bounds never decrease with the
// row). With kBlockN < kBlockM under a causal mask the first consumer's rows never see the tile's
// last key block(s). A consumer whose rows are all past the sequence end, or see no key at all,
// keeps the tile's range: its rows are not stored (or are fully masked) either way, and every
// consumer then has at least one block whenever the tile has one.
template <class Config>
__device__ __forceinline__ KeyBlockRange consumer_key_block_range(const ForwardKernelParams& p,
                                                                  const WorkTile& w, int consumer,
                                                                  const KeyBlockRange& tile) {
  const int packed_first = w.m_block * Config::kBlockM + 64 * consumer;
  if (min(packed_first + 64, w.seqlen_q << p.pack_shift) <= packed_first) return tile;  // rows past the end
  return rows_key_block_range<Config>(p, w, packed_first, 64, tile);
}

// True when some score of key block n_block is invisible to some of the packed rows [packed_first,
// packed_first + rows) (then the per-element mask runs): the tile's rows (block_needs_mask), or a
// consumer's own under kConsumerKeyRange, whose diagonal blocks are fewer than the tile's (with 64-key
// blocks the second consumer's rows see the first diagonal block whole).
template <class Config>
__device__ __forceinline__ bool rows_block_needs_mask(const ForwardKernelParams& p, const WorkTile& w,
                                                      int n_block, int packed_first, int rows) {
  const int key_first = n_block * Config::kBlockN;
  const int key_last = key_first + Config::kBlockN - 1;
  const int row_first = packed_first >> p.pack_shift;
  const int row_last = (packed_first + rows - 1) >> p.pack_shift;
  const int offset = w.seqlen_k - w.seqlen_q;
  if (key_last >= w.seqlen_k) return true;
  if (p.window_right >= 0 && key_last > row_first + offset + p.window_right) return true;
  if (p.window_left >= 0 && key_first < row_last + offset - p.window_left) return true;
  return false;
}

// rows_block_needs_mask for the whole tile; false for the interior blocks.
template <class Config>
__device__ __forceinline__ bool block_needs_mask(const ForwardKernelParams& p, const WorkTile& w,
                                                 int n_block) {
  return rows_block_needs_mask<Config>(p, w, n_block, w.m_block * Config::kBlockM, Config::kBlockM);
}

// The key blocks of a tile that need no mask, [lo, hi): block_needs_mask(n) is exactly
// n < lo || n >= hi. Computed once per tile (forward_config.h kTileMaskRange), so that the
// per-block test is two comparisons instead of block_needs_mask's dependent chain of loads,
// shifts and comparisons on the path from a block's S to its softmax.
struct UnmaskedBlocks {
  int lo, hi;
};

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
__device__ __forceinline__ int floor_div(int a, int b) { return a >= 0 ? a / b : -((b - 1 - a) / b); }
__device__ __forceinline__ int ceil_div_signed(int a, int b) { return -floor_div(-a, b); }

template <class Config>
__device__ __forceinline__ UnmaskedBlocks unmasked_blocks(const ForwardKernelParams& p, const WorkTile& w) {
  const int row_first = (w.m_block * Config::kBlockM) >> p.pack_shift;
  const int row_last = (w.m_block * Config::kBlockM + Config::kBlockM - 1) >> p.pack_shift;
  const int offset = w.seqlen_k - w.seqlen_q;
  // Right edge: block n is clean when its last key n kBlockN + kBlockN - 1 is at most `last`
  // (block_needs_mask's first two tests), i.e. n < floor((last + 1) / kBlockN).
  int last = w.seqlen_k - 1;
  if (p.window_right >= 0) last = min(last, row_first + offset + p.window_right);
  // Left edge: block n is clean when its first key n kBlockN is at least row_last + offset -
  // window_left (the third test), i.e. n >= ceil(that / kBlockN); no left window: every n >= 0.
  const int lo = p.window_left >= 0 ? ceil_div_signed(row_last + offset - p.window_left, Config::kBlockN) : 0;
  return {lo, floor_div(last + 1, Config::kBlockN)};
}

// How apply_score_mask tests the scores of a masked block: the kernel's ForwardConfig::kMaskForm
// (forward_config.h, FLASHATTN_SM90_MASK_FORM_*): 2 = per-row bit masks of the visible fragment columns,
// 0 = each score's key compared with both bounds (the code before session 8). (Form 1, one comparison
// with an immediate per bound and score, measured no faster than 2 by helper sm90m; code in d4c8bec.)

// Bit 2i + e set for the fragment columns c = 8i + e (i < 16, e < 2) with c <= limit: there
// are (limit + 8) / 8 such columns with e = 0 and (limit + 7) / 8 with e = 1 (floor division:
// arithmetic shifts), and bits 2i + e run in the order of c, so they are the lowest ones. The
// funnel shift with clamp gives the low `count` bits for count in [0, 32] in one instruction.
__device__ __forceinline__ std::uint32_t fragment_columns_through(int limit) {
  const int count = max(((limit + 8) >> 3) + ((limit + 7) >> 3), 0);
  return __funnelshift_lc(0xffffffffu, 0u, static_cast<unsigned>(count));
}

// Sets invisible scores of this thread's accumulator fragment (rows row0 and row0 + 8, columns
// key0 + 8i + 2(lane%4) + {0,1}) to -inf by bit masks (form 2), for a mask with (kLeft) or without a
// left bound. Per row, the visible columns of each 128 keys become a 32-bit mask (bit 2i + e: column
// 8i + e past the thread's first one there) and every score tests its bit at a compile-time position:
// ptxas moves the bits into predicates seven at a time (R2P) ahead of one select per score. Form 0
// costs an add and two comparisons per score: 252 instructions per thread and masked block at d64
// where form 2 costs ~130 (one-sided) to ~145 (ncu, causal s 512: -121 instructions per warp and
// masked block, -6% of the kernel's). R2P writes P0-P6, so ptxas keeps the warp leader's predicate of
// consumer_loop in a register across the mask (P2R + ISETP: +2 instructions per key block on the
// unmasked path too, off the S -> softmax chain).
template <int kBlockN, bool kLeft>
__device__ __forceinline__ void apply_score_mask_bits(float (&s)[kBlockN / 2], const ForwardKernelParams& p,
                                                      const WorkTile& w, int row0, int key0) {
  constexpr int kGroups = kBlockN / 8;  // 8-column groups i of the fragment
  const int col0 = key0 + 2 * (threadIdx.x % 4);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    // Query position of the packed row (packed GQA: packed row >> pack_shift).
    const BasicKeyRange<int> range = visible_keys_of(p, w, (row0 + 8 * half) >> p.pack_shift);
#pragma unroll
    for (int part = 0; part < (kGroups + 15) / 16; ++part) {
      const int base = col0 + 128 * part;
      std::uint32_t bits = fragment_columns_through(range.last - base);
      if constexpr (kLeft) bits &= ~fragment_columns_through(range.first - 1 - base);
#pragma unroll
      for (int i = 16 * part; i < min(16 * part + 16, kGroups); ++i) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (((bits >> (2 * (i - 16 * part) + e)) & 1u) == 0) s[4 * i + 2 * half + e] = -INFINITY;
        }
      }
    }
  }
}

template <int kBlockN, int kForm>
__device__ __forceinline__ void apply_score_mask(float (&s)[kBlockN / 2], const ForwardKernelParams& p,
                                                 const WorkTile& w, int row0, int key0) {
  static_assert(kForm == 0 || kForm == 2, "mask forms are 0 and 2");
  if constexpr (kForm == 0) {
    const int lane_col = 2 * (threadIdx.x % 4);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const BasicKeyRange<int> range = visible_keys_of(p, w, (row0 + 8 * half) >> p.pack_shift);
      const int first = range.first;
      const int last = range.last;
#pragma unroll
      for (int i = 0; i < kBlockN / 8; ++i) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int key = key0 + 8 * i + lane_col + e;
          if (key > last || key < first) s[4 * i + 2 * half + e] = -INFINITY;
        }
      }
    }
  } else if (p.window_left < 0) {
    // No left window (causal, a right window only, the ragged key end): first = 0 <= every key.
    // The kernel parameter makes this branch uniform.
    apply_score_mask_bits<kBlockN, false>(s, p, w, row0, key0);
  } else {
    apply_score_mask_bits<kBlockN, true>(s, p, w, row0, key0);
  }
}

// ALiBi: s -= slope_s * |row + sk - sq - key| on every score of the fragment
// (before the mask, which overwrites what it hides). Distances are exact in
// fp32 below 2^24, far beyond the 32-bit tile index limit on lengths.
template <int kBlockN>
__device__ __forceinline__ void apply_alibi(float (&s)[kBlockN / 2], const WorkTile& w, float slope_s,
                                            int row0, int key0) {
  const int lane_col = 2 * (threadIdx.x % 4);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float diagonal = static_cast<float>(row0 + 8 * half + w.seqlen_k - w.seqlen_q - key0 - lane_col);
#pragma unroll
    for (int i = 0; i < kBlockN / 8; ++i) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float distance = fabsf(diagonal - static_cast<float>(8 * i + e));
        s[4 * i + 2 * half + e] = fmaf(-slope_s, distance, s[4 * i + 2 * half + e]);
      }
    }
  }
}

}  // namespace flashattn::detail::cuda_sm90
