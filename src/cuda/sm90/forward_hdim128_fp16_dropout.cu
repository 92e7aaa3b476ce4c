// Hopper forward kernel instantiation with dropout: head dim 128, fp16
// (forward_dropout.h; a unit of its own: the units compile in parallel).
#include "cuda/sm90/forward_dropout.h"

namespace flashattn::detail::cuda_sm90 {
template cudaError_t run_forward_dropout<128, 128, __half>(const AttentionParams&, void*, cudaStream_t);
}  // namespace flashattn::detail::cuda_sm90
