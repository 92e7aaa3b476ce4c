// Launch of the sm80 family's tile kernels: a 1-D grid over tiles, which every
// kernel walks grid-stride, so no grid dimension can overflow however many
// (batch, head, tile) triples a problem has.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

namespace flashattn::detail::cuda_sm80 {

// Launches kernel(args) with Cfg's block size and dynamic shared memory over total_tiles tiles.
template <class Cfg, class Args>
cudaError_t launch_tiles(void (*kernel)(Args), const Args& args, std::int64_t total_tiles,
                         cudaStream_t stream) {
  // Above 48 KB of dynamic shared memory a kernel must opt in; this is an
  // attribute write, not a synchronisation.
  const cudaError_t error =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (error != cudaSuccess) return error;
  // Capping the grid drops no work: the kernels loop until every tile is done.
  const std::int64_t grid = total_tiles < INT_MAX ? total_tiles : INT_MAX;
  kernel<<<static_cast<unsigned>(grid), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace flashattn::detail::cuda_sm80
