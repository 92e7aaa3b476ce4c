// The Hopper forward with dropout: the dropout instances of forward_config.h (DropoutConfig), for the
// problems run_forward hands over. Included by the units forward_hdim*_*_dropout.cu only, so that each (head
// dims, dtype) compiles its dropout kernel in a unit of its own, beside the others.
#pragma once

#include "cuda/sm90/forward_launch.h"

namespace flashattn::detail::cuda_sm90 {

template <int kHeadDim, int kHeadDimV, typename Element>
cudaError_t run_forward_dropout(const AttentionParams& a, void* workspace, cudaStream_t stream) {
  if constexpr (kHeadDimV == 512) {
    return launch_value_halves<DropoutConfig<64, 256, Element>>(a, workspace, stream);
  } else {
    return launch_forward<DropoutConfig<kHeadDim, kHeadDimV, Element>>(a, workspace, stream);
  }
}

}  // namespace flashattn::detail::cuda_sm90
