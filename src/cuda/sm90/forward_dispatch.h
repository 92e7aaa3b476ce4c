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
//   [256, +info)        SequenceInfo per sequence        } variable length / seqused only
//   [.., +maps)         SequenceMaps per sequence (128-byte aligned)
inline bool uses_sequence_maps(const AttentionParams& p) {
  return p.cu_seqlens_q != nullptr || p.cu_seqlens_k != nullptr || p.seqused_q != nullptr ||
         p.seqused_k != nullptr;
}
constexpr std::size_t kCounterBytes = 256;
inline std::size_t sequence_info_bytes(const AttentionParams& p) {
  return (static_cast<std::size_t>(p.batch) * sizeof(SequenceInfo) + 127) / 128 * 128;
}
inline std::size_t forward_workspace_bytes(const AttentionParams& p) {
  if (!uses_sequence_maps(p)) return kCounterBytes;
  return kCounterBytes + sequence_info_bytes(p) + static_cast<std::size_t>(p.batch) * sizeof(SequenceMaps);
}

template <int kHeadDim, int kHeadDimV, typename Element>
cudaError_t run_forward(const AttentionParams& params, void* workspace, cudaStream_t stream);

}  // namespace flashattn::detail::cuda_sm90
