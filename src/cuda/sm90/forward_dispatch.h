// The forward entry points the per-(head dim, dtype) translation units define
// (forward_hdim*_*.cu) and the backend dispatches to.
#pragma once

#include <cuda_runtime.h>

#include "common/params.h"

namespace flashattn::detail::cuda_sm90 {

// tile_counter: one int of the caller's workspace; the launch zeroes it (stream-ordered).
template <int kHeadDim, typename Element>
cudaError_t run_forward(const AttentionParams& params, int* tile_counter, cudaStream_t stream);

}  // namespace flashattn::detail::cuda_sm90
