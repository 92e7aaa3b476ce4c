// What one Hopper forward launch receives: the four TMA tensor maps and the
// scalars the device pieces (scheduler, masking, softmax, epilogue) read.
// Passed by value as a __grid_constant__ kernel parameter, so the tensor maps
// live in parameter space where the copy engine reads them.
#pragma once

#include <cuda.h>  // CUtensorMap (a plain 128-byte struct; no libcuda link needed)

#include <cstdint>

namespace flashattn::detail::cuda_sm90 {

struct ForwardKernelParams {
  // (d, seqlen, heads, batch) views, innermost first, 128B-swizzled boxes of 64 columns:
  CUtensorMap tma_q;  // box {64, kBlockM}
  CUtensorMap tma_k;  // box {64, kBlockN}
  CUtensorMap tma_v;  // box {64, kBlockN}
  CUtensorMap tma_o;  // box {64, 64}: one consumer warpgroup's rows

  float* lse = nullptr;  // optional, fp32
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 0;

  int batch = 0, heads = 0, heads_per_kv = 1;
  int seqlen_q = 0, seqlen_k = 0;
  int m_blocks = 0, num_tiles = 0;
  int sec_heads = 1;            // query heads per L2 section (tile_scheduler.h)
  int* tile_counter = nullptr;  // workspace int, zero at launch: tiles claimed beyond the first wave
  int window_left = -1, window_right = -1;  // mask.h semantics, bottom-right aligned

  // Softmax in base 2: p = 2^(s * score_log2 - rowmax * score_log2). Without
  // softcap s is q.k and score_log2 = scale * log2(e); with softcap s is
  // tanh(q.k * softcap_in) and score_log2 = softcap * log2(e).
  float score_log2 = 0.f;
  float softcap_in = 0.f;       // scale / softcap; 0: no softcap
  const float* sink = nullptr;  // optional per-head logit (natural-log units)
};

}  // namespace flashattn::detail::cuda_sm90
