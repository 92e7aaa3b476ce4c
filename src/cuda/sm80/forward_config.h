// The forward kernel's configuration as data: one struct per (head-dim bucket,
// element type) from which every tile shape, thread count and shared-memory
// size is derived in one place.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace flashattn::detail::cuda_sm80 {

// kHeadDim is the bucket: q/k head dim d and v head dim dv may be anything up to
// it in multiples of 8; the columns beyond them are zero-filled on load and
// never stored.
template <int kHeadDim_, typename Element_>
struct ForwardConfig {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;
  static_assert(kHeadDim % 32 == 0 && kHeadDim <= 256, "buckets are multiples of 32 up to 256");

  // One warp owns 16 query rows (one m16 MMA tile) for the whole KV loop, so the
  // row statistics of the online softmax never leave a quad of lanes.
  // 64-row tiles with 4 warps let 2-3 CTAs share an SM: while one CTA waits at
  // a barrier for its K/V copy, the others issue MMAs (with one 8-warp CTA per
  // SM every barrier stalled the whole SM: 0.5x of FlashAttention 2).
  static constexpr int kBlockM = 64;
  static constexpr int kWarps = kBlockM / 16;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int kThreads = kWarps * 32;
  // Wider KV tiles amortise the per-tile barriers; at d <= 64 the S and O
  // accumulators are small enough (64 + 32 fp32 per thread) to afford 128.
  // Above d = 128 the tile narrows to 32 keys so two K/V stages of two CTAs
  // still fit in shared memory and S stays small beside the d/2 O registers.
  static constexpr int kBlockN = kHeadDim <= 64 ? 128 : (kHeadDim <= 128 ? 64 : 32);
  // K/V ring depth: tile n - 2 is copied while tiles n - 1 and n are in use, so
  // a copy has a whole iteration to land (one stage left each copy one GEMM,
  // too short to hide global-memory latency: measured 0.5x of FlashAttention 2).
  static constexpr int kStages = 2;
  // Q fragments stay in registers across the KV loop when they fit beside the
  // O accumulator (d/2 + d/2 registers); above 128 they are re-read from
  // shared memory each tile, as FlashAttention 2 does.
  static constexpr bool kQInRegisters = kHeadDim <= 128;

  static constexpr int kChunk = 8;  // elements per 16-byte cp.async / ldmatrix row
  static constexpr int kChunksPerRow = kHeadDim / kChunk;

  static constexpr int kSmemQ = kBlockM * kHeadDim;  // elements
  static constexpr int kSmemK = kBlockN * kHeadDim;
  static constexpr int kSmemV = kBlockN * kHeadDim;
  static constexpr int kSmemBytes = (kSmemQ + kStages * (kSmemK + kSmemV)) * static_cast<int>(sizeof(Element));
};

}  // namespace flashattn::detail::cuda_sm80
