// The forward entry points the per-(head dims, dtype) translation units define
// (forward_hdim*_*.cu) and the backend dispatches to, and the layout of the
// caller's workspace they use.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/params.h"
#include "cuda/sm90/forward_config.h"
#include "cuda/sm90/kernel_params.h"

namespace flashattn::detail::cuda_sm90 {

// Workspace (256-byte aligned by the API):
//   [0, 256)            the tile scheduler's counter (one int, zeroed by the launch)
//   [256, +info)        SequenceInfo per sequence        } variable length / seqused / KV cache
//   [.., +maps)         SequenceMaps per sequence (128-byte aligned)
//   [.., +q_rotated)    KV cache with rotary: q rotated at its positions, contiguous (b, sq, h, d)
//   [.., +split)        the split tail's arrival counts and parts (split_tail_region, 256-byte aligned)
// The KV cache runs through the per-sequence maps: common/params.h resolves its
// cache_seqlens, cache_batch_idx and leftpad into each sequence's first key row and
// key count, exactly like seqused_k.
inline bool uses_sequence_maps(const AttentionParams& p) {
  return p.cu_seqlens_q != nullptr || p.cu_seqlens_k != nullptr || p.seqused_q != nullptr ||
         p.seqused_k != nullptr || p.is_kvcache;
}
inline bool rotates_q(const AttentionParams& p) { return p.is_kvcache && p.rotary_dim > 0; }
constexpr std::size_t kCounterBytes = 256;
inline std::size_t sequence_info_bytes(const AttentionParams& p) {
  return (static_cast<std::size_t>(p.batch) * sizeof(SequenceInfo) + 127) / 128 * 128;
}
inline std::size_t sequence_bytes(const AttentionParams& p) {
  if (!uses_sequence_maps(p)) return 0;
  const std::size_t bytes = sequence_info_bytes(p) + static_cast<std::size_t>(p.batch) * sizeof(SequenceMaps);
  return (bytes + 255) / 256 * 256;
}
inline std::size_t q_rotated_offset(const AttentionParams& p) { return kCounterBytes + sequence_bytes(p); }

// The split tail of a static schedule (kernel_params.h SplitTail), for problems that may take it: one length,
// dense K/V, no mask, no sink (forward_launch.h plan_split_tail adds what depends on the kernel). Its region
// of the workspace, after everything above, is sized for the device's SM count (two part slots per CTA):
//   arrivals   one int per (split unit, CTA rank, consumer warp): fewer than 2 SMs x 16 warps
//   part LSE   per slot and tile row, 2 x 4 bytes per lane of 16 rows = 16 bytes a row
//   part O     per slot, tile rows x dv floats
inline bool may_split_tail(const AttentionParams& p) {
  return FLASHATTN_SM90_SPLIT_TAIL != 0 && !uses_sequence_maps(p) && p.block_table == nullptr &&
         p.sink == nullptr && p.mask.window_left < 0 && p.mask.window_right < 0 && p.seqlen_k >= 1024;
}
struct SplitTailRegion {
  std::size_t offset = 0, lse_offset = 0, o_offset = 0, bytes = 0;
  int slots = 0;
};
inline SplitTailRegion split_tail_region(const AttentionParams& p, std::size_t offset, int sms) {
  SplitTailRegion r;
  if (!may_split_tail(p) || sms <= 0) return r;
  const std::size_t tile_rows = p.head_dim == 64 && p.head_dim_v == 64 ? 256 : 128;  // the largest kBlockM
  r.slots = 2 * sms;
  r.offset = offset;
  r.lse_offset = offset + (static_cast<std::size_t>(2 * sms) * 16 * sizeof(int) + 255) / 256 * 256;
  r.o_offset = r.lse_offset + static_cast<std::size_t>(r.slots) * tile_rows * 16;
  const std::size_t kernel_dv = p.head_dim_v == 96 ? 128 : p.head_dim_v;  // d = 96 runs the d = 128 kernel
  r.bytes = r.o_offset - offset + static_cast<std::size_t>(r.slots) * tile_rows * kernel_dv * sizeof(float);
  return r;
}
inline int device_sms() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
  return sms;
}
inline std::size_t split_tail_offset(const AttentionParams& p) {
  std::size_t bytes = q_rotated_offset(p);
  if (rotates_q(p)) bytes += static_cast<std::size_t>(p.batch * p.seqlen_q * p.heads * p.head_dim) * 2;
  return (bytes + 255) / 256 * 256;
}
inline std::size_t forward_workspace_bytes(const AttentionParams& p) {
  const std::size_t offset = split_tail_offset(p);
  return offset + split_tail_region(p, offset, device_sms()).bytes;
}

template <int kHeadDim, int kHeadDimV, typename Element>
cudaError_t run_forward(const AttentionParams& params, void* workspace, cudaStream_t stream);

}  // namespace flashattn::detail::cuda_sm90
