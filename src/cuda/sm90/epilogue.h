// Epilogue of one consumer warpgroup: normalise its 64 rows of O, write them to
// shared memory in the 128B-swizzled box layout, and let one thread store them
// with TMA (rows past seqlen_q are clipped by the tensor map); LSE goes straight
// from registers to global memory (one float per row, written by lane%4 == 0).
#pragma once

#include <cstdint>

#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/named_barriers.h"
#include "cuda/sm90/pipeline.h"
#include "cuda/sm90/softmax.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

template <typename Element>
__device__ __forceinline__ std::uint32_t pack_pair(float lo, float hi) {
  if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
    return ptx::cvt_rn_bf16x2_f32(lo, hi);
  } else {
    return ptx::cvt_rn_f16x2_f32(lo, hi);
  }
}

// Before a warpgroup writes its O buffer: the previous tile's TMA store must have
// finished reading it (its issuing thread waits, the warpgroup's barrier tells the
// others). Called by the consumer while its last P V GEMM is still running.
template <class Config>
__device__ __forceinline__ void claim_output_buffer(int consumer) {
  if constexpr (Config::kSeparateO) {
    if (threadIdx.x % 128 == 0) ptx::cp_async_bulk_wait_group_read<0>();
    ptx::bar_sync(kEpilogue + consumer, 128);
  }
}

// Once every thread of consumer warpgroup `consumer` has written its share of O's tile to o_base (the layout
// store_output writes): the TMA store of the tile, issued by the warpgroup's first thread (and, under
// Config::kOOverV or with O in Q's buffer, the release of the buffer once the store has read it).
template <class Config>
__device__ __forceinline__ void issue_output_store(const ForwardKernelParams& p,
                                                   const SharedPipeline<Config>& pipe, const WorkTile& w,
                                                   int consumer, std::uint32_t o_base,
                                                   RingPosition<Config::kStages> o_slot) {
  // Each writer orders its st.shared before the copy engine's reads, then the
  // barrier tells the storing thread that all 128 writers are done.
  ptx::fence_proxy_async_shared_cta();
  ptx::bar_sync(kEpilogue + consumer, 128);
  if (threadIdx.x % 128 == 0) {
    const CUtensorMap* tma_o = map_o(p, w);
    if (p.sequence_maps != nullptr) ptx::tensormap_acquire_fence(tma_o);
    const int first_row = w.m_block * Config::kBlockM + consumer * 64;
#pragma unroll
    for (int c = 0; c < Config::kChunksV; ++c) {
      if (p.pack > 1) {  // packed GQA: {64, pack, 64 / pack} boxes of the 5-D view
        ptx::tma_store_5d(tma_o, o_base + c * Config::kOChunkStride, c * Config::kChunkCols, 0,
                          first_row >> p.pack_shift, w.head, w.map_batch);
      } else {
        ptx::tma_store_4d(tma_o, o_base + c * Config::kOChunkStride, c * Config::kChunkCols, first_row,
                          w.head, w.map_batch);
      }
    }
    ptx::cp_async_bulk_commit_group();
    if constexpr (Config::kOOverV) {
      // The stage's next V may land once the store has read O; this use is released for every
      // consumer warp (the others never held it).
      ptx::cp_async_bulk_wait_group_read<0>();
      ptx::mbarrier_arrive_count(pipe.v_empty(o_slot.stage), Config::kConsumerWarps);
    } else if constexpr (!Config::kSeparateO) {
      // O sat in Q's buffer: only once the store has read it may the next Q land there.
      ptx::cp_async_bulk_wait_group_read<0>();
      ptx::mbarrier_arrive_count(pipe.q_empty(consumer), 4);  // its four warps (kSplitQ: all of its part's)
    }
  }
}

// The LSE of packed row `packed` of tile w: query position packed >> pack_shift, under packed GQA the head of
// the group in its low bits; nothing for positions past the sequence's queries (the tile's padding rows).
__device__ __forceinline__ void store_packed_row_lse(const ForwardKernelParams& p, const WorkTile& w,
                                                     int packed, float lse) {
  const int row = packed >> p.pack_shift;
  const int head = (w.head << p.pack_shift) + (packed & ((1 << p.pack_shift) - 1));
  if (row < w.seqlen_q) {
    p.lse[w.batch * p.lse_batch_stride + head * p.lse_head_stride +
          static_cast<std::int64_t>(w.q_offset + row) * p.lse_row_stride] = lse;
  }
}

// The buffer was claimed (claim_output_buffer) before this is called, except under
// Config::kOOverV, where O goes over the V stage of o_slot (a use of the V ring: pipeline.h),
// waited for here, and that use is released once the store has read it. o is the P V
// accumulator: its first kGemmDimV / 2 values are O's (kRowSumMma: the row sums follow). Columns past
// kGemmDimV in the buffer stay unwritten: the tensor map clips them from the store (the problem's dv is at
// most kGemmDimV).
template <class Config>
__device__ void store_output(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe,
                             const WorkTile& w, int consumer, const float (&o)[Config::kPVN / 2],
                             const RowFinal& final_rows, RingPosition<Config::kStages> o_slot) {
  const int thread = threadIdx.x % 128;
  const int lane = thread % 32;
  const int row0 = (thread / 32) * 16 + lane / 4;  // within the warpgroup's 64 rows
  std::uint32_t o_base;
  if constexpr (Config::kOOverV) {
    // Every consumer warp's P V reads of the stage's previous use are done (the producer waited for
    // their release before it handed the use over).
    ptx::mbarrier_wait_parity(pipe.v_full(o_slot.stage), o_slot.phase);
    o_base = pipe.v(o_slot.stage);
  } else {
    o_base = pipe.o(consumer);
  }

  if constexpr (Config::kStmatrixO) {
    // One stmatrix per 16 columns: matrices 0 / 1 are rows +0 / +8 of columns 16 i2 .. + 7,
    // 2 / 3 the same rows of columns + 8 .. + 15 (the accumulator's o[8 i2 ..] in that order).
    // Lane l addresses row (l / 8 % 2) 8 + l % 8 of its warp's 16, 16-byte unit
    // 2 (i2 % 4) + l / 16 of the 64-column chunk, swizzled by the row: unit ^ (l % 8), and
    // (2 k + u) ^ r = 2 k ^ (u ^ r), so one per-lane term and an immediate per i2.
    const int row = (thread / 32) * 16 + ((lane / 8) % 2) * 8 + lane % 8;
    const std::uint32_t row_addr = o_base + row * Config::kRowBytes;
    const int unit_xor = (lane / 16) ^ (lane % 8);
#pragma unroll
    for (int i2 = 0; i2 < Config::kGemmDimV / 16; ++i2) {
      const float* v = o + 8 * i2;
      const float s0 = final_rows.scale[0], s1 = final_rows.scale[1];
      const std::uint32_t addr =
          row_addr + (i2 / 4) * Config::kOChunkStride + ((unit_xor ^ (2 * (i2 % 4))) * 16);
      ptx::stmatrix_x4(addr, pack_pair<typename Config::Element>(v[0] * s0, v[1] * s0),
                       pack_pair<typename Config::Element>(v[2] * s1, v[3] * s1),
                       pack_pair<typename Config::Element>(v[4] * s0, v[5] * s0),
                       pack_pair<typename Config::Element>(v[6] * s1, v[7] * s1));
    }
  } else {
#pragma unroll
    for (int i = 0; i < Config::kGemmDimV / 8; ++i) {
      const int col = 8 * i + 2 * (lane % 4);
      const int chunk = col / Config::kChunkCols;
      const int chunk_col = col % Config::kChunkCols;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = row0 + 8 * half;
        const std::uint32_t packed = pack_pair<typename Config::Element>(
            o[4 * i + 2 * half] * final_rows.scale[half], o[4 * i + 2 * half + 1] * final_rows.scale[half]);
        const std::uint32_t addr = o_base + chunk * Config::kOChunkStride + row * Config::kRowBytes +
                                   (((chunk_col / 8) ^ (row % 8)) * 16) + (chunk_col % 8) * 2;
        ptx::st_shared_b32(addr, packed);
      }
    }
  }
  issue_output_store<Config>(p, pipe, w, consumer, o_base, o_slot);
  if (p.lse != nullptr && lane % 4 == 0) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      store_packed_row_lse(p, w, w.m_block * Config::kBlockM + consumer * 64 + row0 + 8 * half,
                           final_rows.lse[half]);
    }
  }
}

}  // namespace flashattn::detail::cuda_sm90
