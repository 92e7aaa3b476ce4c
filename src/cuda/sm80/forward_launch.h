// Host side of one forward configuration: pick the compile-time variant and
// launch it. Included by the generated translation units (one per head-dim
// bucket and dtype), which instantiate launch_forward for their config.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/sm80/forward_config.h"
#include "cuda/sm80/forward_kernel.h"
#include "cuda/sm80/grid_launch.h"
#include "cuda/sm80/kernel_args.h"
#include "cuda/sm80/static_switch.h"

namespace flashattn::detail::cuda_sm80 {

// prefetch_next (forward_config.h): a persistent grid, one CTA per slot the SMs can hold at once
// (the occupancy query is a host-side computation, no synchronisation), never more than the tiles.
template <class Cfg, bool kGeneral, bool kPagedLoads, bool kBias>
cudaError_t launch_persistent(const ForwardKernelArgs& args, cudaStream_t stream) {
  auto* kernel = &forward_kernel<Cfg, kGeneral, kPagedLoads, kBias>;
  cudaError_t error =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (error != cudaSuccess) return error;
  int device = 0, sms = 0, per_sm = 0;
  if ((error = cudaGetDevice(&device)) != cudaSuccess) return error;
  if ((error = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess)
    return error;
  error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads, Cfg::kSmemBytes);
  if (error != cudaSuccess) return error;
#ifdef FLASHATTN_SM80_PERSISTENT_CTAS
  // Test builds only: a grid this small makes the suites' small problems run many tiles per CTA,
  // i.e. through the prefetch path, which full-size grids reach only on large problems.
  (void)sms;
  const std::int64_t slots = FLASHATTN_SM80_PERSISTENT_CTAS;
#else
  const std::int64_t slots = static_cast<std::int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
#endif
  const std::int64_t grid = args.total_tiles < slots ? args.total_tiles : slots;
  kernel<<<static_cast<unsigned>(grid), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
  return cudaGetLastError();
}

template <class Cfg, bool kGeneral, bool kPagedLoads, bool kBias = false>
cudaError_t launch_kernel(const ForwardKernelArgs& args, cudaStream_t stream) {
  if constexpr (Cfg::kPrefetchNext) {
    return launch_persistent<Cfg, kGeneral, kPagedLoads, kBias>(args, stream);
  } else {
    return launch_tiles<Cfg>(&forward_kernel<Cfg, kGeneral, kPagedLoads, kBias>, args, args.total_tiles,
                             stream);
  }
}

// general: the problem needs per-element score modifiers or dropout (see forward_kernel.h). Paged
// K/V runs the kernel with the paged loaders (kPagedLoads), with or without them: four kernels per
// shape, and a fifth for a bias (options.bias: batched calls, dense K/V).
template <class Cfg>
cudaError_t launch_forward(const ForwardKernelArgs& args, bool general, cudaStream_t stream) {
  if (args.p.bias != nullptr) return launch_kernel<Cfg, true, false, true>(args, stream);
  return FLASHATTN_BOOL_SWITCH(general, kGeneral, [&] {
    if (args.p.block_table != nullptr) return launch_kernel<Cfg, kGeneral, true>(args, stream);
    return launch_kernel<Cfg, kGeneral, false>(args, stream);
  });
}

// The explicit instantiations live in the generated translation units; the
// arguments are one row of FLASHATTN_SM80_FOR_EACH_KERNEL (generate_kernels.py).
#define FLASHATTN_SM80_DECLARE_FORWARD(head_dim, element, role, ...)                                    \
  extern template cudaError_t launch_forward<ForwardConfig<head_dim, element, TileShape{__VA_ARGS__}>>( \
      const ForwardKernelArgs&, bool, cudaStream_t);

}  // namespace flashattn::detail::cuda_sm80
