// Host side of one forward configuration: pick the compile-time variant and
// launch it. Included by the generated translation units (one per head-dim
// bucket and dtype), which instantiate launch_forward for their config.
#pragma once

#include <cuda_runtime.h>

#include "cuda/sm80/forward_config.h"
#include "cuda/sm80/forward_kernel.h"
#include "cuda/sm80/grid_launch.h"
#include "cuda/sm80/kernel_args.h"
#include "cuda/sm80/static_switch.h"

namespace flashattn::detail::cuda_sm80 {

// general: the problem needs per-element score modifiers or dropout (see forward_kernel.h).
template <class Cfg>
cudaError_t launch_forward(const ForwardKernelArgs& args, bool general, cudaStream_t stream) {
  return FLASHATTN_BOOL_SWITCH(general, kGeneral, [&] {
    return launch_tiles<Cfg>(&forward_kernel<Cfg, kGeneral>, args, args.total_tiles, stream);
  });
}

// The explicit instantiations live in the generated translation units; the
// arguments are one row of FLASHATTN_SM80_FOR_EACH_KERNEL (generate_kernels.py).
#define FLASHATTN_SM80_DECLARE_FORWARD(head_dim, element, role, ...)                                    \
  extern template cudaError_t launch_forward<ForwardConfig<head_dim, element, TileShape{__VA_ARGS__}>>( \
      const ForwardKernelArgs&, bool, cudaStream_t);

}  // namespace flashattn::detail::cuda_sm80
