// Compile-time shape of one Hopper forward kernel instantiation: tile sizes,
// pipeline depth, warp roles, register split and the shared-memory layout, all
// derived here from (head dim, element type) so the kernel pieces only read them.
//
// Roles: warpgroup 0 is the producer (one thread issues every TMA load), warpgroups
// 1 and 2 are consumers, each owning 64 of the tile's kBlockM = 128 query rows
// (one wgmma M of 64). The two consumers take turns issuing their GEMMs
// ("ping-pong") so one's softmax runs while the other's GEMMs keep the tensor
// cores busy.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace flashattn::detail::cuda_sm90 {

// kHeadDim: of Q and K; kHeadDimV: of V and O (the (192, 128) pair differs).
template <int kHeadDim_, int kHeadDimV_, typename Element_>
struct ForwardConfig {
  using Element = Element_;
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>);
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kHeadDimV = kHeadDimV_;
  static_assert(kHeadDim % 64 == 0 && kHeadDim <= 256, "head dim must be 64, 128, 192 or 256");
  static_assert(kHeadDimV % 64 == 0 && kHeadDimV <= 256, "dv must be 64, 128, 192 or 256");
  // Large-V pairs (dv > d, FA3's "hdimv" cases): (64, 256); (64, 512) runs as two
  // launches of (64, 256) over the two column halves of V and O (forward_launch.h).
  static constexpr bool kLargeV = kHeadDimV > kHeadDim;

  static constexpr int kConsumerWarpgroups = 2;
  static constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
  static constexpr int kConsumerWarps = 4 * kConsumerWarpgroups;
  static constexpr int kBlockM = 64 * kConsumerWarpgroups;
  // Keys per pipeline stage: as many as keep S (kBlockN/2 fp32 per thread) and O
  // (kHeadDim/2 per thread) plus the bf16 P fragment within the consumer budget,
  // and the stages within shared memory.
  // (176 at d=128 was measured slower: O must then reuse Q's buffer, which
  // serialises the O store with the next tile's Q load; docs/kernel-notes-sm90.md.)
  // d=192: 96 (S 48 + P 24 + O 96 registers per thread; N = 96 is a generated wgmma shape).
  // (64, 256): O alone takes 128 registers per thread, so 64 keys (S 32 + P 16) and
  // three stages of K (8 KB) + V (32 KB) beside Q (16 KB) and O (64 KB).
  static constexpr int kBlockN = kLargeV ? 64 : (kHeadDim <= 128 ? 128 : (kHeadDim <= 192 ? 96 : 80));
  static constexpr int kStages = kLargeV ? 3 : (kHeadDim <= 64 ? 4 : 2);

  // setmaxnreg split: 128 * 24 + 256 * 240 = 64512 <= 65536 registers per SM.
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = 240;

  // Tiles are stored as kChunks column chunks of 64 elements (128 bytes, the
  // width of one 128B-swizzle row), each chunk a [rows][64] block: exactly what
  // a TMA box of {64, rows} with CU_TENSOR_MAP_SWIZZLE_128B writes.
  static constexpr int kChunkCols = 64;
  static constexpr int kChunks = kHeadDim / kChunkCols;    // of Q and K
  static constexpr int kChunksV = kHeadDimV / kChunkCols;  // of V and O
  static constexpr int kRowBytes = kChunkCols * 2;
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kKVBytes = kBlockN * kHeadDim * 2;  // one K stage
  static constexpr int kVBytes = kBlockN * kHeadDimV * 2;  // one V stage
  static constexpr int kOBytes = kBlockM * kHeadDimV * 2;
  static constexpr int kQChunkBytes = kBlockM * kRowBytes;
  static constexpr int kKVChunkBytes = kBlockN * kRowBytes;  // K and V chunks alike
  static_assert(kKVChunkBytes % 1024 == 0, "swizzle atoms must stay 1024-byte aligned");

  // Shared memory: [Q][K stages][V stages][O][barriers]. O gets its own buffer
  // when it fits (its TMA store then overlaps the next tile's Q load); at d=256 it
  // reuses Q's rows (each consumer stores over the 64 Q rows only it read).
  static constexpr int kSmemLimit = 227 * 1024;
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kQOffset + kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKVBytes;
  static constexpr int kOEnd = kVOffset + kStages * kVBytes;
  static constexpr int kBarrierBytes = 8 * (2 + 4 * kStages) + 8;  // + the tile-index slot
  static constexpr bool kSeparateO = kOEnd + kOBytes + kBarrierBytes + 1024 <= kSmemLimit;
  static constexpr int kOOffset = kSeparateO ? kOEnd : kQOffset;
  static constexpr int kBarrierOffset = kSeparateO ? kOEnd + kOBytes : kOEnd;
  // +1024: the dynamic buffer is aligned up to a swizzle atom at run time.
  static constexpr int kSmemBytes = kBarrierOffset + kBarrierBytes + 1024;
  static_assert(kSmemBytes <= kSmemLimit, "shared-memory layout exceeds the sm_90 limit");
  static_assert(kSeparateO || kOBytes <= kQBytes, "O reuses Q's buffer only when it fits there");
  // O layout per consumer warpgroup: separate buffer [warpgroup][chunk][64 rows];
  // reusing Q: Q's [chunk][kBlockM rows] with the warpgroup's 64 rows inside.
  static constexpr int kOWarpgroupStride = kSeparateO ? kChunksV * 64 * kRowBytes : 64 * kRowBytes;
  static constexpr int kOChunkStride = kSeparateO ? 64 * kRowBytes : kQChunkBytes;
};

}  // namespace flashattn::detail::cuda_sm90
