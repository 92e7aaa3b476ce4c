// What one Hopper forward launch receives: the four TMA tensor maps and the
// scalars the device pieces (scheduler, masking, softmax, epilogue) read.
// Passed by value as a __grid_constant__ kernel parameter, so the tensor maps
// live in parameter space where the copy engine reads them.
#pragma once

#include <cuda.h>  // CUtensorMap (a plain 128-byte struct; no libcuda link needed)

#include <cstdint>

#include "common/fast_division.h"
#include "common/philox.h"  // PhiloxKeys
#include "cuda/sm90/split_kv_plan.h"
#include "cuda/sm90/split_tail_plan.h"
#include "cuda/sm90/tile_sections.h"

namespace flashattn::detail::cuda_sm90 {

// One sequence of a variable-length (cu_seqlens) or seqused batch, resolved by
// the prepare kernel (forward_launch.h) from common/params.h's sequence_lengths.
struct SequenceInfo {
  int seqlen_q, seqlen_k;
  int q_offset;  // global row of query 0 (cu_seqlens_q) or 0: for the LSE address
  int k_offset;  // paged K/V: cache position of key 0 (the KV cache's leftpad), else unused
};

// Paged K/V (block_table), any page size (producer_loop_paged in producer.h). With a page
// size that is a multiple of 8 rows (box_rows > 0), maps.k / maps.v are the (d, page rows,
// kv heads, pages) views of the cache read in boxes of box_rows rows (the largest power of
// two, at most 128, dividing both the page size and kBlockN): a key block is kBlockN /
// box_rows boxes per 64-column chunk, each at its own page. A box with rows past the
// sequence's end, or across two pages (a leftpad that is not a multiple of box_rows), is
// gathered by the producer warp with cp.async instead. Element strides; page p of K starts
// at k + p * k_page_stride.
struct PagedKV {
  const std::int32_t* block_table = nullptr;  // null: K/V are read through the tensor maps
  std::int64_t table_batch_stride = 0;
  int page_size = 1;
  FastDivisor page_div;        // page_size as a multiply-high (a key position's page slot)
  int table_cols = 0;          // entries per table row (0: unknown, no clamp)
  int kv_blocks = 0;           // pages in the cache (0: unknown, no clamp): table entries are clamped to it
  int k_cols = 0, v_cols = 0;  // d and dv of the operands (d = 96 runs the 128-column kernel: zero-filled)
  int box_rows = 0;            // rows per TMA box of maps.k / maps.v (0: no page views, every block gathered)
  int boxes = 0;               // kBlockN / box_rows: boxes per chunk of a key block (one producer lane each)
  int box_shift = 0;           // log2(box_rows)
  std::uint32_t box_mask = 0;  // boxes low bits set: a key block whose boxes all go by TMA
  const void* k = nullptr;
  const void* v = nullptr;
  std::int64_t k_page_stride = 0, k_row_stride = 0, k_head_stride = 0;
  std::int64_t v_page_stride = 0, v_row_stride = 0, v_head_stride = 0;
};

// Per-sequence tensor maps (same order as the four maps below): copies of the
// launch's maps whose base address is the sequence's first row and whose row
// extent is the sequence's length, so TMA zero-fills rows past the end of the
// sequence (keys and values beyond seqused may hold anything, NaN included) and
// clips the O store there. Their batch coordinate is always 0.
struct SequenceMaps {
  CUtensorMap q, k, v, o;
};

// A KV cache's per-sequence lengths read by the decode kernels themselves (Config::kCacheLengths,
// forward_launch.h use_cache_lengths), instead of the prepare kernel's SequenceInfo and maps: q, out and a
// paged cache go through the launch's maps (batch coordinate = the sequence), a dense cache through a map
// over all its rows, whose rows past a sequence's end the narrow tile zeroes in V's stage (K's are masked).
// Saves the prepare kernel's dependent chain (the lengths' load, then four maps written), the forward's wait
// for it, the maps' acquire fences and the SequenceInfo load, and, where nothing is appended or counted, the
// prepare kernel itself: 0.66-0.74 us of a graphed d128 decode step at 1000 keys batch 1-4, 2.4 us at batch
// 8, 2.0 us at d256 4k keys (s49_cache4.sh, against the tree before it). The arithmetic is
// cuda_sm80::clipped_sequence_lengths's for a KV cache without cu_seqlens / seqused.
struct CacheLengths {
  const std::int32_t* cache_seqlens = nullptr;  // null: every sequence fills the cache
  const std::int32_t* leftpad = nullptr;        // paged only (dense caches with a leftpad take the maps)
  int capacity = 0;                             // cache rows a sequence may use
  int appended = 0;                             // rows appended by the prepare kernel (k_new), or 0
  bool active = false;                          // the launch uses these (else SequenceInfo or one length)
  bool after_prepare = false;                   // a prepare kernel precedes: the producer waits for it
};

struct ForwardKernelParams {
  // (d, seqlen, heads, batch) views, innermost first, 128B-swizzled boxes of 64 columns:
  // q: box {64, kBlockM}; k, v: box {64, kBlockN}; o: box {64, 64}, one consumer
  // warpgroup's rows. One struct, so that a tile's four maps are one pointer
  // (tile_maps), here or in sequence_maps: the producer lives on 24 registers.
  SequenceMaps maps;

  float* lse = nullptr;  // optional, fp32
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 0;

  // Packed GQA (pack > 1): the `pack` query heads of one kv head share each tile, packed
  // row r = query row * pack + head in group; maps.q / maps.o are then the 5-D views of
  // encode_packed_map, `heads` counts kv heads and heads_per_kv is 1 (a tile's head is
  // its kv head). pack divides 64, a power of two: positions (masks, lengths) are
  // packed row >> pack_shift (a shift, not a division: the mask runs in the hot loop).
  int pack = 1, pack_shift = 0;
  int batch = 0, heads = 0, heads_per_kv = 1;
  int seqlen_q = 0, seqlen_k = 0;
  int m_blocks = 0, num_tiles = 0;
  int* tile_counter = nullptr;   // workspace int, zero at launch: tiles claimed beyond the first wave
  bool static_schedule = false;  // every tile equally long: stride by the grid, no atomic
  int window_left = -1, window_right = -1;  // mask.h semantics, bottom-right aligned
  TileSections sections;                    // the tile order's L2 sections (tile_sections.h)
  FastDivisor heads_div;                    // tile_work's quotient by heads (fast_division.h)

  // Softmax in base 2: p = 2^(s * score_log2 - rowmax * score_log2). Without
  // softcap s is q.k and score_log2 = scale * log2(e); with softcap s is
  // tanh(q.k * softcap_in) and score_log2 = softcap * log2(e).
  float score_log2 = 0.f;
  float softcap_in = 0.f;       // scale / softcap; 0: no softcap
  const float* sink = nullptr;  // optional per-head logit (natural-log units)

  // ALiBi: score -= slope * |i + sk - sq - j| in natural units, i.e. s -= slope *
  // alibi_to_s * |...| in the units of s (alibi_to_s = log2(e) / score_log2).
  const float* alibi_slopes = nullptr;
  std::int64_t alibi_batch_stride = 0;
  float alibi_to_s = 0.f;

  // Variable length / seqused (both null for a plain batch): per-sequence lengths
  // and tensor maps in the workspace, written by the prepare kernel.
  const SequenceInfo* sequences = nullptr;
  const SequenceMaps* sequence_maps = nullptr;

  PagedKV paged;

  // Config::kSplitTail only; last, so that the other fields keep their offsets in parameter space.
  SplitTail tail;
  // Config::kSplitKV only (split_kv.h): each tile's key blocks cut into `splits` pieces.
  SplitKV split_kv;
  // Config::kCacheLengths only; after the others, whose offsets in parameter space it leaves alone.
  CacheLengths cache;
  // Config::kSplitKV (the decode kernels) only: heads_per_kv as a divisor (producer.h kv_head_of); last, for
  // the same reason.
  FastDivisor heads_per_kv_div;
  // Config::kDropout only (consumer.h): the Philox stream of common/philox.h (its key schedule, read as
  // constant operands), a draw below the threshold t drops its probability (threshold2 = t 0x10001,
  // threshold2_low15 = (t mod 0x8000) 0x10001: cuda_sm80::dropout_bits_pairs), the kept ones are scaled by
  // rescale = 1 / (1 - p) in the epilogue. Last, as above.
  PhiloxKeys dropout_keys{};
  std::uint64_t dropout_offset = 0;
  std::uint32_t dropout_threshold2 = 0, dropout_threshold2_low15 = 0;
  float dropout_rescale = 1.f;
};

}  // namespace flashattn::detail::cuda_sm90
