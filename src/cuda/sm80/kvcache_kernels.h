// Kernels that prepare a KV-cache forward: append k_new/v_new into the cache
// in place (rotating k_new), and write rotated queries to the workspace.
#pragma once

#include <cuda_runtime.h>

#include "common/params.h"

namespace flashattn::detail::cuda_sm80 {

cudaError_t launch_append_kv(const AttentionParams& p, cudaStream_t stream);
// Writes q rotated at its rotary positions into `q_rotated`, contiguous (b, sq, h, d).
cudaError_t launch_rotate_q(const AttentionParams& p, void* q_rotated, cudaStream_t stream);
cudaError_t launch_combine(const CombineParams& p, cudaStream_t stream);

}  // namespace flashattn::detail::cuda_sm80
