// Writing a warp's finished rows: normalise O by the softmax denominator (with
// the learnable sink), and store O and LSE -- or, for split-KV, the fp32
// partial O and LSE that the combine kernel merges.
//
// A row that saw no visible key ends with max -inf and sum 0: it gets O = 0 and
// LSE = -inf (LSE = sink with a sink), never NaN.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/params.h"
#include "cuda/ptx/approx_math.h"
#include "cuda/ptx/ptx.h"
#include "cuda/sm80/dropout.h"  // quad_transpose
#include "cuda/sm80/kernel_args.h"
#include "cuda/sm80/warp_mma.h"

namespace flashattn::detail::cuda_sm80 {

// Scales o in place to the final (or per-split) output and returns each row's
// natural-log LSE. kApprox (TileShape::approx_epilogue): without a sink, 1/sum and log2(sum) by
// rcp.approx / lg2.approx and selects (a non-empty row's sum is >= 1: no subnormal for ftz).
template <int kOTiles, bool kApprox = false>
__device__ __forceinline__ void finalize_rows(float (&o)[kOTiles][4], float (&lse)[2],
                                              const float (&row_max)[2], const float (&row_sum)[2],
                                              float scale_log2, float sink_log2, bool has_sink,
                                              float output_scale) {
  constexpr float kLn2 = 0.6931471805599453f;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = row_sum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    float max2 = row_max[r] == -INFINITY ? -INFINITY : row_max[r] * scale_log2;
    float o_scale;
    if constexpr (kApprox) {
      if (!has_sink) {
        const bool empty = max2 == -INFINITY || sum == 0.f;
        o_scale = (empty ? 0.f : ptx::rcp_approx_ftz_f32(sum)) * output_scale;
        lse[r] = empty ? -INFINITY : (max2 + ptx::lg2_approx_ftz_f32(sum)) * kLn2;
#pragma unroll
        for (int d = 0; d < kOTiles; ++d) o[d][2 * r] *= o_scale, o[d][2 * r + 1] *= o_scale;
        continue;
      }
    }
    if (has_sink) {
      // The sink joins the denominator only: sum' = sum + 2^(sink - max).
      const float joint = fmaxf(max2, sink_log2);
      const float keys_weight = ptx::ex2_approx_ftz_f32(max2 - joint);
      sum = sum * keys_weight + ptx::ex2_approx_ftz_f32(sink_log2 - joint);
      o_scale = keys_weight / sum;
      lse[r] = (joint + log2f(sum)) * kLn2;
    } else if (max2 == -INFINITY || sum == 0.f) {
      o_scale = 0.f;
      lse[r] = -INFINITY;
    } else {
      o_scale = 1.f / sum;
      lse[r] = (max2 + log2f(sum)) * kLn2;
    }
    o_scale *= output_scale;
#pragma unroll
    for (int d = 0; d < kOTiles; ++d) o[d][2 * r] *= o_scale, o[d][2 * r + 1] *= o_scale;
  }
}

// Final output through shared memory, so that global stores are 16-byte rows.
// `o_smem` is the Q tile region; each warp writes only its own rows
// (row0 .. row0 + kRowsPerWarp), which only it read as Q.
template <class Cfg, class OTile>
__device__ __forceinline__ void store_output(const float (&o)[Cfg::kMTiles][Cfg::kHeadDim / 8][4],
                                             const float (&lse)[Cfg::kMTiles][2],
                                             typename Cfg::Element* o_smem, const ForwardKernelArgs& args,
                                             const SequenceLengths& seq, std::int64_t batch,
                                             std::int64_t head, int m0, int row0, int lane, int thread) {
  using Element = typename Cfg::Element;
  const AttentionParams& p = args.p;
  // When Q stays in shared memory, other lanes of this warp read these rows with ldmatrix in the
  // last tile: the warp's lanes must all be past those reads before any lane overwrites them.
  __syncwarp();
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = row0 + 16 * mt + (lane >> 2) + 8 * r;
#pragma unroll
      for (int d = 0; d < Cfg::kHeadDim / 8; ++d) {
        const int col = d * 8 + 2 * (lane & 3);
        *reinterpret_cast<std::uint32_t*>(o_smem + OTile::chunk_offset(row, d) + (col & 7)) =
            pack_float2<Element>(o[mt][d][2 * r], o[mt][d][2 * r + 1]);
      }
      const std::int64_t i = m0 + row;
      if (p.lse != nullptr && (lane & 3) == 0 && i < seq.q)
        p.lse[lse_offset(p, seq, batch, i, head)] = lse[mt][r];
    }
  }
  // Rows of other warps are read below.
  __syncthreads();
  auto* out = static_cast<Element*>(p.out.data);
  constexpr int kChunks = Cfg::kBlockM * Cfg::kChunksPerRow;
#pragma unroll
  for (int c = thread; c < kChunks; c += Cfg::kThreads) {
    const int row = c / Cfg::kChunksPerRow;
    const int chunk = c % Cfg::kChunksPerRow;
    if (m0 + row < seq.q && chunk * Cfg::kChunk < p.head_dim_v) {
      const uint4 value = *reinterpret_cast<const uint4*>(o_smem + OTile::chunk_offset(row, chunk));
      *reinterpret_cast<uint4*>(out + query_offset(p.out, seq, batch, m0 + row, head) + chunk * Cfg::kChunk) =
          value;
    }
  }
}

// Final output straight from registers, shared memory untouched (prefetch_next: the next tile's Q
// and K/V are being copied into it). A quad's four lanes hold a row's four 4-byte column pairs of
// each 8-column d-tile; a 4 x 4 transpose across the quad over d-tiles 4k..4k+3 gives lane q all
// of d-tile 4k + q, so each store is 16 bytes and a warp's store covers 64 contiguous bytes of
// each of 8 rows (as the staged copy's 16-byte stores do), not 4-byte pieces.
template <class Cfg>
__device__ __forceinline__ void store_output_from_registers(
    const float (&o)[Cfg::kMTiles][Cfg::kHeadDim / 8][4], const float (&lse)[Cfg::kMTiles][2],
    const ForwardKernelArgs& args, const SequenceLengths& seq, std::int64_t batch, std::int64_t head, int m0,
    int row0, int lane) {
  using Element = typename Cfg::Element;
  constexpr int kOTiles = Cfg::kHeadDim / 8;
  static_assert(kOTiles % 4 == 0, "buckets are multiples of 32");
  const AttentionParams& p = args.p;
  auto* out = static_cast<Element*>(p.out.data);
  const int quad = lane & 3;
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const std::int64_t i = m0 + row0 + 16 * mt + (lane >> 2) + 8 * r;
      const bool row_valid = i < seq.q;
      if (p.lse != nullptr && quad == 0 && row_valid) p.lse[lse_offset(p, seq, batch, i, head)] = lse[mt][r];
      Element* row = out + (row_valid ? query_offset(p.out, seq, batch, i, head) : 0);
#pragma unroll
      for (int k = 0; k < kOTiles / 4; ++k) {
        std::uint32_t words[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
          words[j] = pack_float2<Element>(o[mt][4 * k + j][2 * r], o[mt][4 * k + j][2 * r + 1]);
        quad_transpose(words, quad);
        const int col = 8 * (4 * k + quad);
        if (row_valid && col < p.head_dim_v)
          *reinterpret_cast<uint4*>(row + col) = make_uint4(words[0], words[1], words[2], words[3]);
      }
    }
  }
}

// Split-KV partials, fp32, straight from registers (layout in kernel_args.h).
template <class Cfg>
__device__ __forceinline__ void store_partial(const float (&o)[Cfg::kMTiles][Cfg::kHeadDim / 8][4],
                                              const float (&lse)[Cfg::kMTiles][2],
                                              const ForwardKernelArgs& args, const SequenceLengths& seq,
                                              std::int64_t batch, std::int64_t head, int split, int m0,
                                              int row0, int lane) {
  const AttentionParams& p = args.p;
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const std::int64_t i = m0 + row0 + 16 * mt + (lane >> 2) + 8 * r;
      if (i >= seq.q) continue;
      const std::int64_t row = ((split * p.batch + batch) * p.seqlen_q + i) * p.heads + head;
      if ((lane & 3) == 0) args.lse_partial[row] = lse[mt][r];
      float* out = args.out_partial + row * p.head_dim_v;
#pragma unroll
      for (int d = 0; d < Cfg::kHeadDim / 8; ++d) {
        const int col = d * 8 + 2 * (lane & 3);
        if (col < p.head_dim_v)
          *reinterpret_cast<float2*>(out + col) = make_float2(o[mt][d][2 * r], o[mt][d][2 * r + 1]);
      }
    }
  }
}

}  // namespace flashattn::detail::cuda_sm80
