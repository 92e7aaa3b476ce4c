// The forward entry points the per-(head dims, dtype) translation units define
// (forward_hdim*_*.cu) and the backend dispatches to, and the layout of the
// caller's workspace they use.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/params.h"
#include "cuda/sm90/kernel_params.h"

namespace flashattn::detail::cuda_sm90 {

// Workspace (256-byte aligned by the API):
//   [0, 256)            the tile scheduler's counter (one int, zeroed by the launch)
//   [256, +info)        SequenceInfo per sequence        } variable length / seqused / KV cache
//   [.., +maps)         SequenceMaps per sequence (128-byte aligned)
//   [.., +q_rotated)    KV cache with rotary: q rotated at its positions, contiguous (b, sq, h, d)
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
inline std::size_t forward_workspace_bytes(const AttentionParams& p) {
  std::size_t bytes = q_rotated_offset(p);
  if (rotates_q(p)) bytes += static_cast<std::size_t>(p.batch * p.seqlen_q * p.heads * p.head_dim) * 2;
  return bytes;
}

template <int kHeadDim, int kHeadDimV, typename Element>
cudaError_t run_forward(const AttentionParams& params, void* workspace, cudaStream_t stream);

}  // namespace flashattn::detail::cuda_sm90
