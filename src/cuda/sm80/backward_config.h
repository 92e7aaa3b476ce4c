// The backward kernels' configuration as data, one struct per (head-dim
// bucket, element type), plus what a backward launch hands its kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/params.h"

namespace flashattn::detail::cuda_sm80 {

// Rows of the fp32 scratch arrays (LSE in base 2, D = rowsum(dO * O), dQ
// accumulator) are padded per (sequence, head) to a multiple of this, which is
// >= every config's kBlockM, so a query tile never needs a bounds check there.
constexpr int kBackwardRowPad = 64;

template <int kHeadDim_, typename Element_>
struct BackwardConfig {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;
  static_assert(kHeadDim % 32 == 0 && kHeadDim <= 256, "buckets are multiples of 32 up to 256");

  // A CTA owns one key tile; warp w owns keys [16w, 16w + 16) of it and keeps
  // their dK and dV rows in registers for the whole loop over query tiles. The
  // scores are computed transposed (S^T = K Q^T, keys x queries), so P^T and
  // dS^T are already the A operands of dV += P^T dO and dK += dS^T Q: only dS
  // goes through shared memory (for dQ = dS K).
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockN = kWarps * 16;
  // Query tile: S^T and dP^T cost kBlockM / 2 fp32 registers each beside the
  // (d + dv) / 2 of dK and dV.
  static constexpr int kBlockM = kHeadDim <= 64 ? 64 : 32;
  // Above d = 128, dK and dV together (d fp32 registers) do not fit: the query
  // loop runs twice, first for dV, then for dK and dQ (S recomputed).
  static constexpr bool kTwoPass = kHeadDim > 128;
  static constexpr int kStages = 2;  // Q / dO / LSE / D ring over query tiles

  static constexpr int kChunk = 8;  // elements per 16-byte cp.async / ldmatrix row
  static constexpr int kChunksPerRow = kHeadDim / kChunk;
  static constexpr int kDqCols = kHeadDim % 64 == 0 ? 64 : 32;  // dQ columns per warp task

  static constexpr int kSmemQ = kBlockM * kHeadDim;  // elements, one stage (dO alike)
  static constexpr int kSmemK = kBlockN * kHeadDim;  // K alike, V alike
  static constexpr int kSmemDs = kBlockN * kBlockM;
  static constexpr int kSmemBytes =
      (2 * kSmemK + kStages * 2 * kSmemQ + kSmemDs) * static_cast<int>(sizeof(Element)) +
      kStages * 2 * kBlockM * static_cast<int>(sizeof(float));
  static constexpr int kMinBlocksPerSm = kSmemBytes <= 110 * 1024 ? 2 : 1;
  static_assert(kBlockM <= kBackwardRowPad && kBackwardRowPad % kBlockM == 0);
};

struct BackwardKernelArgs {
  BackwardParams p;
  std::int64_t rows_padded =
      0;                      // per (sequence, head) rows of the scratch arrays (multiple of kBackwardRowPad)
  float* lse_log2 = nullptr;  // (batch, heads, rows_padded): LSE * log2(e); +inf where P must be 0
  float* delta = nullptr;     // (batch, heads, rows_padded): D = rowsum(dO * O)
  float* dq_accum = nullptr;  // (batch, heads, rows_padded, head_dim) fp32
  int* dq_semaphore = nullptr;   // deterministic: (batch, heads, m_blocks) counters
  int m_blocks = 0;              // rows_padded / kBlockM
  int n_blocks = 0;              // key tiles per sequence (seqlen_k bound)
  std::int64_t total_tiles = 0;  // n_blocks * batch * heads_kv
  float scale_log2 = 0.f;
  std::uint32_t dropout_threshold = 0;
  float dropout_rescale = 1.f;
};

}  // namespace flashattn::detail::cuda_sm80
