// Producer warp: one thread walks the tile sequence and issues every TMA load
// (Q once per tile, then K and V of each key block into the stage ring, last key
// block first, the order in which the consumers use them). It waits on a
// buffer's empty barrier before overwriting it; the first pass through the ring
// waits for parity 1, which a freshly initialised barrier reports as complete.
#pragma once

#include "common/fast_division.h"
#include "cuda/ptx/cluster.h"
#include "cuda/ptx/grid_dependency.h"
#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/sm90/forward_config.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/pipeline.h"
#include "cuda/sm90/score_mask.h"
#include "cuda/sm90/split_kv.h"
#include "cuda/sm90/split_tail.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

// The first tile from `tile` on with query rows, its work in w; empty tiles are skipped, each
// claimed past with claim(tile). p.num_tiles or more when no tile is left.
template <class Config, class Claim>
__device__ __forceinline__ int next_busy_tile(const ForwardKernelParams& p, int tile, WorkTile& w,
                                              Claim claim) {
  while (tile < p.num_tiles) {
    w = work_tile<Config>(p, tile);
    if (!tile_empty<Config::kBlockM>(p, w)) break;
    tile = claim(tile);
  }
  return tile;
}

// The next tile (or the end marker, tile >= num_tiles) to the consumers: its index, or with kDecoded
// (Config::kDecodedHandoff, dense K/V: forward_kernel) the index with tile w's decoding and key-block range
// (tile_scheduler.h DecodedTile).
template <class Config, bool kDecoded>
__device__ __forceinline__ void publish_next_tile(const ForwardKernelParams& p,
                                                  const SharedPipeline<Config>& pipe, int tile,
                                                  const WorkTile& w, std::uint32_t parity) {
  if constexpr (kDecoded) {
    DecodedTile d{tile, w, 0, 0};
    if (tile < p.num_tiles) {
      const KeyBlockRange range = key_block_range<Config>(p, w);
      d.first_block = range.begin, d.end_block = range.end;
    }
    publish_decoded_tile(pipe.tile_handoff(), d, parity);
  } else {
    publish_tile(pipe.tile_handoff(), tile, parity);
  }
}

// Part `part` of tile w's Q (Config::kSplitQ: consumer warpgroup part's kQBoxRows rows; else all
// of them, part 0) into its place in Q's buffer through tma_q, completing on q_full(part): per
// 64-column chunk one {64, kQBoxRows} box, or under packed GQA one {64, pack, kQBoxRows / pack} box
// of the 5-D view (pack divides 64: forward_launch.h pack_factor).
template <class Config>
__device__ __forceinline__ void load_q(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe,
                                       const CUtensorMap* tma_q, const WorkTile& w, int part) {
  const std::uint32_t full = pipe.q_full(part);
  const std::uint32_t dst = pipe.q_part(part);
  const int first_row = w.m_block * Config::kBlockM + part * Config::kQBoxRows;
  ptx::mbarrier_arrive_expect_tx(full, Config::kQBytes / Config::kQParts);
#pragma unroll
  for (int c = 0; c < Config::kChunks; ++c) {
    if (p.pack > 1) {
      ptx::tma_load_5d(dst + c * Config::kQChunkBytes, tma_q, full, c * Config::kChunkCols, 0,
                       first_row >> p.pack_shift, w.head, w.map_batch);
    } else {
      ptx::tma_load_4d(dst + c * Config::kQChunkBytes, tma_q, full, c * Config::kChunkCols, first_row, w.head,
                       w.map_batch);
    }
  }
}

// Every part of tile w's Q, each once its consumers released the previous tile's (q_phase: the
// parity of the Q loads so far, flipped here). kSplitQ: the consumer that finishes first gets its
// rows first (consumer 0 leads the issue rotation, so its parts come in that order).
template <class Config>
__device__ __forceinline__ void wait_and_load_q(const ForwardKernelParams& p,
                                                const SharedPipeline<Config>& pipe, const CUtensorMap* tma_q,
                                                const WorkTile& w, std::uint32_t& q_phase) {
#pragma unroll
  for (int part = 0; part < Config::kQParts; ++part) {
    ptx::mbarrier_wait_parity(pipe.q_empty(part), q_phase ^ 1);
    load_q<Config>(p, pipe, tma_q, w, part);
  }
  q_phase ^= 1;
}

// Key block n of K or V (kChunks column chunks) into the stage at `stage_smem`, completing
// on `full`. K/V multicast (Config::kClusterM > 1): this CTA's slice of the block's rows (or,
// kMulticastByChunk, its chunks), written to the same place in every CTA of the cluster.
template <class Config, int kChunks>
__device__ __forceinline__ void load_kv_block(std::uint32_t stage_smem, const CUtensorMap* map,
                                              std::uint32_t full, int n, int kv_head, int batch) {
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    if constexpr (Config::kClusterM == 1) {
      ptx::tma_load_4d(stage_smem + c * Config::kKVChunkBytes, map, full, c * Config::kChunkCols,
                       n * Config::kBlockN, kv_head, batch);
    } else if constexpr (Config::kMulticastByChunk) {
      if (c % Config::kClusterM == static_cast<int>(ptx::cluster_ctarank())) {
        ptx::tma_load_4d_multicast(stage_smem + c * Config::kKVChunkBytes, map, full, c * Config::kChunkCols,
                                   n * Config::kBlockN, kv_head, batch,
                                   static_cast<std::uint16_t>((1u << Config::kClusterM) - 1));
      }
    } else {
      const int rank = static_cast<int>(ptx::cluster_ctarank());
      ptx::tma_load_4d_multicast(stage_smem + c * Config::kKVChunkBytes + rank * Config::kKVSliceBytes, map,
                                 full, c * Config::kChunkCols,
                                 n * Config::kBlockN + rank * Config::kKVSliceRows, kv_head, batch,
                                 static_cast<std::uint16_t>((1u << Config::kClusterM) - 1));
    }
  }
}

// Config::kOOverV: hands the consumers the V-ring uses of the last tile's O stores, from `slot` on, in
// consumer order (the first is consumer 0's), each once the stage's previous use was released: a plain
// arrive on v_full (no bytes). `leader`: the thread that arrives (every caller's thread waits).
template <class Config>
__device__ __forceinline__ void give_output_slots(const SharedPipeline<Config>& pipe,
                                                  RingPosition<Config::kStages> slot, bool leader) {
#pragma unroll
  for (int c = 0; c < Config::kConsumerWarpgroups; ++c) {
    ptx::mbarrier_wait_parity(pipe.v_empty(slot.stage), slot.phase ^ 1);
    if (leader) ptx::mbarrier_arrive(pipe.v_full(slot.stage));
    slot.advance();
  }
}

// A causal or sliding-window problem (read from the constant bank where needed: the producer has 24
// registers).
__device__ __forceinline__ bool windowed(const ForwardKernelParams& p) {
  return p.window_left >= 0 || p.window_right >= 0;
}

// Config::kPrefetchNextTile: the Q of tile `tile` (the next one this producer loads, unless it has no query
// rows) fetched into L2 while the current tile still runs. Left to the ordinary loads: per-sequence maps
// (acquired per tile), packed GQA (a 5-D view of Q) and windowed problems of more keys than
// Config::kPrefetchWindowedMaxSeqlenK (forward_config.h PREFETCH_WINDOWED_MAX_SEQLEN).
template <class Config>
__device__ __forceinline__ void prefetch_next_q(const ForwardKernelParams& p, int tile) {
  if (tile >= p.num_tiles || p.sequence_maps != nullptr || p.pack > 1) return;
  if constexpr (Config::kPrefetchWindowedMaxSeqlenK > 0) {
    if (windowed(p) && p.seqlen_k > Config::kPrefetchWindowedMaxSeqlenK) return;
  }
  const WorkTile w = work_tile<Config>(p, tile);
  const int first_row = w.m_block * Config::kBlockM;
#pragma unroll
  for (int part = 0; part < Config::kQParts; ++part) {
#pragma unroll
    for (int c = 0; c < Config::kChunks; ++c) {
      ptx::tma_prefetch_l2_4d(&p.maps.q, c * Config::kChunkCols, first_row + part * Config::kQBoxRows, w.head,
                              w.map_batch);
    }
  }
}

// CacheLengths::after_prepare: the prepare kernel (a programmatic dependent's primary, forward_launch.h) may
// still append to the cache or zero the counters, so the producer waits for it before the first tile's K / V
// loads and tile claims (the consumers' arrivals come after those loads: griddepcontrol.wait makes the
// prepare grid's writes visible to the whole grid). Its own first reads, the lengths (in tile_work: the first
// tile of a KV cache always has query rows, so next_busy_tile claims nothing before this), overlap that
// kernel. `prepared`: the wait has been passed (or is not needed).
__device__ __forceinline__ void await_prepare(bool& prepared) {
  if (!prepared) {
    ptx::griddepcontrol_wait();
    prepared = true;
  }
}

// The tile's K/V head. The decode kernels' producer reaches its first K load through this and the split's
// share (session 53's trace: 0.29 us for the two integer divisions), so they take the launch's divisor; the
// other kernels keep the division, whose SASS the forward standing measured.
template <class Config>
__device__ __forceinline__ int kv_head_of(const ForwardKernelParams& p, const WorkTile& w) {
  if constexpr (Config::kSplitKV) {
    return fast_divide(w.head, p.heads_per_kv_div);
  } else {
    return w.head / p.heads_per_kv;
  }
}

template <class Config>
__device__ void producer_loop(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe) {
  ptx::prefetch_tensormap(&p.maps.q);
  ptx::prefetch_tensormap(&p.maps.k);
  ptx::prefetch_tensormap(&p.maps.v);
  RingPosition<Config::kStages> ring;  // K's; V's through vring
  VRing<Config> vring;
  bool slots_owed = false;  // kOOverV: the last tile's O stores have not had their V-ring uses yet
  std::uint32_t q_phase = 0;
  // Work items (split_tail.h): tiles, and under Config::kSplitTail the pieces of this CTA's tail share.
  int tile = first_work<Config>(p);
  [[maybe_unused]] bool prepared = !Config::kCacheLengths || !p.cache.after_prepare;
  for (;;) {
    // Tiles of a short sequence past its last query row (variable length) carry no work.
    WorkTile w{};
    tile = next_busy_tile<Config>(p, tile, w, [&](int t) { return claim_next_work<Config>(p, t); });
    [[maybe_unused]] KeyBlockRange piece_range{};
    if constexpr (Config::kSplitTail) {
      if (is_tail_item(tile)) tail_piece_work<Config::kClusterM>(p, tile, w, piece_range);
    }
    // The index (or the end marker) goes to the consumers first; Q's buffer is
    // free once every consumer warp released the previous Q.
    publish_next_tile<Config, Config::kDecodedHandoff>(p, pipe, tile, w, q_phase);  // one per Q so far
    if (!is_work<Config>(p, tile)) break;
    if constexpr (Config::kCacheLengths) await_prepare(prepared);
    if constexpr (!Config::kFirstKBeforeQ && !Config::kSplitQ) {
      ptx::mbarrier_wait_parity(pipe.q_empty(), q_phase ^ 1);
      q_phase ^= 1;
    }
    const int kv_head = kv_head_of<Config>(p, w);
    const KeyBlockRange range =
        Config::kSplitTail && is_tail_item(tile) ? piece_range : work_key_blocks<Config>(p, tile, w);
    const SequenceMaps* maps = tile_maps(p, w);  // one pointer live, not three
    const CUtensorMap* tma_q = &maps->q;
    const CUtensorMap* tma_k = &maps->k;
    const CUtensorMap* tma_v = &maps->v;
    // Written by the prepare kernel through the generic proxy (forward_config.h: acquiring once per run of a
    // sequence's tiles measured no better).
    if (p.sequence_maps != nullptr) {
      ptx::tensormap_acquire_fence(tma_q);
      ptx::tensormap_acquire_fence(tma_k);
      ptx::tensormap_acquire_fence(tma_v);
    }

    // Block n's K into ring position `at`'s stage, once the stage's previous K was released.
    auto load_k = [&](RingPosition<Config::kStages> at, int n) {
      ptx::mbarrier_wait_parity(pipe.k_empty(at.stage), at.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(pipe.k_full(at.stage), Config::kKVBytes);
      load_kv_block<Config, Config::kChunks>(pipe.k(at.stage), tma_k, pipe.k_full(at.stage), n, kv_head,
                                             w.map_batch);
    };
    // Config::kFirstKBeforeQ: the tile's first K block goes out before its Q. Its stage was
    // released by an S GEMM older than the previous tile's last one, whose completion Q's
    // buffer waits for, so this load never waits longer than Q's would, and the first S of the
    // tile (which needs both) no longer waits for a K issued behind Q.
    if constexpr (Config::kFirstKBeforeQ) {
      if (range.end > range.begin) load_k(ring, range.end - 1);
    }
    if constexpr (Config::kFirstKBeforeQ || Config::kSplitQ) {
      wait_and_load_q<Config>(p, pipe, tma_q, w, q_phase);
    } else {
      load_q<Config>(p, pipe, tma_q, w, 0);  // its wait came first (above)
    }
    // Claimed now, used next iteration: the atomic's latency hides behind this tile's loads.
    tile = claim_next_work<Config>(p, tile);

    // Block n's V into the V use of ring position `at`, once that use's previous holder released it.
    auto load_v = [&](RingPosition<Config::kStages> at, int n) {
      const RingPosition<Config::kStages> v_use = vring.at(at);
      ptx::mbarrier_wait_parity(pipe.v_empty(v_use.stage), v_use.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(pipe.v_full(v_use.stage), Config::kVBytes);
      load_kv_block<Config, Config::kChunksV>(pipe.v(v_use.stage), tma_v, pipe.v_full(v_use.stage), n,
                                              kv_head, w.map_batch);
    };
    // Config::kPrefetchEarly: the block after whose loads the next tile's prefetch goes out, the tile's
    // kPrefetchAfterBlocks-th or (windowed) kPrefetchAfterBlocksWindowed-th (its last when it has fewer).
    // From the second on the producer has waited for a stage at least once by then, so a dynamic claim's
    // atomic has landed; after the first (the default without a window) the equally long tiles of an unmasked
    // batch have a static schedule and no atomic to wait for.
    [[maybe_unused]] const int prefetch_blocks =
        windowed(p) ? Config::kPrefetchAfterBlocksWindowed : Config::kPrefetchAfterBlocks;
    [[maybe_unused]] const int prefetch_after =
        range.end - range.begin >= prefetch_blocks ? range.end - prefetch_blocks : range.begin;
    if constexpr (Config::kKLookahead) {
      // Each K one block ahead of its V (forward_config.h K_LOOKAHEAD), and under kOOverV the last tile's O
      // stores (give_output_slots) between the second K and the first V: a consumer that skips this tile's
      // top block waits for the second K before its epilogue (consumer.h kEarlyNextS), and the first V waits
      // for consumer 0's O.
      if (!Config::kFirstKBeforeQ && range.end > range.begin) load_k(ring, range.end - 1);
      if constexpr (Config::kOOverV) {
        if (slots_owed && range.end == range.begin) {
          give_output_slots(pipe, vring.at(ring), true);
          vring.pass_output_slots();
        }
      }
      if constexpr (Config::kPrefetchEarly) {
        // As the split loop below (without the lookahead).
        auto load_block = [&](int n) {
          if (n > range.begin) {
            RingPosition<Config::kStages> ahead = ring;
            ahead.advance();
            load_k(ahead, n - 1);
          }
          if constexpr (Config::kOOverV) {
            if (slots_owed && n == range.end - 1) {
              give_output_slots(pipe, vring.at(ring), true);
              vring.pass_output_slots();
            }
          }
          load_v(ring, n);
          ring.advance();
        };
        int n = range.end - 1;
#pragma unroll 1
        for (; n >= prefetch_after; --n) load_block(n);
        if (range.end > range.begin) prefetch_next_q<Config>(p, tile);
#pragma unroll 1
        for (; n >= range.begin; --n) load_block(n);
      } else {
        // load_block's body written out, not called: through the lambda the 24-register thread's code changed
        // (the SASS of kernels without the prefetch moved, session 30).
#pragma unroll 1
        for (int n = range.end - 1; n >= range.begin; --n) {
          if (n > range.begin) {
            RingPosition<Config::kStages> ahead = ring;
            ahead.advance();
            load_k(ahead, n - 1);
          }
          if constexpr (Config::kOOverV) {
            if (slots_owed && n == range.end - 1) {
              give_output_slots(pipe, vring.at(ring), true);
              vring.pass_output_slots();
            }
          }
          load_v(ring, n);
          ring.advance();
        }
      }
      if constexpr (Config::kOOverV) slots_owed = true;
    } else if constexpr (Config::kPrefetchEarly) {
      // The key-block loop in two, the prefetch between them: the next tile's decode then costs registers
      // (spills) at that one point per tile, not in every block's loads.
      auto load_block = [&](int n) {
        if (!Config::kFirstKBeforeQ || n != range.end - 1) load_k(ring, n);
        load_v(ring, n);
        ring.advance();
      };
      int n = range.end - 1;
#pragma unroll 1
      for (; n >= prefetch_after; --n) load_block(n);
      if (range.end > range.begin) prefetch_next_q<Config>(p, tile);
#pragma unroll 1
      for (; n >= range.begin; --n) load_block(n);
    } else {
      // load_block's body written out, as in the lookahead branch above.
#pragma unroll 1  // not unrolled: more live values in a thread of 24 registers
      for (int n = range.end - 1; n >= range.begin; --n) {
        if (!Config::kFirstKBeforeQ || n != range.end - 1) load_k(ring, n);
        load_v(ring, n);
        ring.advance();
      }
    }
    // Here, not at the claim: a dynamic claim's atomic has had this tile's loads to land, and the loads above
    // wait for stages, so this runs about kStages key blocks before the tile's end.
    if constexpr (Config::kPrefetchNextTile && !Config::kPrefetchEarly) prefetch_next_q<Config>(p, tile);
  }
  if constexpr (Config::kOOverV) {
    if (slots_owed) give_output_slots(pipe, vring.at(ring), true);
  }
}

// Paged K/V: one key block of `kCols` columns gathered by the 32 lanes of the producer
// warp with 16-byte cp.async into the layout TMA would have written (kCols / 64 chunks of
// [kBlockN rows][128 B], 128B-swizzled: 16-byte unit u of row r sits at unit u ^ (r % 8)).
// Rows of the boxes set in `tma_boxes` (box j: rows [j << box_shift, (j + 1) << box_shift))
// are left alone: TMA writes them. Rows past the sequence's last key, and columns past the
// operand's head dim (d = 96 on the 128-column kernel), are zero-filled without reading memory
// (the cache may hold anything there, and 0 * NaN in P V would poison O). Table entries and
// slots are clamped to the table and the cache like every index read from device memory.
// kSkipPastEnd (producer_loop_paged's kTailBoxes): rows past the last key are left alone instead (fix_tail
// zeroes V's there, K's are masked).
// The decode kernels (Config::kSingleConsumer, whose producer keeps all its registers) read the table once
// per row: lane l reads row 32 i + l's entry for each group i of 32 rows (the next group's while the current
// group's copies go out), and a copy takes its row's page from that lane. The others read it for every
// 16-byte unit, each read waited for before its copy: the row-wise form spilled 6-20 LDL / STL in their
// 40-register producer. (On the 64-row decode tile the row-wise form took ~3 us off a gathered tail block's
// ~13, s49_cache3.sh: most of a gather's cost is elsewhere, not understood.)
template <class Config, int kCols, bool kSkipPastEnd>
__device__ __forceinline__ void gather_paged_block(const ForwardKernelParams& p, const WorkTile& w,
                                                   int k_offset, int n_block, int kv_head, int cols,
                                                   const void* base, std::int64_t page_stride,
                                                   std::int64_t row_stride, std::int64_t head_stride,
                                                   std::uint32_t smem, std::uint32_t tma_boxes,
                                                   int box_shift) {
  constexpr int kUnits = kCols / 8;  // 16-byte units per row
  const int lane = static_cast<int>(threadIdx.x % 32);
  const PagedKV& g = p.paged;
  const auto* table = g.block_table + w.batch * g.table_batch_stride;
  const auto* head_base = static_cast<const unsigned char*>(base) + kv_head * head_stride * 2;
  if constexpr (Config::kSingleConsumer) {
    constexpr int kRowGroups = (Config::kBlockN + 31) / 32;
    const int first_key = n_block * Config::kBlockN;
    // Whether row `row` is one this gather writes: not a TMA box's, and (kSkipPastEnd) not past the last key.
    auto gathered = [&](int row) {
      return row < Config::kBlockN && ((tma_boxes >> (row >> box_shift)) & 1u) == 0 &&
             (!kSkipPastEnd || first_key + row < w.seqlen_k);
    };
    // The page of row `row` (this lane's of a group of 32), or -1 where no key of the sequence is read there.
    auto row_page = [&](int row) {
      int page = -1;
      if (gathered(row) && first_key + row < w.seqlen_k) {
        int slot = fast_divide(k_offset + first_key + row, g.page_div);
        if (g.table_cols > 0) slot = min(slot, g.table_cols - 1);
        page = table[slot];
        if (g.kv_blocks > 0) page = max(0, min(page, g.kv_blocks - 1));
      }
      return page;
    };
    int page = row_page(lane);
#pragma unroll 1
    for (int group = 0; group < kRowGroups; ++group) {
      const int next_page = group + 1 < kRowGroups ? row_page(32 * (group + 1) + lane) : -1;
      // Rows 32 group .. + 31, kUnits units each: the same trip count in every lane (the shuffle's).
#pragma unroll 1
      for (int index = lane; index < 32 * kUnits; index += 32) {
        const int row = 32 * group + index / kUnits;
        const int from_page = __shfl_sync(0xffffffffu, page, index / kUnits);
        if (!gathered(row)) continue;
        const int unit = index % kUnits;
        const bool valid = from_page >= 0 && unit * 8 < cols;
        const void* src = base;
        if (valid) {
          const int position = k_offset + first_key + row;
          const int in_page = position - fast_divide(position, g.page_div) * g.page_size;
          src = head_base + (from_page * page_stride + in_page * row_stride + unit * 8) * 2;
        }
        const std::uint32_t dst = smem + (unit / 8) * Config::kKVChunkBytes + row * Config::kRowBytes +
                                  (((unit % 8) ^ (row % 8)) * 16);
        ptx::cp_async_cg_16(dst, src, valid);
      }
      page = next_page;
    }
  } else {
#pragma unroll 1
    for (int index = lane; index < Config::kBlockN * kUnits; index += 32) {
      const int row = index / kUnits;
      if ((tma_boxes >> (row >> box_shift)) & 1u) continue;
      const int unit = index % kUnits;
      const int key = n_block * Config::kBlockN + row;
      if (kSkipPastEnd && key >= w.seqlen_k) continue;
      const bool valid = key < w.seqlen_k && unit * 8 < cols;
      const void* src = base;
      if (valid) {
        const int position = k_offset + key;
        int slot = position / g.page_size;
        if (g.table_cols > 0) slot = min(slot, g.table_cols - 1);
        int page = table[slot];
        if (g.kv_blocks > 0) page = max(0, min(page, g.kv_blocks - 1));
        src = head_base + (page * page_stride + (position - slot * g.page_size) * row_stride + unit * 8) * 2;
      }
      const std::uint32_t dst = smem + (unit / 8) * Config::kKVChunkBytes + row * Config::kRowBytes +
                                (((unit % 8) ^ (row % 8)) * 16);
      ptx::cp_async_cg_16(dst, src, valid);
    }
  }
}

// Where one producer lane reads its box of a paged key block (producer_loop_paged): the page
// holding the box and the box's first row in it; `fits`: the box's rows are all keys of the
// sequence and lie inside one page, so it goes by TMA.
struct PagedBox {
  int page, row;
  bool fits;
};

// The producer of a paged-K/V launch: the whole producer warp runs it (lane 0 alone
// issues the Q TMA loads, claims tiles and arrives on barriers, exactly as
// producer_loop does). With page views (PagedKV::box_rows > 0) box j of a key block
// (box_rows rows per 64-column chunk) is issued by lane j at its own page: one table read
// per box, all in parallel, issued before the block waits for its stages so that their
// latency hides behind the waits. A block whose boxes all fit (every block but the sequence's last
// when the sequence's first key sits on a box boundary) is announced by TMA alone: lane 0
// arrives with the block's bytes on the full barrier (count 1) before any box is issued.
// Otherwise the boxes that fit still go by TMA (lane 0 only expects their bytes), the rest
// is gathered; the gather is waited for, made visible to the tensor cores' async proxy
// (fence.proxy.async in every writing lane), and lane 0 then arrives.
//
// kTailBoxes (the decode kernels, whose consumers mask K's rows past the sequence's end by select): the box
// holding the sequence's last key goes by TMA too, and the boxes past it are not loaded, so a sequence's last
// block is gathered only where a box straddles two pages (a leftpad off the box grid); that block's V rows
// past the end are zeroed by this warp once its boxes landed (fix_tail), before v_full completes. Gathering
// the tail box had cost a d128 decode of 1000 keys in pages of 64 ~13 us (s49_cache.sh: 22 us against 8.7
// dense; why a gather costs that much is not known: a table read per row instead of per 16 bytes took 3 us
// off it on the 64-row tile, s49_cache3.sh; the 64-row tile's 64/4 decode with kTailBoxes 24.1 -> 12.2 us,
// s49_cache5.sh). The two-consumer kernels still gather a sequence's tail block.
template <class Config>
__device__ void producer_loop_paged(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe) {
  constexpr bool kTailBoxes = Config::kSingleConsumer;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const bool leader = lane == 0;
  const PagedKV& g = p.paged;
  if (leader) {
    ptx::prefetch_tensormap(&p.maps.q);
    if (g.box_rows > 0) {
      ptx::prefetch_tensormap(&p.maps.k);
      ptx::prefetch_tensormap(&p.maps.v);
    }
  }
  RingPosition<Config::kStages> ring;  // K's; V's through vring
  VRing<Config> vring;
  bool slots_owed = false;  // kOOverV: as in producer_loop
  std::uint32_t q_phase = 0;
  int tile = first_tile<Config::kClusterM>(p);
  [[maybe_unused]] bool prepared = !Config::kCacheLengths || !p.cache.after_prepare;
  // kTailBoxes: the V stage of a sequence's last block whose boxes land on tail_full (while `pending`), its
  // v_full, and its first row past the last key. fix_tail zeroes those rows once the boxes have
  // landed, fences them for the tensor cores and completes v_full: the warp that wrote the stage's other
  // rows (gathered) writes these too, and the consumers never write a K / V stage.
  struct TailV {
    bool pending = false;
    std::uint32_t stage = 0, full = 0;
    int first_row = 0;
  };
  [[maybe_unused]] TailV tail_v;
  [[maybe_unused]] std::uint32_t tail_phase = 0;
  [[maybe_unused]] auto fix_tail = [&] {
    ptx::mbarrier_wait_parity(pipe.tail_full(), tail_phase);
    tail_phase ^= 1;
    zero_v_rows<Config>(tail_v.stage, tail_v.first_row, lane, 32);
    ptx::fence_proxy_async_shared_cta();
    __syncwarp();
    if (leader) ptx::mbarrier_arrive(tail_v.full);
    tail_v.pending = false;
  };
  for (;;) {
    WorkTile w{};
    tile = next_busy_tile<Config>(p, tile, w, [&](int t) {
      return __shfl_sync(0xffffffffu, leader ? claim_next_tile<Config::kClusterM>(p, t) : 0, 0);
    });
    // The same handoff as producer_loop: the index (or the end marker) first, by the leader.
    if (leader) publish_next_tile<Config, false>(p, pipe, tile, w, q_phase);
    if (tile >= p.num_tiles) break;
    if constexpr (Config::kCacheLengths) await_prepare(prepared);  // every lane: each gathers
    const int kv_head = kv_head_of<Config>(p, w);
    const KeyBlockRange range = work_key_blocks<Config>(p, tile, w);
    int k_offset = p.sequences != nullptr ? p.sequences[w.batch].k_offset : 0;
    if constexpr (Config::kCacheLengths) {
      if (p.cache.active) k_offset = cache_key_offset(p.cache, w.batch);
    }
    // Lane `lane`'s box of key block n (PagedBox; lanes without a box: fits false). kTailBoxes: a box that
    // holds the sequence's last key fits too (its page holds the rows past it), and one past the last key is
    // loaded by nobody (`past_end`).
    bool past_end = false;
    auto locate = [&](int n) {
      PagedBox box{0, 0, false};
      const int first_key = n * Config::kBlockN + lane * g.box_rows;
      past_end = kTailBoxes && lane < g.boxes && first_key >= w.seqlen_k;
      if (lane < g.boxes && (kTailBoxes ? first_key < w.seqlen_k : first_key + g.box_rows <= w.seqlen_k)) {
        const int position = k_offset + first_key;
        int slot = fast_divide(position, g.page_div);
        box.row = position - slot * g.page_size;
        box.fits = box.row + g.box_rows <= g.page_size;
        if (g.table_cols > 0) slot = min(slot, g.table_cols - 1);
        box.page = max(0, min(g.block_table[w.batch * g.table_batch_stride + slot], g.kv_blocks - 1));
      }
      return box;
    };
    PagedBox box = range.end > range.begin ? locate(range.end - 1) : PagedBox{0, 0, false};
    // kTailBoxes: the block holding the sequence's last key and rows past it (the piece's first), or -1.
    [[maybe_unused]] const int tail_block =
        range.end > range.begin && range.end * Config::kBlockN > w.seqlen_k ? range.end - 1 : -1;
    {
      const CUtensorMap* tma_q = map_q(p, w);
      if (leader && p.sequence_maps != nullptr) ptx::tensormap_acquire_fence(tma_q);
        // Every lane waits (the warp stays converged), the leader loads.
#pragma unroll
      for (int part = 0; part < Config::kQParts; ++part) {
        ptx::mbarrier_wait_parity(pipe.q_empty(part), q_phase ^ 1);
        if (leader) load_q<Config>(p, pipe, tma_q, w, part);
      }
      q_phase ^= 1;
    }
    tile = __shfl_sync(0xffffffffu, leader ? claim_next_tile<Config::kClusterM>(p, tile) : 0, 0);
    if constexpr (Config::kOOverV) {
      if (slots_owed) {
        give_output_slots(pipe, vring.at(ring), leader);
        vring.pass_output_slots();
      }
      slots_owed = true;
    }

#pragma unroll 1
    for (int n = range.end - 1; n >= range.begin; --n) {
      const std::uint32_t tma_boxes = __ballot_sync(0xffffffffu, box.fits);
      // No gather: every box goes by TMA (kTailBoxes: or lies past the sequence's end).
      bool whole = tma_boxes != 0 && tma_boxes == g.box_mask;
      if constexpr (kTailBoxes)
        whole = tma_boxes != 0 && (tma_boxes | __ballot_sync(~0u, past_end)) == g.box_mask;
      // This lane's box: rows [lane * box_rows, +box_rows) of every chunk of the stage.
      const auto box_smem = static_cast<std::uint32_t>(lane * g.box_rows * Config::kRowBytes);
      // Bytes per chunk of the boxes that go by TMA.
      const auto tma_chunk_bytes =
          static_cast<std::uint32_t>(__popc(tma_boxes) * g.box_rows * Config::kRowBytes);

      ptx::mbarrier_wait_parity(pipe.k_empty(ring.stage), ring.phase ^ 1);
      if (leader) {
        if (whole) {
          ptx::mbarrier_arrive_expect_tx(pipe.k_full(ring.stage),
                                         kTailBoxes ? tma_chunk_bytes * Config::kChunks : Config::kKVBytes);
        } else if (tma_boxes != 0) {
          ptx::mbarrier_expect_tx(pipe.k_full(ring.stage), tma_chunk_bytes * Config::kChunks);
        }
      }
      __syncwarp();
      if (box.fits) {
#pragma unroll
        for (int c = 0; c < Config::kChunks; ++c) {
          ptx::tma_load_4d(pipe.k(ring.stage) + c * Config::kKVChunkBytes + box_smem, &p.maps.k,
                           pipe.k_full(ring.stage), c * Config::kChunkCols, box.row, kv_head, box.page);
        }
      }
      if (!whole) {
        // K and V gathered in flight together; K is announced first so that S = Q K^T may
        // start while V still lands.
        gather_paged_block<Config, Config::kHeadDim, kTailBoxes>(
            p, w, k_offset, n, kv_head, g.k_cols, g.k, g.k_page_stride, g.k_row_stride, g.k_head_stride,
            pipe.k(ring.stage), tma_boxes, g.box_shift);
        ptx::cp_async_commit_group();
      }
      const RingPosition<Config::kStages> v_use = vring.at(ring);
      ptx::mbarrier_wait_parity(pipe.v_empty(v_use.stage), v_use.phase ^ 1);
      // kTailBoxes: the sequence's last block's V boxes complete on tail_full, v_full on fix_tail's arrive.
      const bool v_tail = kTailBoxes && n == tail_block;
      const std::uint32_t v_landed = v_tail ? pipe.tail_full() : pipe.v_full(v_use.stage);
      if (leader) {
        if (whole || v_tail) {
          ptx::mbarrier_arrive_expect_tx(v_landed,
                                         kTailBoxes ? tma_chunk_bytes * Config::kChunksV : Config::kVBytes);
        } else if (tma_boxes != 0) {
          ptx::mbarrier_expect_tx(v_landed, tma_chunk_bytes * Config::kChunksV);
        }
      }
      __syncwarp();
      if (box.fits) {
#pragma unroll
        for (int c = 0; c < Config::kChunksV; ++c) {
          ptx::tma_load_4d(pipe.v(v_use.stage) + c * Config::kKVChunkBytes + box_smem, &p.maps.v, v_landed,
                           c * Config::kChunkCols, box.row, kv_head, box.page);
        }
      }
      if (!whole) {
        gather_paged_block<Config, Config::kHeadDimV, kTailBoxes>(
            p, w, k_offset, n, kv_head, g.v_cols, g.v, g.v_page_stride, g.v_row_stride, g.v_head_stride,
            pipe.v(v_use.stage), tma_boxes, g.box_shift);
        ptx::cp_async_commit_group();
        ptx::cp_async_wait_group<1>();
        ptx::fence_proxy_async_shared_cta();
        __syncwarp();
        if (leader) ptx::mbarrier_arrive(pipe.k_full(ring.stage));
        ptx::cp_async_wait_group<0>();
        ptx::fence_proxy_async_shared_cta();
      }
      __syncwarp();
      if (leader && !whole && !v_tail) ptx::mbarrier_arrive(pipe.v_full(v_use.stage));
      if (v_tail) {
        tail_v = TailV{true, pipe.v(v_use.stage), pipe.v_full(v_use.stage), w.seqlen_k - n * Config::kBlockN};
      } else if (tail_v.pending) {
        fix_tail();  // after the next block's loads went out, before the ring comes back to its stage
      }
      ring.advance();
      // The next block's table entries: in flight while it waits for its stages (its ballot
      // needs only the arithmetic).
      if (n > range.begin) box = locate(n - 1);
    }
    if (tail_v.pending) fix_tail();  // a piece of one block
  }
  if constexpr (Config::kOOverV) {
    if (slots_owed) give_output_slots(pipe, vring.at(ring), leader);
  }
}

}  // namespace flashattn::detail::cuda_sm90
