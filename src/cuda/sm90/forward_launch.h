// Host side of one forward instantiation: encode the tensor maps, size the
// persistent grid, launch. Included by the per-(head dim, dtype) translation
// units only, which instantiate run_forward explicitly.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "common/params.h"
#include "common/philox.h"  // dropout_keys, dropout_threshold
#include "cuda/ptx/grid_dependency.h"
#include "cuda/ptx/tma.h"
#include "cuda/sm80/append_kv.h"
#include "cuda/sm80/clipped_indices.h"
#include "cuda/sm80/kvcache_kernels.h"
#include "cuda/sm90/forward_config.h"
#include "cuda/sm90/forward_dispatch.h"
#include "cuda/sm90/forward_kernel.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/split_tail.h"
#include "cuda/sm90/tensor_map.h"

namespace flashattn::detail::cuda_sm90 {

struct PrepareParams {
  SequenceMaps templates;  // the launch's maps (rows = the maximum lengths)
  int pack;                // packed GQA: q and o are 5-D views whose rows are dimension 2
  AttentionParams a;
  SequenceInfo* infos;  // both null under CacheLengths (the kernel then appends and zeroes only)
  SequenceMaps* maps;
  int* tile_counter;  // zeroed here for the dynamic schedule (no memset launch)
  bool append;        // KV cache with k_new / v_new: write them into the cache here (append_kv.h)
  int* arrivals;      // split-KV (split_kv.h): the tiles' arrival counters, zeroed here (or null)
  int arrival_count;
};

// One thread per sequence: resolves its lengths (common/params.h's rules, with
// every index read from device memory clipped to the operands' extents as the
// sm80 kernels do: cuda/sm80/clipped_indices.h) and writes its tensor maps: the
// launch's maps re-based on the sequence's first row with the sequence's length
// as row extent. With an append, every thread of the grid first writes its share of
// k_new / v_new into the cache: the forward kernel reads the cache only after its
// griddepcontrol.wait, which waits for this whole grid (forward_kernel.h), so the
// append costs no launch and no kernel boundary of its own (2.3-3.9 us of a graphed
// decode step as a separate kernel on an H200: bench/integration/s44_append.py).
// (A template only so that every translation unit including this header may define it.)
template <class Config>
__global__ void prepare_sequences_kernel(const __grid_constant__ PrepareParams p) {
  // PREPARE_OVERLAP: the forward kernel may launch now; it waits for this grid before reading its results.
  if constexpr (FLASHATTN_SM90_PREPARE_OVERLAP != 0) ptx::griddepcontrol_launch_dependents();
  const std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (p.append) {
    const std::int64_t total = cuda_sm80::append_kv_elements(p.a);
    for (std::int64_t idx = b; idx < total; idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
      cuda_sm80::append_kv_element<typename Config::Element>(p.a, idx);
    }
  }
  if (b == 0) *p.tile_counter = 0;
  for (std::int64_t i = b; i < p.arrival_count; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    p.arrivals[i] = 0;
  }
  if (b >= p.a.batch || p.maps == nullptr) return;  // no maps: the forward reads its lengths (CacheLengths)
  const AttentionParams& a = p.a;
  const SequenceLengths s = cuda_sm80::clipped_sequence_lengths(a, b);
  p.infos[b] = SequenceInfo{static_cast<int>(s.q), static_cast<int>(s.k), static_cast<int>(s.q_offset),
                            static_cast<int>(s.k_offset)};
  auto rebase = [](CUtensorMap* dst, const CUtensorMap& src, const void* base, std::int64_t offset,
                   std::int64_t rows, bool packed) {
    const uint4* from = reinterpret_cast<const uint4*>(&src);
    uint4* to = reinterpret_cast<uint4*>(dst);
#pragma unroll
    for (int i = 0; i < static_cast<int>(sizeof(CUtensorMap) / sizeof(uint4)); ++i) to[i] = from[i];
    ptx::tensormap_replace_global_address(dst, static_cast<const char*>(base) + offset * 2);
    const auto extent = static_cast<std::uint32_t>(rows < 1 ? 1 : rows);
    if (packed) {
      ptx::tensormap_replace_global_dim<2>(dst, extent);
    } else {
      ptx::tensormap_replace_global_dim<1>(dst, extent);
    }
  };
  SequenceMaps* m = p.maps + b;
  const std::int64_t q_row = b * a.q.batch_stride + s.q_offset * a.q.row_stride;
  const std::int64_t o_row = b * a.out.batch_stride + s.q_offset * a.out.row_stride;
  rebase(&m->q, p.templates.q, a.q.data, q_row, s.q, p.pack > 1);
  rebase(&m->o, p.templates.o, a.out.data, o_row, s.q, p.pack > 1);
  rebase(&m->k, p.templates.k, a.k.data, s.k_batch * a.k.batch_stride + s.k_offset * a.k.row_stride, s.k,
         false);
  rebase(&m->v, p.templates.v, a.v.data, s.k_batch * a.v.batch_stride + s.k_offset * a.v.row_stride, s.k,
         false);
}

// Packed GQA (FA3's PackGQA): the query heads of one kv head share a tile when
// that wastes fewer tile rows than one head per tile (short query lengths:
// decoding, chunked prefill over a cache), so each K/V block is read once per
// group and the tensor cores see up to kBlockM real rows. Needs the group size
// to divide 64 (the {64, group, rows} boxes of the O store), and no per-head
// ALiBi slope or sink (the consumer applies those per tile, not per row).
template <class Config>
int pack_factor(const AttentionParams& a) {
  return pack_factor_for(a, Config::kBlockM);
}

// The current device's SM count (launch_decode's kernel choice; launch_forward queries it beside L2's size).
inline cudaError_t current_sm_count(int& sms) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
}

// Paged K/V: the rows of one TMA box of the page views, or 0 when the pages are read by the
// producer warp's gather alone. A key block (kBlockN rows, 64-256 by kernel) becomes kBlockN / R boxes
// per 64-column chunk (at most 32: one a lane of the producer warp), each inside one page: R is the largest
// power of two dividing both the page size and kBlockN, at most 128 (a box's row limit is 256). R >= 8 keeps
// every box's shared-memory destination (box j at j * R * 128 bytes of its chunk) on a 1024-byte
// swizzle atom, so the 128B swizzle of the boxes is the one of a whole block: the consumers'
// layout does not change. Page sizes that are not a multiple of 8 run on cuda_sm80
// (backend.cu); 0 here keeps them correct (gathered) if they ever reach this kernel.
template <class Config>
int paged_box_rows(const AttentionParams& a) {
  static_assert(Config::kBlockN / 8 <= 32, "a key block's boxes of 8 rows, one a lane of the producer warp");
  if (a.block_table == nullptr || a.kv_blocks <= 0 || a.page_size % 8 != 0) return 0;
  int rows = 8;
  while (rows < 128 && Config::kBlockN % (2 * rows) == 0 && a.page_size % (2 * rows) == 0) rows *= 2;
  return rows;
}

// Query blocks of Config's tiles in an unpacked problem (the K/V multicast instances' predicates;
// launch_forward counts packed rows itself).
template <class Config>
long long query_blocks(const AttentionParams& a) {
  return (a.seqlen_q + Config::kBlockM - 1) / Config::kBlockM;
}

// CACHE_LENGTHS (forward_config.h, kernel_params.h CacheLengths): a KV-cache launch whose kernel reads the
// sequences' lengths itself. q must be dense (no cu_seqlens / seqused), and the cache paged, or dense without
// a batch index or a leftpad (one map over all its rows, a sequence's keys from row 0) on the narrow tile,
// the one consumer that zeroes V's rows past a sequence's end.
template <class Config>
bool use_cache_lengths(const AttentionParams& a) {
  if constexpr (!Config::kCacheLengths) {
    return false;
  } else {
    return cache_lengths_apply(a, Config::kNarrowRows);
  }
}

// A cudaLaunchKernelEx configuration of the forward kernel: `grid` CTAs of Config's size with one launch
// attribute (which the caller keeps alive until the launch; a caller with more sets numAttrs).
template <class Config>
cudaLaunchConfig_t launch_config(int grid, cudaLaunchAttribute* attribute, cudaStream_t stream) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(Config::kThreads);
  config.dynamicSmemBytes = Config::kSmemBytes;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

// The launch attribute of clusters of `cluster` CTAs along x.
inline cudaLaunchAttribute cluster_attribute(int cluster) {
  cudaLaunchAttribute dims{};
  dims.id = cudaLaunchAttributeClusterDimension;
  dims.val.clusterDim.x = static_cast<unsigned>(cluster);
  dims.val.clusterDim.y = 1;
  dims.val.clusterDim.z = 1;
  return dims;
}

// How many clusters of `cluster` CTAs of `kernel` fit on the GPU at once (`grid`: the launch's CTAs, a
// multiple of `cluster`).
template <class Config, typename Kernel>
cudaError_t active_clusters(Kernel kernel, int cluster, int grid, cudaStream_t stream, int& clusters) {
  cudaLaunchAttribute dims = cluster_attribute(cluster);
  const cudaLaunchConfig_t config = launch_config<Config>(grid, &dims, stream);
  clusters = 0;
  return cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
}

// The persistent grid in clusters of `cluster` CTAs along x (a whole number of clusters when the tile count
// is a multiple of `cluster`), as many clusters as fit on the GPU at once, at most one CTA per tile;
// before_launch(k, grid) completes k for that grid (or fails the launch).
template <class Config, typename Kernel, typename BeforeLaunch>
cudaError_t launch_in_clusters(Kernel kernel, ForwardKernelParams k, int cluster, int sms,
                               cudaStream_t stream, BeforeLaunch before_launch) {
  int clusters = 0;
  if (cudaError_t e = active_clusters<Config>(kernel, cluster, sms / cluster * cluster, stream, clusters);
      e != cudaSuccess)
    return e;
  cudaLaunchAttribute dims = cluster_attribute(cluster);
  cudaLaunchConfig_t config = launch_config<Config>(sms / cluster * cluster, &dims, stream);
  const int grid = std::min(std::max(1, clusters) * cluster, k.num_tiles);
  if (cudaError_t e = before_launch(k, grid); e != cudaSuccess) return e;
  config.gridDim = dim3(static_cast<unsigned>(grid));
  return cudaLaunchKernelEx(&config, kernel, k);
}

// Config::kSplitTail: k.tail for a grid of `grid` CTAs (split_tail.h), its records and arrival counters in
// the workspace (forward_dispatch.h), the counters zeroed on the stream. No tail (k.tail.start_tile =
// num_tiles) where the rounds are whole or the workspace was not sized for one (split_tail_bytes).
template <class Config>
cudaError_t plan_split_tail(const AttentionParams& a, ForwardKernelParams& k, int grid, int sms,
                            void* workspace, cudaStream_t stream) {
  k.tail = SplitTail{};
  k.tail.start_tile = k.num_tiles;
  if (split_tail_bytes(a, sms) == 0) return cudaSuccess;  // grid <= sms: the records are sized by sms
  constexpr int kUnitTiles = Config::kClusterM;
  const int key_blocks = static_cast<int>((a.seqlen_k + Config::kBlockN - 1) / Config::kBlockN);
  const SplitTail plan = split_tail_plan(k.num_tiles / kUnitTiles, kUnitTiles, key_blocks, grid / kUnitTiles);
  if (plan.start_tile >= k.num_tiles) return cudaSuccess;
  auto* bytes = static_cast<unsigned char*>(workspace) + kCounterBytes;
  const std::size_t arrivals =
      static_cast<std::size_t>(plan.units) * kUnitTiles * Config::kConsumerWarpgroups;
  if (arrivals * sizeof(int) > split_tail_arrival_bytes(sms)) return cudaSuccess;
  k.tail = plan;
  k.tail.arrivals = reinterpret_cast<int*>(bytes);
  k.tail.partials = reinterpret_cast<float*>(bytes + split_tail_arrival_bytes(sms));
  return cudaMemsetAsync(k.tail.arrivals, 0, arrivals * sizeof(int), stream);
}

template <class Config>
cudaError_t launch_forward(const AttentionParams& a, void* workspace, cudaStream_t stream,
                           bool append = true) {
  int* tile_counter = static_cast<int*>(workspace);
  ForwardKernelParams k{};
  const int pack = pack_factor<Config>(a);
  const bool q_maps_ok =
      pack > 1
          ? encode_packed_map(&k.maps.q, a.dtype, a.q.data, a.head_dim, pack, a.seqlen_q, a.heads_kv, a.batch,
                              a.q.row_stride, a.q.head_stride, a.q.batch_stride, Config::kQBoxRows / pack) &&
                encode_packed_map(&k.maps.o, a.dtype, a.out.data, a.head_dim_v, pack, a.seqlen_q, a.heads_kv,
                                  a.batch, a.out.row_stride, a.out.head_stride, a.out.batch_stride, 64 / pack)
          : encode_tile_map(&k.maps.q, a.dtype, a.q.data, a.head_dim, a.seqlen_q, a.heads, a.batch,
                            a.q.row_stride, a.q.head_stride, a.q.batch_stride, Config::kQBoxRows) &&
                encode_tile_map(&k.maps.o, a.dtype, a.out.data, a.head_dim_v, a.seqlen_q, a.heads, a.batch,
                                a.out.row_stride, a.out.head_stride, a.out.batch_stride, 64);
  // Paged with pages of a multiple of 8 rows: K/V maps over (d, page rows, kv heads, pages),
  // read in boxes of box_rows rows (paged_box_rows).
  const int box_rows = paged_box_rows<Config>(a);
  const bool tma_pages = box_rows > 0;
  const std::int64_t kv_rows = tma_pages ? a.page_size : a.seqlen_k;
  const std::int64_t kv_batch = tma_pages ? a.kv_blocks : a.batch;
  // K/V boxes of kKVSliceRows: a key block, or under K/V multicast one CTA's slice of it;
  // paged: box_rows.
  const int kv_box_rows = tma_pages ? box_rows : Config::kKVSliceRows;
  const bool maps_ok =
      q_maps_ok &&
      encode_tile_map(&k.maps.k, a.dtype, a.k.data, a.head_dim, kv_rows, a.heads_kv, kv_batch, a.k.row_stride,
                      a.k.head_stride, a.k.batch_stride, kv_box_rows) &&
      encode_tile_map(&k.maps.v, a.dtype, a.v.data, a.head_dim_v, kv_rows, a.heads_kv, kv_batch,
                      a.v.row_stride, a.v.head_stride, a.v.batch_stride, kv_box_rows);
  if (!maps_ok) return cudaErrorInvalidValue;

  k.lse = a.lse;
  k.lse_batch_stride = a.lse_batch_stride, k.lse_head_stride = a.lse_head_stride,
  k.lse_row_stride = a.lse_row_stride;
  k.batch = static_cast<int>(a.batch);
  k.pack = pack;
  while ((1 << k.pack_shift) < pack) ++k.pack_shift;
  k.heads = static_cast<int>(pack > 1 ? a.heads_kv : a.heads);
  k.heads_per_kv = pack > 1 ? 1 : static_cast<int>(a.heads / a.heads_kv);
  k.heads_per_kv_div = make_fast_divisor(k.heads_per_kv);
  k.seqlen_q = static_cast<int>(a.seqlen_q);
  k.seqlen_k = static_cast<int>(a.seqlen_k);
  k.m_blocks = static_cast<int>((a.seqlen_q * pack + Config::kBlockM - 1) / Config::kBlockM);
  k.num_tiles = k.m_blocks * k.heads * k.batch;
  k.window_left = static_cast<int>(std::min<std::int64_t>(a.mask.window_left, a.seqlen_k + a.seqlen_q));
  k.window_right = static_cast<int>(std::min<std::int64_t>(a.mask.window_right, a.seqlen_k + a.seqlen_q));
  constexpr float kLog2e = 1.4426950408889634f;
  if (a.softcap > 0.f) {
    k.softcap_in = a.scale / a.softcap;
    k.score_log2 = a.softcap * kLog2e;
  } else {
    k.score_log2 = a.scale * kLog2e;
  }
  if (a.block_table != nullptr) {
    PagedKV& g = k.paged;
    g.block_table = a.block_table;
    g.table_batch_stride = a.block_table_batch_stride;
    g.page_size = static_cast<int>(a.page_size);
    g.page_div = make_fast_divisor(g.page_size);
    g.table_cols = static_cast<int>(a.table_cols);
    g.kv_blocks = static_cast<int>(a.kv_blocks);
    g.k_cols = static_cast<int>(a.head_dim), g.v_cols = static_cast<int>(a.head_dim_v);
    g.box_rows = box_rows;
    g.boxes = tma_pages ? Config::kBlockN / box_rows : 0;
    while (tma_pages && (1 << g.box_shift) < box_rows) ++g.box_shift;
    // (32 boxes: 256-key blocks in pages of an odd multiple of 8 rows; a shift by 32 would be undefined.)
    g.box_mask = g.boxes >= 32 ? ~0u : (1u << g.boxes) - 1u;
    g.k = a.k.data, g.v = a.v.data;
    g.k_page_stride = a.k.batch_stride, g.k_row_stride = a.k.row_stride, g.k_head_stride = a.k.head_stride;
    g.v_page_stride = a.v.batch_stride, g.v_row_stride = a.v.row_stride, g.v_head_stride = a.v.head_stride;
  }
  if constexpr (Config::kDropout) {
    k.dropout_keys = dropout_keys(a.dropout_seed, a.dropout_offset);
    k.dropout_offset = a.dropout_offset;
    const std::uint32_t threshold = dropout_threshold(a.dropout_p);
    k.dropout_threshold2 = threshold * 0x10001u;
    k.dropout_threshold2_low15 = (threshold & 0x7fffu) * 0x10001u;
    k.dropout_rescale = 1.f / (1.f - a.dropout_p);
  } else if (drops(a)) {
    return cudaErrorNotSupported;  // (run_forward hands dropout to the dropout instances)
  }
  k.sink = a.sink;
  k.alibi_slopes = a.alibi_slopes;
  k.alibi_batch_stride = a.alibi_batch_stride;
  k.alibi_to_s = k.score_log2 != 0.f ? kLog2e / k.score_log2 : 0.f;

  int device = 0, sms = 0, l2_bytes = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device); e != cudaSuccess)
    return e;
  // The CTAs resident at once: one a SM, or two of the decode kernel that shares a SM (TWO_CTAS_PER_SM).
  const int slots = sms * Config::kCtasPerSm;
  // Equal tiles (no mask cutting key ranges, no per-sequence lengths): the static
  // schedule saves the atomic per tile (measured 2-7% at <= 4k, docs/kernel-notes-sm90.md).
  // Causal (or right-window) problems of one length: couples of complementary query units (tile_sections.h
  // paired) are equal work, so with STATIC_COUPLES, and always on the K/V multicast kernel (whose two CTAs
  // must hold the same couple, which separate claims would not give), they go on the static schedule too.
  // Short causal d256 rows (PLACEMENT_MAX_SEQLEN) take static couples too, a head's couples on the two CTAs
  // of a cluster of two (below).
  const bool couples_shape = !uses_sequence_maps(a) && a.mask.window_left < 0 && a.mask.window_right >= 0;
  const bool placement =
      Config::kClusterM == 1 &&
      use_placement_clusters(Config::kHeadDim, Config::kHeadDimV, a.seqlen_k, k.m_blocks, couples_shape);
  const bool static_couples = couples_shape &&
                              (FLASHATTN_SM90_STATIC_COUPLES != 0 || Config::kClusterM > 1 || placement) &&
                              (k.m_blocks / Config::kClusterM) % 2 == 0;
  // CacheLengths: no per-sequence maps. Items (split pieces counted) that fit in one wave take the static
  // schedule, which claims nothing through the counter (the same order: CTA c on item c).
  const bool cache_lengths = use_cache_lengths<Config>(a);
  SplitKVShape split_shape{};  // no split (splits 1) without Config::kSplitKV
  if constexpr (Config::kSplitKV) {
    split_shape = split_kv_shape(a, sms);
    // The workspace was sized by this shape, for the kernel it names (launch_decode picks by the same rule).
    if (split_shape.ctas_per_sm != Config::kCtasPerSm) return cudaErrorInvalidValue;
  }
  k.static_schedule =
      equal_tiles(a) || static_couples ||
      (cache_lengths && static_cast<std::int64_t>(k.num_tiles) * std::max(1, split_shape.splits) <= slots);
  // forward_workspace_bytes sizes no workspace for equal tiles: anything that claims tiles through the
  // counter must have one (a mismatch fails the call, it never dereferences null).
  if (!k.static_schedule && workspace == nullptr) return cudaErrorInvalidValue;
  // L2 sections (tile_scheduler.h): as many kv heads as fill a part of L2, times their query heads:
  // half of L2, or 1 / SECTION_L2_DIVISOR for the d = dv = 128 kernel; sections of one head for the
  // static schedule of the kernels with d, dv <= HEAD_MAJOR_MAX_D (HEAD_MAJOR_MAX_SEQLEN;
  // forward_config.h, session 8) and, up to HEAD_MAJOR_MASKED_MAX_SEQLEN keys, for their dynamic one.
  constexpr bool kShortRowOrder = Config::kHeadDim <= FLASHATTN_SM90_HEAD_MAJOR_MAX_D &&
                                  Config::kHeadDimV <= FLASHATTN_SM90_HEAD_MAJOR_MAX_D;
  constexpr bool kSmallSections = Config::kHeadDim == 128 && Config::kHeadDimV == 128;
  // SECTION_L2_DIVISOR_MID: dense problems of a mid-length range on the d = 128 two-consumer kernel's dynamic
  // schedule (as measured: causal 4k).
  const bool mid_sections = kSmallSections && Config::kConsumerWarpgroups == 2 && !k.static_schedule &&
                            !uses_sequence_maps(a) && FLASHATTN_SM90_SECTION_L2_DIVISOR_MID != 0 &&
                            a.seqlen_k >= FLASHATTN_SM90_SECTION_L2_MID_MIN_SEQLEN &&
                            a.seqlen_k < FLASHATTN_SM90_SECTION_L2_MID_MAX_SEQLEN;
  const std::int64_t section_bytes = l2_bytes / (mid_sections     ? FLASHATTN_SM90_SECTION_L2_DIVISOR_MID
                                                 : kSmallSections ? FLASHATTN_SM90_SECTION_L2_DIVISOR
                                                                  : FLASHATTN_SM90_SECTION_L2_DIVISOR_OTHER);
  const std::int64_t kv_head_bytes = std::max<std::int64_t>(1, a.seqlen_k * (a.head_dim + a.head_dim_v) * 2);
  const std::int64_t kv_heads_per_section = std::max<std::int64_t>(1, section_bytes / kv_head_bytes);
  std::int64_t sec_heads =
      std::min<std::int64_t>(kv_heads_per_section * k.heads_per_kv, std::int64_t{k.batch} * k.heads);
  // A pair's query blocks are equal work on the static schedule of single tiles, and on the dynamic one of
  // unmasked problems with per-sequence lengths over dense K/V (VARLEN_HEAD_MAJOR, forward_config.h): both
  // take the unmasked order; the dynamic schedules of problems without per-sequence lengths, the masked one.
  const bool equal_pair_tiles = k.static_schedule ? !static_couples
                                                  : FLASHATTN_SM90_VARLEN_HEAD_MAJOR != 0 && !a.is_kvcache &&
                                                        a.block_table == nullptr && a.mask.window_left < 0 &&
                                                        a.mask.window_right < 0;
  if (kShortRowOrder && equal_pair_tiles && head_major_order(a.seqlen_k)) sec_heads = 1;
  if (kShortRowOrder && !k.static_schedule && !uses_sequence_maps(a) && head_major_order(a.seqlen_k, true))
    sec_heads = 1;
  // The dynamic schedule's tiles differ in length: its last section holds at least
  // TAIL_SECTION_FACTOR tiles per CTA (tile_sections.h). The static schedule's are equal (the
  // tail is at most one tile, in any order), so its sections stay the L2's. Causal (or right-window)
  // problems of one length whose sections hold one kv head take their tiles in complementary couples
  // (PAIRED_TILES, forward_config.h). The backend never launches an empty grid; the clamps in
  // plan_tile_sections keep every divisor at least 1.
  const bool paired =
      static_couples || (FLASHATTN_SM90_PAIRED_TILES != 0 && !kSmallSections && kv_heads_per_section == 1 &&
                         Config::kClusterM == 1 && !k.static_schedule && couples_shape);
  k.sections =
      plan_tile_sections(k.batch * k.heads, static_cast<int>(sec_heads), k.m_blocks / Config::kClusterM,
                         std::max(1, std::min(slots, k.num_tiles)),
                         k.static_schedule ? 0 : FLASHATTN_SM90_TAIL_SECTION_FACTOR, paired, placement);
  k.heads_div = make_fast_divisor(std::max(1, k.heads));
  k.tile_counter = tile_counter;
  // Split-KV (split_kv.h): the work items are the tiles' pieces, after the sections were planned over the
  // tiles; the arrival counters are zeroed with the tile counter (the prepare kernel, else a memset).
  auto* kernel = forward_kernel<Config, false>;
  if constexpr (Config::kHasPagedKernel) {
    if (a.block_table != nullptr) kernel = forward_kernel<Config, true>;
  }
  if (cudaError_t e =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSmemBytes);
      e != cudaSuccess) {
    return e;
  }
  // CLUSTER_COMBINE (forward_config.h): the narrow tile's pieces of a tile in clusters, where every item has
  // a CTA of its own (the static schedule in one wave), the records fit a CTA's slots and every
  // cluster fits on the GPU at once (a GPC holds a whole number of clusters: 32 tiles of 4 pieces, 128 CTAs,
  // had run in two waves on an H200, 1.19-1.21x the counter's time, s50_cluster.sh). One cluster a tile of
  // 2-16 pieces; or, for more pieces than the slots hold, clusters of the portable size, several a tile,
  // each combined into one record of the tile's through L2 (split_kv_plan.h SplitKV groups).
  int arrival_count = 0;
  bool cluster_pieces = false;
  int cluster_size = 0, groups = 1;
  if constexpr (Config::kSplitKV) {
    SplitKVShape& shape = split_shape;
    if (shape.splits > 1) {
      if (workspace == nullptr || shape.tiles != k.num_tiles) return cudaErrorInvalidValue;
      if constexpr (Config::kClusterPieces) {
        const ClusterSlots slots = Config::cluster_slots(shape.rows);
        const bool clusters_apply =
            k.static_schedule && !placement && static_cast<std::int64_t>(shape.tiles) * shape.splits <= sms;
        cluster_pieces = clusters_apply && slots.holds(shape.splits);
        // Clusters above the portable size once the kernel may take them (not every sm_90 part need launch
        // them: a part that refuses the attribute takes at most the portable size, not an error).
        bool non_portable = false;
        if (cluster_pieces && shape.splits > kPortableClusterSize) {
          non_portable =
              cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
          if (!non_portable) (void)cudaGetLastError();
        }
        // How many clusters of `size` CTAs fit at once (0 for a size the kernel may not take).
        auto fitting_clusters = [&](int size, int& clusters) {
          clusters = 0;
          if (size > kPortableClusterSize && !non_portable) return cudaSuccess;
          return active_clusters<Config>(kernel, size, shape.tiles * size, stream, clusters);
        };
        // Whether the tiles' clusters of `splits` CTAs all fit at once.
        auto clusters_fit = [&](int splits, bool& fit) {
          int clusters = 0;
          const cudaError_t e = fitting_clusters(splits, clusters);
          fit = shape.tiles <= clusters;
          return e;
        };
        if (cluster_pieces) {
          // The chosen count (split_kv_plan.h) lowered to the largest whose clusters all fit, where its own
          // do not (fewer fit as clusters grow: a bisection); a requested count stays, on the counter's
          // combine.
          if (cudaError_t e = clusters_fit(shape.splits, cluster_pieces); e != cudaSuccess) return e;
          if (!cluster_pieces && a.num_splits < 1) {
            int fits = 1, fails = shape.splits;
            while (fails - fits > 1) {
              const int middle = (fits + fails) / 2;
              bool fit = false;
              if (cudaError_t e = clusters_fit(middle, fit); e != cudaSuccess) return e;
              (fit ? fits : fails) = middle;
            }
            // (A smaller cluster always fits; the slots may hold fewer.)
            fits = cluster_count_worth(shape.key_blocks, slots.at_most(fits), shape.key_block_bytes);
            cluster_pieces = fits > 1;
            if (cluster_pieces) shape.splits = fits;
          }
          if (cluster_pieces) cluster_size = shape.splits;
        } else if (clusters_apply && slots.holds(kPortableClusterSize) &&
                   shape.splits % kPortableClusterSize == 0) {
          // Two levels: clusters of the portable size, as many a tile as fit at once beside the other tiles'
          // (a chosen count lowered to that; a requested one as asked, else on the counter's combine).
          int clusters = 0;
          if (cudaError_t e = fitting_clusters(kPortableClusterSize, clusters); e != cudaSuccess) return e;
          const int wanted = shape.splits / kPortableClusterSize;
          const int held = std::min(wanted, clusters / shape.tiles);
          if (held == wanted || (a.num_splits < 1 && held >= 1)) {
            cluster_pieces = true;
            cluster_size = kPortableClusterSize;
            groups = held;
            shape.splits = held * kPortableClusterSize;
          }
        }
      }
      k.split_kv.splits = shape.splits;
      k.split_kv.splits_div = make_fast_divisor(shape.splits);
      k.split_kv.whole_tiles = shape.whole_tiles;
      k.split_kv.rows = shape.rows;
      k.split_kv.cluster_size = cluster_size;
      k.split_kv.groups = groups;
      k.split_kv.out = a.out.data;
      k.split_kv.out_batch_stride = a.out.batch_stride;
      k.split_kv.out_head_stride = a.out.head_stride;
      k.split_kv.out_row_stride = a.out.row_stride;
      k.split_kv.out_cols = static_cast<int>(a.head_dim_v);
      if (!cluster_pieces || groups > 1) {
        auto* bytes = static_cast<unsigned char*>(workspace) + split_kv_offset(a);
        k.split_kv.arrivals = reinterpret_cast<int*>(bytes);
        k.split_kv.partials = reinterpret_cast<float*>(bytes + split_kv_arrival_bytes(shape));
        arrival_count = shape.tiles * (cluster_pieces ? kArrivalCountersPerTile : 1);
      }
      k.num_tiles = split_kv_items(shape);
    }
  }
  // The prepare kernel: per-sequence maps and lengths, the KV cache's append, and the counters (the dynamic
  // schedule's, split-KV's arrivals) zeroed. Under CacheLengths only where it appends or a counter is used.
  const std::int64_t appended = uses_sequence_maps(a) && append ? cuda_sm80::append_kv_elements(a) : 0;
  const bool sequence_maps = uses_sequence_maps(a) && !cache_lengths;
  const bool runs_prepare =
      sequence_maps || (cache_lengths && (appended > 0 || arrival_count > 0 || !k.static_schedule));
  if (cache_lengths) {
    CacheLengths& c = k.cache;
    c.cache_seqlens = a.cache_seqlens;
    c.leftpad = a.leftpad_k;
    c.capacity = static_cast<int>(a.cache_capacity);
    c.appended = a.k_new.data != nullptr ? static_cast<int>(a.seqlen_new) : 0;
    c.active = true;
    c.after_prepare = runs_prepare;
  }
  // Without the prepare kernel the counters start at 0 by memsets (a launch each, ~2 us on the stream, which
  // the static schedule and unsplit launches do without).
  if (!runs_prepare && arrival_count > 0) {
    if (cudaError_t e = cudaMemsetAsync(k.split_kv.arrivals, 0, arrival_count * sizeof(int), stream);
        e != cudaSuccess)
      return e;
  }
  if (!runs_prepare && !k.static_schedule) {
    if (cudaError_t e = cudaMemsetAsync(tile_counter, 0, sizeof(int), stream); e != cudaSuccess) return e;
  }
  if (runs_prepare) {
    auto* bytes = static_cast<unsigned char*>(workspace);
    PrepareParams prepare{};
    prepare.templates = k.maps;
    prepare.pack = pack;
    prepare.a = a;
    if (sequence_maps) {
      prepare.infos = reinterpret_cast<SequenceInfo*>(bytes + kCounterBytes);
      prepare.maps = reinterpret_cast<SequenceMaps*>(bytes + kCounterBytes + sequence_info_bytes(a));
    }
    prepare.tile_counter = tile_counter;
    prepare.arrivals = k.split_kv.arrivals;
    prepare.arrival_count = arrival_count;
    prepare.append = appended > 0;
    constexpr int kPrepareThreads = 128;
    // One thread per sequence, or per appended element where those are more (a grid-stride loop beyond
    // 2^19 blocks, as cuda_sm80's append kernel).
    const std::int64_t threads = std::max<std::int64_t>(a.batch, appended);
    const auto blocks = static_cast<unsigned>(
        std::min<std::int64_t>((threads + kPrepareThreads - 1) / kPrepareThreads, std::int64_t{65536} * 8));
    prepare_sequences_kernel<Config><<<blocks, kPrepareThreads, 0, stream>>>(prepare);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    k.sequences = prepare.infos;
    k.sequence_maps = prepare.maps;
  }
  if constexpr (Config::kClusterM > 1) {
    // Clusters of kClusterM CTAs on pairs of query blocks (run_forward checked that the
    // schedule is static and m_blocks even; masked: static couples), as many as fit on the GPU at once.
    static_assert(Config::kClusterM == 2);
    if (!k.static_schedule || k.m_blocks % 2 != 0 || (couples_shape && !k.sections.paired))
      return cudaErrorInvalidValue;
    return launch_in_clusters<Config>(
        kernel, k, Config::kClusterM, sms, stream, [&](ForwardKernelParams& params, int grid) {
          if constexpr (Config::kSplitTail) {
            return plan_split_tail<Config>(a, params, grid, sms, workspace, stream);
          }
          return cudaSuccess;
        });
  } else {
    // Placement (forward_config.h PLACEMENT_MAX_SEQLEN): clusters of two CTAs the kernel does not use, for
    // where the hardware puts them; the plan is paired (an even tile count: a whole number of clusters).
    if (placement) {
      if (!k.static_schedule || !k.sections.couples_by_pair) return cudaErrorInvalidValue;
      return launch_in_clusters<Config>(kernel, k, 2, sms, stream,
                                        [](ForwardKernelParams&, int) { return cudaSuccess; });
    }
    if (cluster_pieces) {
      // A CTA per item (num_tiles <= sms), a tile's pieces one cluster or several of 8; after a prepare
      // kernel (an append, or the two levels' counters) its programmatic dependent as below.
      cudaLaunchAttribute attributes[2]{cluster_attribute(k.split_kv.cluster_size), {}};
      attributes[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attributes[1].val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t config = launch_config<Config>(k.num_tiles, attributes, stream);
      config.numAttrs = FLASHATTN_SM90_PREPARE_OVERLAP != 0 && runs_prepare ? 2 : 1;
      return cudaLaunchKernelEx(&config, kernel, k);
    }
    const int grid = std::max(1, std::min(slots, k.num_tiles));
    if (FLASHATTN_SM90_PREPARE_OVERLAP != 0 && runs_prepare) {
      // PREPARE_OVERLAP (forward_config.h): the kernel's launch and barrier setup overlap the prepare kernel.
      cudaLaunchAttribute overlap{};
      overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      overlap.val.programmaticStreamSerializationAllowed = 1;
      const cudaLaunchConfig_t config = launch_config<Config>(grid, &overlap, stream);
      return cudaLaunchKernelEx(&config, kernel, k);
    }
    kernel<<<grid, Config::kThreads, Config::kSmemBytes, stream>>>(k);
    return cudaGetLastError();
  }
}

// Decoding: one consumer warpgroup (forward_config.h use_single_consumer), on the narrow tile for at most 8
// packed rows (use_narrow_rows), else on 64-row tiles, of the kernel head dims (kHeadDim, kHeadDimV) (padded
// head dims: forward_config.h kernel_head_dims). True when the problem is one of these, `launched` then the
// launch's result; false, with nothing launched, for the others.
template <int kHeadDim, int kHeadDimV, typename Element>
bool launch_decode(const AttentionParams& a, void* workspace, cudaStream_t stream, cudaError_t& launched) {
  if constexpr (single_consumer_head_dims(kHeadDim, kHeadDimV)) {
    using Single = ForwardConfig<kHeadDim, kHeadDim, Element, 1>;
    const int pack = pack_factor<Single>(a);
    if constexpr (narrow_rows_head_dims(kHeadDim, kHeadDimV)) {
      if (use_narrow_rows(kHeadDim, kHeadDimV, a.seqlen_q, pack)) {
        // More tiles than SMs at d <= 128: the kernel of two CTAs a SM (decode_ctas_per_sm).
        if constexpr (FLASHATTN_SM90_TWO_CTAS_PER_SM != 0 && kHeadDim <= 128) {
          int sms = 0;
          if (cudaError_t e = current_sm_count(sms); e != cudaSuccess) {
            launched = e;
            return true;
          }
          if (decode_ctas_per_sm(a, sms) == 2) {
            launched = launch_forward<NarrowDecodeConfig<kHeadDim, 2, Element>>(a, workspace, stream);
            return true;
          }
        }
        launched = launch_forward<NarrowDecodeConfig<kHeadDim, 1, Element>>(a, workspace, stream);
        return true;
      }
    }
    if (use_single_consumer(kHeadDim, kHeadDimV, a.seqlen_q, pack)) {
      launched = launch_forward<Single>(a, workspace, stream);
      return true;
    }
  }
  return false;
}

// (64, 512): O has 256 fp32 per thread at 64 rows per warpgroup, beyond the register file, so the two
// 256-column halves of V and O run as two (64, 256) launches of Config on the stream (S = QK^T is recomputed:
// 64 of the 576 columns of work per key; dropout drops the same probabilities in both).
template <class Config>
cudaError_t launch_value_halves(const AttentionParams& a, void* workspace, cudaStream_t stream) {
  static_assert(Config::kHeadDim == 64 && Config::kHeadDimV == 256);
  // Each half's view holds 256 of V's columns, so the append (all 512) runs as cuda_sm80's kernel of its
  // own, before both.
  if (cudaError_t e = cuda_sm80::launch_append_kv(a, stream); e != cudaSuccess) return e;
  for (int half = 0; half < 2; ++half) {
    AttentionParams h = a;
    h.head_dim_v = 256;
    h.v.data = static_cast<char*>(a.v.data) + half * 256 * 2;
    h.out.data = static_cast<char*>(a.out.data) + half * 256 * 2;
    if (half == 1) h.lse = nullptr;  // the same LSE as the first half's
    if (cudaError_t e = launch_forward<Config>(h, workspace, stream, false); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// run_forward's instances of the kernel head dims: with the GEMMs narrowed to kGemmDim columns where that
// differs from kHeadDim (ForwardConfig kGemmDim_).
template <int kHeadDim, int kHeadDimV, typename Element, int kGemmDim, int kConsumers = 2,
          int kLongKeyBlockN = 0, int kClusterM = 1, bool kMasked = false>
using TileConfig = ForwardConfig<kHeadDim, kHeadDimV, Element, kConsumers, kLongKeyBlockN, kClusterM, kMasked,
                                 false, 1, false, kGemmDim == kHeadDim ? 0 : kGemmDim>;

// kGemmDim < kHeadDim (the narrowed GEMMs, units forward_hdim96_*.cu / forward_hdim160_*.cu): the dense and
// paged tile kernels only; the backend runs the calls that drop or decode on the kernel's own instances
// (forward_config.h narrowed_gemm_dim).
template <int kHeadDim, int kHeadDimV, typename Element, int kGemmDim>
cudaError_t run_forward(const AttentionParams& a, void* workspace, cudaStream_t stream) {
  constexpr bool kNarrowed = kGemmDim != kHeadDim;
  if constexpr (kNarrowed) {
    if (drops(a) || runs_decode_kernel(a)) return cudaErrorInvalidConfiguration;  // (not routed here)
  } else {
    // Dropout: its own instances (forward_dropout.h), in units of their own.
    if (drops(a)) return run_forward_dropout<kHeadDim, kHeadDimV, Element>(a, workspace, stream);
  }
  // (Other head dims run these instances padded: forward_config.h kernel_head_dims.)
  if constexpr (kHeadDimV == 512) {
    return launch_value_halves<ForwardConfig<64, 256, Element>>(a, workspace, stream);
  } else {
    // Decoding, before any other tile choice of the head dim.
    if constexpr (!kNarrowed) {
      if (cudaError_t e = cudaSuccess; launch_decode<kHeadDim, kHeadDimV, Element>(a, workspace, stream, e))
        return e;
    }
    // Causal or windowed: some kernels have instances for masked problems only.
    [[maybe_unused]] const bool masked = is_masked(a);
#if FLASHATTN_SM90_D64_ALT_BLOCK_N != 0 || FLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED != 0
    if constexpr (kHeadDim == 64 && kHeadDimV == 64) {
      // Other tiles for a range of lengths (forward_config.h use_d64_alt_tile; session 9, sm90r).
      if (use_d64_alt_tile(kHeadDim, kHeadDimV, a.seqlen_q, a.seqlen_k, masked, a.block_table != nullptr)) {
        if (masked) {
          if constexpr (FLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED != 0) {
            using Alt =
                TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, FLASHATTN_SM90_D64_ALT_CONSUMERS_MASKED,
                           FLASHATTN_SM90_D64_ALT_BLOCK_N_MASKED, 1, true>;
            return launch_forward<Alt>(a, workspace, stream);
          }
        } else {
          if constexpr (FLASHATTN_SM90_D64_ALT_BLOCK_N != 0) {
            using Alt = TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, FLASHATTN_SM90_D64_ALT_CONSUMERS,
                                   FLASHATTN_SM90_D64_ALT_BLOCK_N>;
            return launch_forward<Alt>(a, workspace, stream);
          }
        }
      }
    }
#endif
    if constexpr (kHeadDim == 64 && kHeadDimV == 64) {
      if (use_three_consumers(kHeadDim, a.seqlen_q, masked, a.block_table != nullptr)) {
        if constexpr (FLASHATTN_SM90_KV_MULTICAST_D64 != 0) {
          using Clustered = TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 3, 0, 2>;
          if (pack_factor<Clustered>(a) == 1 &&
              use_kv_multicast(a.seqlen_k, query_blocks<Clustered>(a), masked, a.block_table != nullptr,
                               uses_sequence_maps(a), FLASHATTN_SM90_KV_MULTICAST_D64)) {
            return launch_forward<Clustered>(a, workspace, stream);
          }
        }
        return launch_forward<TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 3>>(a, workspace, stream);
      }
    }
    if constexpr ((kHeadDim == 128 && kHeadDimV == 128) || (kHeadDim == 256 && kHeadDimV == 256)) {
      // K/V multicast (forward_config.h use_kv_multicast, use_kv_multicast_causal), each instance compiled
      // only where its key threshold is not 0: d = 128 unmasked and causal by default, d = 256 causal by
      // default and unmasked behind its switch.
      constexpr long long kMinKeys =
          kHeadDim == 128 ? FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN : FLASHATTN_SM90_KV_MULTICAST_D256;
      constexpr long long kMinKeysCausal =
          kHeadDim == 128 ? FLASHATTN_SM90_KV_MULTICAST_CAUSAL : FLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL;
      const bool paged = a.block_table != nullptr;
      if constexpr (kMinKeys != 0) {
        using Clustered = TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 2, 0, 2>;
        if (pack_factor<Clustered>(a) == 1 && use_kv_multicast(a.seqlen_k, query_blocks<Clustered>(a), masked,
                                                               paged, uses_sequence_maps(a), kMinKeys)) {
          return launch_forward<Clustered>(a, workspace, stream);
        }
      }
      if constexpr (kMinKeysCausal != 0) {
        using ClusteredMasked = TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 2, 0, 2, true>;
        if (pack_factor<ClusteredMasked>(a) == 1 &&
            use_kv_multicast_causal(a.seqlen_k, query_blocks<ClusteredMasked>(a), a.mask.window_left,
                                    a.mask.window_right, paged, uses_sequence_maps(a), kMinKeysCausal)) {
          return launch_forward<ClusteredMasked>(a, workspace, stream);
        }
      }
    }
#if FLASHATTN_SM90_D256_BLOCK64
    if constexpr (kHeadDim == 256 && kHeadDimV == 256) {
      const long long page_size = a.block_table != nullptr ? a.page_size : 0;
      if (use_d256_block64(kHeadDim, kHeadDimV, a.seqlen_k, masked, page_size)) {
        if constexpr (FLASHATTN_SM90_KV_MULTICAST_D256_BLOCK64_CAUSAL != 0) {
          // The 64-key blocks' masked cluster instance (forward_config.h KV_MULTICAST_D256_BLOCK64_CAUSAL).
          using ClusteredMasked = TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 2, 64, 2, true>;
          if (pack_factor<ClusteredMasked>(a) == 1 &&
              use_kv_multicast_causal(a.seqlen_k, query_blocks<ClusteredMasked>(a), a.mask.window_left,
                                      a.mask.window_right, page_size > 0, uses_sequence_maps(a),
                                      FLASHATTN_SM90_KV_MULTICAST_D256_BLOCK64_CAUSAL)) {
            return launch_forward<ClusteredMasked>(a, workspace, stream);
          }
        }
        if constexpr (FLASHATTN_SM90_O_OVER_V != 0) {
          // O over V only where nothing is masked (forward_config.h O_OVER_V): masked problems get an
          // instance without it.
          if (masked) {
            return launch_forward<TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 2, 64, 1, true>>(
                a, workspace, stream);
          }
        }
        return launch_forward<TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 2, 64>>(a, workspace,
                                                                                         stream);
      }
    }
#endif
#if FLASHATTN_SM90_LONG_KEY_BLOCK_N != 0
    if constexpr (kHeadDim == 128 && kHeadDimV == 128) {
      if (use_long_key_blocks(kHeadDim, kHeadDimV, a.seqlen_k, masked, a.block_table != nullptr)) {
        constexpr int kLongBlockN = FLASHATTN_SM90_LONG_KEY_BLOCK_N;
        return launch_forward<TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 2, kLongBlockN>>(
            a, workspace, stream);
      }
    }
#endif
    if constexpr (FLASHATTN_SM90_O_OVER_V != 0 && kHeadDim == 256 && kHeadDimV == 256) {
      // As for the 64-key blocks above.
      if (masked) {
        return launch_forward<TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim, 2, 0, 1, true>>(a, workspace,
                                                                                                 stream);
      }
    }
    return launch_forward<TileConfig<kHeadDim, kHeadDimV, Element, kGemmDim>>(a, workspace, stream);
  }
}

}  // namespace flashattn::detail::cuda_sm90
