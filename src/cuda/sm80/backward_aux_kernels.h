// The small kernels around the backward main kernel:
//   preprocess  D_i = rowsum(dO_i * O_i) in fp32, LSE in base 2 (+inf where P must be 0:
//               padding rows and rows that saw no key), dQ accumulator and semaphores zeroed;
//   dsink       dsink_h = -sum_{b,i} e^{sink_h - LSE_i} D_i in double, one CTA per head summing in a fixed
//               order (deterministic whatever the mode);
//   postprocess dQ = scale * accumulator, converted, rows past the used ones zero.
// All index with 64-bit arithmetic; the preprocess takes one CTA per 64 rows of a (sequence, head), the
// others walk their work with a grid stride.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "common/params.h"
#include "cuda/sm80/backward_config.h"
#include "cuda/sm80/element_convert.h"
#include "cuda/sm80/warp_mma.h"

namespace flashattn::detail::cuda_sm80 {

constexpr int kAuxThreads = 256;

__host__ __device__ inline std::int64_t allocated_rows_q(const BackwardParams& p, std::int64_t b) {
  return p.cu_seqlens_q ? p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b] : p.seqlen_q;
}

// PREPROCESS_PACKED (bwd7, default 1): a warp covers 32 / G scratch rows at once, G lanes per row (G =
// the power of two >= head_dim_v / 8; lane c of a group reads columns [8c, 8c + 8) of dO and O). 0: one
// warp per row (version 6), which left 16 of 32 lanes idle at d 128 and 24 at d 64 and did each row's
// index arithmetic serially: its preprocess took 115 us per call at d 128 (16k tokens x 16 heads) where
// FA2's takes 68 us (torch.profiler, H200), a fixed cost that is 5% of the 512-token rows. Packed: 73-76
// us at d 64 / 128 / 256; +16..+20% at d 64 and +4..+6% at d 128 on the 512-token rows (version 7).
#ifndef FLASHATTN_SM80_BWD_PREPROCESS_PACKED
#define FLASHATTN_SM80_BWD_PREPROCESS_PACKED 1
#endif

// AUX_REVERSE (0: rows in order): the preprocess and postprocess walk the scratch rows last to first. The
// main kernels start with the first (sequence, head) pairs and end with the last, and the 128 MB dQ
// accumulator of a 16k-token d128 call is larger than L2: walked in order, the postprocess starts on rows
// long evicted, and the preprocess leaves in L2 the rows the main kernel needs last. Measured on an H200
// (s61_aux_reverse.sh, whole backward calls at 512-2k tokens): 0.97-1.00x the time on cuda_sm90, 0.96-1.01x
// on cuda_sm80.
#ifndef FLASHATTN_SM80_BWD_AUX_REVERSE
#define FLASHATTN_SM80_BWD_AUX_REVERSE 1
#endif

// Lanes per scratch row in the preprocess (1 << log2): the power of two >= head_dim_v / 8, at least 8
// (the group sizes the GPU tests ran: 8, 16, 32; head_dim_v <= 32 leaves lanes of the 8 idle) and at most
// 32.
__host__ __device__ inline int preprocess_lanes_log2(std::int64_t head_dim_v) {
#if FLASHATTN_SM80_BWD_PREPROCESS_PACKED
  int log2 = 3;
  while (log2 < 5 && (std::int64_t{8} << log2) < head_dim_v) ++log2;
  return log2;
#else
  (void)head_dim_v;
  return 5;
#endif
}

// dsink in double, with dO . O recomputed in double from the inputs (the CPU backends' precision:
// the sum runs over every row of every sequence). One warp per row, warps in a fixed order.
template <typename Element>
__global__ void __launch_bounds__(kAuxThreads)
    backward_dsink_kernel(const __grid_constant__ BackwardKernelArgs args) {
  constexpr int kWarps = kAuxThreads / 32;
  const BackwardParams& p = args.p;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __shared__ double partial[kWarps];
  for (std::int64_t head = blockIdx.x; head < p.heads; head += gridDim.x) {
    const double sink = p.sink[head];
    double sum = 0.0;
    for (std::int64_t b = 0; b < p.batch; ++b) {
      const SequenceLengths seq = sequence_lengths(p, b);
      for (std::int64_t i = warp; i < seq.q; i += kWarps) {
        double dot = 0.0;
        if (lane * 8 < p.head_dim_v) {
          const auto* dout = static_cast<const Element*>(p.dout.data) + query_offset(p.dout, seq, b, i, head);
          const auto* out = static_cast<const Element*>(p.out.data) + query_offset(p.out, seq, b, i, head);
          const uint4 dv = *reinterpret_cast<const uint4*>(dout + lane * 8);
          const uint4 ov = *reinterpret_cast<const uint4*>(out + lane * 8);
          const Element* d8 = reinterpret_cast<const Element*>(&dv);
          const Element* o8 = reinterpret_cast<const Element*>(&ov);
#pragma unroll
          for (int c = 0; c < 8; ++c) dot += static_cast<double>(to_float(d8[c])) * to_float(o8[c]);
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        const float lse = p.lse[lse_offset(p, seq, b, i, head)];
        if (lse != -INFINITY) sum += exp(sink - static_cast<double>(lse)) * dot;
      }
    }
    if (lane == 0) partial[warp] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
      double total = 0.0;
      for (int w = 0; w < kWarps; ++w) total += partial[w];
      p.dsink[head] = static_cast<float>(-total);
    }
    __syncthreads();
  }
}

// One thread per 8 columns of a dQ row.
template <typename Element>
__global__ void __launch_bounds__(kAuxThreads)
    backward_postprocess_kernel(const __grid_constant__ BackwardKernelArgs args) {
  const BackwardParams& p = args.p;
  const std::int64_t chunks_per_row = p.head_dim / 8;
  const std::int64_t total = p.batch * p.heads * args.rows_padded * chunks_per_row;
  for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(kAuxThreads) + threadIdx.x; c < total;
       c += static_cast<std::int64_t>(gridDim.x) * kAuxThreads) {
    // AUX_REVERSE: the last rows first, the ones the main kernel added to last, still in L2.
    const std::int64_t walked = FLASHATTN_SM80_BWD_AUX_REVERSE ? total - 1 - c : c;
    const std::int64_t row = walked / chunks_per_row;
    const int chunk = static_cast<int>(walked % chunks_per_row);
    const std::int64_t i = row % args.rows_padded;
    const std::int64_t head = (row / args.rows_padded) % p.heads;
    const std::int64_t batch = row / args.rows_padded / p.heads;
    if (i >= allocated_rows_q(p, batch)) continue;
    const SequenceLengths seq = sequence_lengths(p, batch);
    // Rows past the used ones (seqused_q) are zeros, their accumulator rows not read: the preprocess zeroes
    // only the rows of the query tiles that hold a query.
    float4 lo = make_float4(0.f, 0.f, 0.f, 0.f), hi = lo;
    if (i < seq.q) {
      const float4* src = reinterpret_cast<const float4*>(args.dq_accum + row * args.accum_cols());
      // DQ_BULK calls wrote the row's 16-byte units swizzled (dq_bulk_unit).
      const int row8 = static_cast<int>(i & 7);
      lo = src[args.dq_bulk ? dq_bulk_unit(2 * chunk, row8) : 2 * chunk];
      hi = src[args.dq_bulk ? dq_bulk_unit(2 * chunk + 1, row8) : 2 * chunk + 1];
    }
    const float s = p.scale;
    uint4 packed;
    packed.x = pack_float2<Element>(lo.x * s, lo.y * s);
    packed.y = pack_float2<Element>(lo.z * s, lo.w * s);
    packed.z = pack_float2<Element>(hi.x * s, hi.y * s);
    packed.w = pack_float2<Element>(hi.z * s, hi.w * s);
    *reinterpret_cast<uint4*>(static_cast<Element*>(p.dq.data) + query_offset(p.dq, seq, batch, i, head) +
                              chunk * 8) = packed;
  }
}

// Scratch rows of one (sequence, head) a preprocess CTA covers (divides kBackwardRowPad).
constexpr int kAuxTileRows = 64;
static_assert(kBackwardRowPad % kAuxTileRows == 0, "a CTA's rows lie in one (sequence, head)");

// The preprocess's (sequence, head, first row) walk: each CTA's coordinates, in the order AUX_REVERSE asks
// for (the hardware starts CTAs in blockIdx order), striding over sequences and heads past the grid's y / z
// limits.
template <class Body>
__device__ __forceinline__ void for_each_aux_tile(const BackwardKernelArgs& args, Body&& body) {
  const BackwardParams& p = args.p;
  const std::int64_t tile = FLASHATTN_SM80_BWD_AUX_REVERSE ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  for (std::int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const std::int64_t batch = FLASHATTN_SM80_BWD_AUX_REVERSE ? p.batch - 1 - z : z;
    for (std::int64_t y = blockIdx.y; y < p.heads; y += gridDim.y) {
      const std::int64_t head = FLASHATTN_SM80_BWD_AUX_REVERSE ? p.heads - 1 - y : y;
      body(batch, head, tile * kAuxTileRows);
    }
  }
}

// One CTA per kAuxTileRows scratch rows of a (sequence, head) (blockIdx.x the rows, y the head, z the
// sequence), 2^kLanesLog2 lanes a row (preprocess_lanes_log2), kAuxThreads >> kLanesLog2 rows a pass: the
// sequence's lengths read once a CTA, every load of its rows (dO, O, LSE) in flight before the first is used,
// the accumulator rows zeroed as one contiguous block and only up to the sequence's last kBackwardRowPad-row
// tile (a varlen call's padding rows are never added to). Against the grid-stride form before it (one thread
// a row group, 64-bit index division a thread, a row's LSE loaded after its sums: s65_aux_tiled.sh, H200,
// torch.profiler, 16k tokens x hidden 2048): 0.90-0.92x the time at d64 / d128 (75 -> 68 us; 268 MB, now
// 3.9 TB/s), 0.64x at d256 without the accumulator (cuda_sm90: 60 -> 38 us); whole calls 0.98-0.99x on
// cuda_sm90 (d256 0.965-0.985x), 0.99-1.00x on cuda_sm80. The same form of the postprocess
// measured 1.01-1.02x its time (it was at 4.1 TB/s already): not kept.
template <typename Element, int kLanesLog2>
__global__ void __launch_bounds__(kAuxThreads)
    backward_preprocess_kernel(const __grid_constant__ BackwardKernelArgs args) {
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr int kGroupLanes = 1 << kLanesLog2;
  constexpr int kRowsPerPass = kAuxThreads >> kLanesLog2;
  constexpr int kPasses = kAuxTileRows / kRowsPerPass;
  static_assert(kPasses * kRowsPerPass == kAuxTileRows);
  const BackwardParams& p = args.p;
  const int column = 8 * (static_cast<int>(threadIdx.x) & (kGroupLanes - 1));  // first of this lane's 8
  const int row_in_pass = static_cast<int>(threadIdx.x) >> kLanesLog2;
  for_each_aux_tile(args, [&](std::int64_t batch, std::int64_t head, std::int64_t first_row) {
    const SequenceLengths seq = sequence_lengths(p, batch);
    const std::int64_t scratch_row0 = (batch * p.heads + head) * args.rows_padded + first_row;
    const auto* dout = static_cast<const Element*>(p.dout.data);
    const auto* out = static_cast<const Element*>(p.out.data);
    // Every load of the CTA's rows first (the row's LSE too, by each lane of its group, so that no load waits
    // behind a pass's sums).
    uint4 dv[kPasses], ov[kPasses];
    float lse[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const std::int64_t i = first_row + pass * kRowsPerPass + row_in_pass;
      dv[pass] = ov[pass] = make_uint4(0u, 0u, 0u, 0u);
      lse[pass] = -INFINITY;
      if (i < seq.q) {
        lse[pass] = p.lse[lse_offset(p, seq, batch, i, head)];
        if (column < p.head_dim_v) {
          dv[pass] =
              *reinterpret_cast<const uint4*>(dout + query_offset(p.dout, seq, batch, i, head) + column);
          ov[pass] = *reinterpret_cast<const uint4*>(out + query_offset(p.out, seq, batch, i, head) + column);
        }
      }
    }
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const Element* d8 = reinterpret_cast<const Element*>(&dv[pass]);
      const Element* o8 = reinterpret_cast<const Element*>(&ov[pass]);
      float sum = 0.f;
      // The row's sum over its group (XOR offsets below the group size stay inside it).
#pragma unroll
      for (int c = 0; c < 8; ++c) sum += to_float(d8[c]) * to_float(o8[c]);
#pragma unroll
      for (int offset = kGroupLanes / 2; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      }
      if (column == 0) {
        const std::int64_t row = scratch_row0 + pass * kRowsPerPass + row_in_pass;
        args.delta[row] = sum;
        // (+inf where P must be 0: rows past the sequence's, rows that saw no key.)
        args.lse_log2[row] = lse[pass] == -INFINITY ? INFINITY : lse[pass] * kLog2e;
      }
    }
    // The accumulator rows a main kernel adds to: those of the query tiles that hold a query (a tile is at
    // most kBackwardRowPad rows); the CTA's rows are contiguous.
    const std::int64_t used_rows = (seq.q + kBackwardRowPad - 1) / kBackwardRowPad * kBackwardRowPad;
    if (args.dq_accum == nullptr || first_row >= used_rows) return;  // (d = 256 on cuda_sm90: no accumulator)
    float4* accum = reinterpret_cast<float4*>(args.dq_accum + scratch_row0 * args.accum_cols());
    const int units = kAuxTileRows * static_cast<int>(args.accum_cols()) / 4;
    for (int u = static_cast<int>(threadIdx.x); u < units; u += kAuxThreads)
      accum[u] = make_float4(0.f, 0.f, 0.f, 0.f);
  });
  if (args.dq_semaphore != nullptr) {
    const std::int64_t block =
        blockIdx.x + static_cast<std::int64_t>(gridDim.x) *
                         (blockIdx.y + static_cast<std::int64_t>(gridDim.y) * blockIdx.z);
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * gridDim.y * gridDim.z * kAuxThreads;
    const std::int64_t count = p.batch * p.heads * args.m_blocks;
    for (std::int64_t c = block * kAuxThreads + threadIdx.x; c < count; c += threads)
      args.dq_semaphore[c] = 0;
    if (block == 0 && threadIdx.x == 0) *args.tile_counter = 0;
  }
}

inline unsigned aux_grid(std::int64_t work_items_per_block, std::int64_t work) {
  const std::int64_t blocks = (work + work_items_per_block - 1) / work_items_per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65536 * 8 ? 65536 * 8 : blocks));
}

template <typename Element>
cudaError_t launch_backward_aux(const BackwardKernelArgs& args, int which, cudaStream_t stream) {
  const BackwardParams& p = args.p;
  const std::int64_t rows = p.batch * p.heads * args.rows_padded;
  if (which == 0) {
    // (x: a (sequence, head)'s rows, y: heads, z: sequences; y and z stride past the grid's limits.)
    const dim3 tiles(static_cast<unsigned>(args.rows_padded / kAuxTileRows),
                     static_cast<unsigned>(p.heads < 65535 ? p.heads : 65535),
                     static_cast<unsigned>(p.batch < 65535 ? p.batch : 65535));
    switch (preprocess_lanes_log2(p.head_dim_v)) {
      case 3:
        backward_preprocess_kernel<Element, 3><<<tiles, kAuxThreads, 0, stream>>>(args);
        break;
      case 4:
        backward_preprocess_kernel<Element, 4><<<tiles, kAuxThreads, 0, stream>>>(args);
        break;
      default:
        backward_preprocess_kernel<Element, 5><<<tiles, kAuxThreads, 0, stream>>>(args);
        break;
    }
  } else if (which == 1) {
    const std::int64_t heads = p.heads < 65536 ? p.heads : 65536;
    backward_dsink_kernel<Element><<<static_cast<unsigned>(heads), kAuxThreads, 0, stream>>>(args);
  } else {
    backward_postprocess_kernel<Element>
        <<<aux_grid(kAuxThreads, rows * (p.head_dim / 8)), kAuxThreads, 0, stream>>>(args);
  }
  return cudaGetLastError();
}

}  // namespace flashattn::detail::cuda_sm80
