// What a forward launch hands its kernel: the validated AttentionParams plus the
// few values the host resolves once (tile counts, split-KV scratch, constants).
#pragma once

#include <cstdint>

#include "common/fast_division.h"
#include "common/params.h"
#include "common/philox.h"  // PhiloxKeys

namespace flashattn::detail::cuda_sm80 {

struct ForwardKernelArgs {
  AttentionParams p;
  int m_blocks = 0;              // query tiles per (sequence, head), sized by the seqlen_q bound
  int num_splits = 1;            // > 1: each split writes fp32 partials that the combine kernel merges
  float* out_partial = nullptr;  // (splits, batch, seqlen_q, heads, head_dim_v)
  float* lse_partial = nullptr;  // (splits, batch, seqlen_q, heads)
  float scale_log2 = 0.f;        // scale * log2(e): the softmax runs in base 2
  std::uint32_t dropout_threshold = 0;
  float dropout_rescale = 1.f;   // 1 / (1 - p)
  PhiloxKeys dropout_keys{};     // dropout_keys(seed, offset): the key schedule, read as constant operands
  std::int64_t total_tiles = 0;  // m_blocks * batch * heads * num_splits
  // Tile order (tile_scheduler.h): false = query tiles of one (sequence, head) side by side; true =
  // heads fastest (every head's last query tiles first). The backend picks (heads_fastest_order).
  bool heads_fastest = false;
  // With heads_fastest: > 0 deals the (sequence, head, split) triples out in groups of this many,
  // heads fastest within a group (tile_scheduler.h: grouped order); 0 = one group of all.
  int head_group = 0;
  // Paged K/V: division by page_size as a multiply-high and a shift (paged_kv.h finds the page of
  // every copied row); the divisor 1 when K/V are dense.
  FastDivisor page_divisor;
  // lean_setup (TileShape): the host's part of the per-CTA setup, resolved once per launch.
  // Every sequence is seqlen_q x seqlen_k rows at offset 0 of its own batch entry (no varlen, seqused,
  // KV cache or cache_batch_idx): clipped_sequence_lengths reduces to the two bounds.
  bool dense = false;
  // The tile decode's divisors (tile_scheduler.h decode_tile_fast), valid when total_tiles < 2^31:
  // m_blocks, batch * heads * splits, splits, heads, heads / heads_kv (the GQA group), and for the
  // grouped order head_group * m_blocks, head_group and the last group's size.
  FastDivisor div_m_blocks, div_per_m_block, div_splits, div_heads, div_kv_group;
  FastDivisor div_per_group, div_group, div_last_group;
};

// The launch constants of TileShape::lean_setup (above), once per launch; the other shapes never read
// them. The divisors exist only where decode_tile_fast may run (every tile index < 2^31). Called by the
// backend and by bench/sm80_tune.cu's candidate launches.
inline void resolve_lean_setup(ForwardKernelArgs& args) {
  const AttentionParams& p = args.p;
  args.dense = p.cu_seqlens_q == nullptr && p.cu_seqlens_k == nullptr && p.seqused_q == nullptr &&
               p.seqused_k == nullptr && !p.is_kvcache && p.cache_batch_idx == nullptr;
  if (args.total_tiles <= 0 || args.total_tiles > 0x7fffffff) return;
  const int per_m_block = static_cast<int>(p.batch * p.heads) * args.num_splits;
  args.div_m_blocks = make_fast_divisor(args.m_blocks);
  args.div_per_m_block = make_fast_divisor(per_m_block);
  args.div_splits = make_fast_divisor(args.num_splits);
  args.div_heads = make_fast_divisor(static_cast<int>(p.heads));
  args.div_kv_group = make_fast_divisor(static_cast<int>(p.heads / p.heads_kv));
  const int group = args.head_group;
  if (group > 0 && group < per_m_block) {
    args.div_per_group = make_fast_divisor(group * args.m_blocks);
    args.div_group = make_fast_divisor(group);
    const int last = per_m_block - (per_m_block - 1) / group * group;  // 1 <= last <= group
    args.div_last_group = make_fast_divisor(last);
  }
}

}  // namespace flashattn::detail::cuda_sm80
