// Launch of the sm80 family's tile kernels: a 1-D grid over tiles, which every
// kernel walks grid-stride, so no grid dimension can overflow however many
// (batch, head, tile) triples a problem has.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

namespace flashattn::detail::cuda_sm80 {

// Launches kernel(args) with Cfg's block size and dynamic shared memory over total_tiles tiles.
// resident_only: no more CTAs than fit on the device at once (a persistent grid), for kernels whose
// CTAs wait on each other: every CTA is then running, and each walks its tiles in increasing order,
// so waits that point at smaller tile indices cannot deadlock whatever the dispatch order.
template <class Cfg, class Args>
cudaError_t launch_tiles(void (*kernel)(Args), const Args& args, std::int64_t total_tiles,
                         cudaStream_t stream, bool resident_only = false) {
  // Above 48 KB of dynamic shared memory a kernel must opt in; this is an
  // attribute write, not a synchronisation.
  const cudaError_t error =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (error != cudaSuccess) return error;
  // Capping the grid drops no work: the kernels loop until every tile is done.
  std::int64_t grid = total_tiles < INT_MAX ? total_tiles : INT_MAX;
  if (resident_only) {
    // Host-side queries of the current device (no synchronisation).
    int device = 0, sms = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess) {
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Cfg::kThreads, Cfg::kSmemBytes);
    }
    if (e != cudaSuccess) return e;
    if (per_sm < 1) return cudaErrorInvalidConfiguration;  // the kernel cannot run on this device at all
    const std::int64_t resident = static_cast<std::int64_t>(sms) * per_sm;
    if (resident < grid) grid = resident;
  }
  kernel<<<static_cast<unsigned>(grid), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace flashattn::detail::cuda_sm80
