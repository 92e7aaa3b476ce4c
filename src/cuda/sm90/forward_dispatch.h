// The forward entry points the per-(head dims, dtype) translation units define
// (forward_hdim*_*.cu) and the backend dispatches to, and the layout of the
// caller's workspace they use.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/params.h"
#include "common/philox.h"  // dropout_threshold
#include "cuda/sm90/forward_config.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/split_kv_plan.h"
#include "cuda/sm90/split_tail.h"

namespace flashattn::detail::cuda_sm90 {

// Workspace (256-byte aligned by the API; none for the static schedule without a split tail):
//   [0, 256)            the tile scheduler's counter (one int, zeroed by the launch)
//   [256, +info)        SequenceInfo per sequence        } variable length / seqused / KV cache
//   [.., +maps)         SequenceMaps per sequence (128-byte aligned)
//   [.., +q_rotated)    KV cache with rotary: q rotated at its positions, contiguous (b, sq, h, d)
// or, for a problem that may run the split tail (split_tail_bytes), instead of the sequences:
//   [256, +arrivals)    the tail units' arrival counters (zeroed by the launch)
//   [.., +records)      two records per consumer warpgroup of each of up to `sms` CTAs
// and, for a split-KV launch of the decode kernel (split_kv_bytes), after all of the above:
//   [.., +arrivals)     per tile its pieces done, or its row owners' (zeroed by the launch)
//   [.., +records)      per piece its rows' O and LSE in fp32
// The KV cache runs through the per-sequence maps: common/params.h resolves its
// cache_seqlens, cache_batch_idx and leftpad into each sequence's first key row and
// key count, exactly like seqused_k.
inline bool uses_sequence_maps(const AttentionParams& p) {
  return p.cu_seqlens_q != nullptr || p.cu_seqlens_k != nullptr || p.seqused_q != nullptr ||
         p.seqused_k != nullptr || p.is_kvcache;
}
inline bool rotates_q(const AttentionParams& p) { return p.is_kvcache && p.rotary_dim > 0; }
// Whether the call drops probabilities: the dropout instances (forward_config.h DropoutConfig) run it. A p
// below 1 / 65536 has a threshold of 0, which drops nothing: the plain kernels, as cuda_sm80's forward and
// every backward take it.
inline bool drops(const AttentionParams& p) {
  return dropout_threshold(p.dropout_p) > 0;  // (0 for p <= 0)
}
inline bool is_masked(const AttentionParams& p) {
  return p.mask.window_left >= 0 || p.mask.window_right >= 0;
}
// Every tile equally long (no mask, one length): launch_forward's static schedule, whose CTAs stride by the
// grid and claim no tile through the workspace's counter (forward_workspace_bytes relies on that).
inline bool equal_tiles(const AttentionParams& p) { return !is_masked(p) && !uses_sequence_maps(p); }
// The head dims of the kernel that runs p (forward_config.h kernel_head_dims: padded head dims run a wider
// kernel): every host rule that picks a kernel or sizes its workspace reads these, the tensor maps p's own.
inline KernelHeadDims kernel_dims(const AttentionParams& p) {
  return kernel_head_dims(p.head_dim, p.head_dim_v);
}
// Whether a decode kernel reads a KV cache's lengths itself (forward_launch.h use_cache_lengths, where
// Config::kCacheLengths; narrow: on the narrow tile, which also takes a dense cache without leftpad or batch
// index).
inline bool cache_lengths_apply(const AttentionParams& a, bool narrow) {
  if (!a.is_kvcache || a.cu_seqlens_q != nullptr || a.cu_seqlens_k != nullptr || a.seqused_q != nullptr ||
      a.seqused_k != nullptr || a.cache_capacity > 0x3fffffff) {
    return false;
  }
  if (a.block_table != nullptr) return true;
  return narrow && a.cache_batch_idx == nullptr && a.leftpad_k == nullptr;
}
constexpr std::size_t kCounterBytes = 256;
inline std::size_t sequence_info_bytes(const AttentionParams& p) {
  return (static_cast<std::size_t>(p.batch) * sizeof(SequenceInfo) + 127) / 128 * 128;
}
inline std::size_t sequence_bytes(const AttentionParams& p) {
  if (!uses_sequence_maps(p)) return 0;
  const std::size_t bytes = sequence_info_bytes(p) + static_cast<std::size_t>(p.batch) * sizeof(SequenceMaps);
  return (bytes + 255) / 256 * 256;
}
inline std::size_t q_rotated_offset(const AttentionParams& p) { return kCounterBytes + sequence_bytes(p); }
// SPLIT_TAIL (forward_config.h): the problems of at least SPLIT_TAIL keys that the d = dv = 128 unmasked
// multicast instance may run (a superset: run_forward also needs an even number of query blocks and no packed
// GQA), on a GPU of `sms` SMs; 0 for the others (launch_forward then plans no tail), and where the caller
// asked for no key split (num_splits 1: which tiles the tail splits depends on the batch's size).
inline std::size_t split_tail_arrival_bytes(int sms) {
  // A tail holds at most 1.5 rounds of units (split_tail_plan), sms / 2 per round; per unit two ranks of
  // two consumers.
  return (static_cast<std::size_t>(sms) * 4 * sizeof(int) + 255) / 256 * 256;
}
inline std::size_t split_tail_bytes(const AttentionParams& p, int sms) {
  if (FLASHATTN_SM90_SPLIT_TAIL == 0 || FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN == 0 || p.num_splits == 1 ||
      drops(p) || kernel_dims(p).d != 128 || kernel_dims(p).dv != 128 || !equal_tiles(p) ||
      p.block_table != nullptr ||
      p.seqlen_k < std::max<long long>(FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN, FLASHATTN_SM90_SPLIT_TAIL)) {
    return 0;
  }
  return split_tail_arrival_bytes(sms) + static_cast<std::size_t>(sms) * split_tail_cta_bytes<128, 2>();
}
// Packed GQA's factor for tiles of block_m rows (forward_launch.h pack_factor, where the rule is explained).
inline int pack_factor_for(const AttentionParams& a, std::int64_t block_m) {
  const std::int64_t group = a.heads / a.heads_kv;
  // (Dropout: the drop bits are drawn per query position and head, consumer.h block_drop_bits.)
  if (group <= 1 || 64 % group != 0 || a.alibi_slopes != nullptr || a.sink != nullptr || drops(a)) return 1;
  const std::int64_t rows_unpacked = (a.seqlen_q + block_m - 1) / block_m * block_m * group;
  const std::int64_t rows_packed = (a.seqlen_q * group + block_m - 1) / block_m * block_m;
  return rows_packed < rows_unpacked ? static_cast<int>(group) : 1;
}
// SPLIT_KV (split_kv_plan.h): the one-consumer decode kernels (d = dv = 64, 128, 256; d = 96 runs d = 128's;
// at most 8 packed rows on the narrow tile, decode_consumer.h, whose key blocks and records are the same),
// and their shape parameters.
template <int kHeadDim>
using DecodeConfig = ForwardConfig<kHeadDim, kHeadDim, __half, 1>;  // (bf16's have the same tiles)
constexpr int kDecodeBlockM = DecodeConfig<128>::kBlockM;
static_assert(DecodeConfig<64>::kBlockM == kDecodeBlockM && DecodeConfig<256>::kBlockM == kDecodeBlockM);
// The narrow decode tile's kernel (decode_consumer.h) at kernel head dim d, of one CTA a SM or, at d = 64 /
// 128, of two (TWO_CTAS_PER_SM). launch_decode launches these; the host's shape rules read their tiles.
template <int kHeadDim, int kCtasPerSm = 1, typename Element = __half>
using NarrowDecodeConfig = ForwardConfig<kHeadDim, kHeadDim, Element, 1, 0, 1, false, true, kCtasPerSm>;
// The decode kernel's key block at head dim d (one of single_consumer_head_dims'; d = 96 runs d = 128's), on
// the narrow tile (use_narrow_rows) or the 64-row one: they differ at d = 256 and at d = 64
// (NARROW_D64_BLOCK_N); and on the narrow tile's kernel of two CTAs a SM (ctas_per_sm 2), at d = 64 / 128.
inline int decode_block_n(std::int64_t head_dim, bool narrow, int ctas_per_sm = 1) {
  if (ctas_per_sm == 2) {
    return head_dim == 64 ? NarrowDecodeConfig<64, 2>::kBlockN : NarrowDecodeConfig<128, 2>::kBlockN;
  }
  if (head_dim == 64) return narrow ? NarrowDecodeConfig<64>::kBlockN : DecodeConfig<64>::kBlockN;
  return head_dim == 256 ? (narrow ? NarrowDecodeConfig<256>::kBlockN : DecodeConfig<256>::kBlockN)
                         : DecodeConfig<128>::kBlockN;
}
// CTAs a SM of the decode kernel that runs p on a GPU of `sms` SMs: 2 (TWO_CTAS_PER_SM, forward_config.h) for
// the narrow tile at d = 64 / 96 / 128 where its tiles (one per sequence and K/V head, or per query head
// unpacked) outnumber the SMs but fit two a SM, over at most TWO_CTAS_MAX_SEQLEN keys, with the split count
// left to the rule (a requested count, 1 included, keeps one kernel whatever the batch: batch invariance);
// else 1. launch_decode picks the kernel by it, split_kv_shape its slots.
inline int decode_ctas_per_sm(const AttentionParams& p, int sms) {
  if (FLASHATTN_SM90_TWO_CTAS_PER_SM == 0 || p.num_splits != 0 ||
      p.seqlen_k > FLASHATTN_SM90_TWO_CTAS_MAX_SEQLEN || kernel_dims(p).d > 128) {
    return 1;
  }
  const int pack = pack_factor_for(p, kDecodeBlockM);
  if (!use_narrow_rows(kernel_dims(p).d, kernel_dims(p).dv, p.seqlen_q, pack)) return 1;
  const std::int64_t tiles = p.batch * (pack > 1 ? p.heads_kv : p.heads);
  return tiles > sms && tiles <= 2 * static_cast<std::int64_t>(sms) ? 2 : 1;
}
// The cluster counts whose records of `rows` rows the narrow tile's slots hold at the kernel's dv
// (ForwardConfig cluster_slots; none without CLUSTER_COMBINE).
inline ClusterSlots narrow_cluster_pieces(int head_dim_v, int rows) {
  return head_dim_v == 64 ? NarrowDecodeConfig<64>::cluster_slots(rows)
                          : (head_dim_v == 256 ? NarrowDecodeConfig<256>::cluster_slots(rows)
                                               : NarrowDecodeConfig<128>::cluster_slots(rows));
}
inline bool runs_decode_kernel(const AttentionParams& p) {
  if (drops(p)) return false;  // (the dropout instances: run_forward)
  return use_single_consumer(kernel_dims(p).d, kernel_dims(p).dv, p.seqlen_q,
                             pack_factor_for(p, kDecodeBlockM));
}
struct SplitKVShape {
  int ctas_per_sm = 1;               // of the kernel that runs it (decode_ctas_per_sm)
  int splits = 1;                    // pieces per split tile
  int whole_tiles = 0;               // the leading tiles not split (split_kv_plan.h split_kv_tail)
  int tiles = 0;                     // tiles of the launch (one query block each)
  int rows = 0;                      // packed q rows a record holds
  int head_dim_v = 0;                // columns of a record's rows
  int key_blocks = 0;                // of the longest sequence
  std::int64_t key_block_bytes = 0;  // K's and V's bytes of one key block (the cluster rules' cost)
};
inline SplitKVShape split_kv_shape(const AttentionParams& p, int sms) {
  SplitKVShape s;
  if (FLASHATTN_SM90_SPLIT_KV == 0 || !runs_decode_kernel(p)) return s;
  const int pack = pack_factor_for(p, kDecodeBlockM);
  const std::int64_t tiles = p.batch * (pack > 1 ? p.heads_kv : p.heads);  // seqlen_q * pack <= kBlockM
  const KernelHeadDims kernel = kernel_dims(p);
  const bool narrow = use_narrow_rows(kernel.d, kernel.dv, p.seqlen_q, pack);
  // Two CTAs a SM hold twice the SMs' items at once: the count rules below see those slots.
  s.ctas_per_sm = decode_ctas_per_sm(p, sms);
  const int slots = sms * s.ctas_per_sm;
  const int block_n = decode_block_n(kernel.d, narrow, s.ctas_per_sm);
  const std::int64_t key_blocks = (p.seqlen_k + block_n - 1) / block_n;
  s.tiles = static_cast<int>(tiles);
  s.key_blocks = static_cast<int>(std::min<std::int64_t>(key_blocks, INT32_MAX));
  s.rows = static_cast<int>(std::min<std::int64_t>(kDecodeBlockM, p.seqlen_q * pack));
  s.head_dim_v = kernel.dv;  // the kernel's O columns
  s.key_block_bytes =
      std::int64_t{block_n} * (kernel.d + s.head_dim_v) * static_cast<std::int64_t>(dtype_size(p.dtype));
  // The narrow tile's count rules (split_kv_plan.h), where they were measured; its cluster combine's where a
  // tile's records fit a CTA's slots (narrow_cluster_pieces) and the launch takes the static
  // schedule (forward_launch.h: equal tiles, or the cache's lengths read by the kernel); none in the kernel
  // of two CTAs a SM (ForwardConfig kClusterPieces).
  const bool static_items =
      equal_tiles(p) || (FLASHATTN_SM90_CACHE_LENGTHS != 0 && cache_lengths_apply(p, narrow));
  const ClusterSlots cluster_pieces = narrow && static_items && s.ctas_per_sm == 1
                                          ? narrow_cluster_pieces(s.head_dim_v, s.rows)
                                          : ClusterSlots{};
  const std::int64_t narrow_piece_floats = narrow ? std::int64_t{s.rows} * s.head_dim_v : 0;
  s.splits = split_kv_count(tiles, key_blocks, slots, p.num_splits, narrow_piece_floats, cluster_pieces,
                            s.key_block_bytes);
  // More tiles than a wave: the last round's split (SPLIT_KV_TAIL).
  if (FLASHATTN_SM90_SPLIT_KV_TAIL != 0 && s.splits == 1) {
    const SplitKVTail tail =
        split_kv_tail(tiles, key_blocks, slots, p.num_splits, narrow_piece_floats, s.key_block_bytes);
    s.whole_tiles = tail.whole_tiles;
    s.splits = tail.splits;
  }
  return s;
}
// The launch's work items: the whole tiles, then every piece of the split ones.
inline int split_kv_items(const SplitKVShape& s) {
  return s.whole_tiles + (s.tiles - s.whole_tiles) * s.splits;
}
// Workspace of a split launch after everything else (256-byte aligned): the tiles' arrival counters, then
// every piece's record.
inline std::size_t split_kv_arrival_bytes(const SplitKVShape& s) {
  return (static_cast<std::size_t>(s.tiles) * kArrivalCountersPerTile * sizeof(int) + 255) / 256 * 256;
}
inline std::size_t split_kv_bytes(const SplitKVShape& s) {
  if (s.splits <= 1) return 0;
  return split_kv_arrival_bytes(s) + static_cast<std::size_t>(s.tiles - s.whole_tiles) * s.splits *
                                         split_kv_record_floats(s.rows, s.head_dim_v) * sizeof(float);
}
// The end of the rotated q (of the sequences without rotary; of the counter without either).
inline std::size_t q_rotated_end(const AttentionParams& p) {
  std::size_t bytes = q_rotated_offset(p);
  if (rotates_q(p)) bytes += static_cast<std::size_t>(p.batch * p.seqlen_q * p.heads * p.head_dim) * 2;
  return bytes;
}
inline std::size_t split_kv_offset(const AttentionParams& p) { return (q_rotated_end(p) + 255) / 256 * 256; }
// The static schedule of equal tiles claims no tile through the counter: without a split tail or split-KV
// it needs no workspace, and a caller allocates none (a framework's allocation costs more host time than the
// launch: ~2.5 us on an H200 host through PyTorch).
inline std::size_t forward_workspace_bytes(const AttentionParams& p, int sms) {
  const std::size_t tail = split_tail_bytes(p, sms);
  const std::size_t split = split_kv_bytes(split_kv_shape(p, sms));
  if (equal_tiles(p) && tail == 0 && split == 0) return 0;
  if (split > 0) return split_kv_offset(p) + split;  // (no split tail: another kernel)
  return std::max(q_rotated_end(p), kCounterBytes + tail);
}

// kGemmDim: the head-dim columns the GEMMs cover (forward_launch.h TileConfig; forward_config.h
// narrowed_gemm_dim: 96 on d = 128's kernels, 160 on d = 192's).
template <int kHeadDim, int kHeadDimV, typename Element, int kGemmDim = kHeadDim>
cudaError_t run_forward(const AttentionParams& params, void* workspace, cudaStream_t stream);
// The problems with dropout (forward_config.h DropoutConfig), which run_forward hands over: defined in
// forward_dropout.h, instantiated by the units forward_hdim*_*_dropout.cu (one kernel each, compiled beside
// the others).
template <int kHeadDim, int kHeadDimV, typename Element>
cudaError_t run_forward_dropout(const AttentionParams& params, void* workspace, cudaStream_t stream);

}  // namespace flashattn::detail::cuda_sm90
