// Named hardware barriers (bar.sync / bar.arrive ids) of the Hopper forward
// kernel. Id 0 is __syncthreads. Each id has exactly one purpose.
#pragma once

namespace flashattn::detail::cuda_sm90 {

enum NamedBarrier : int {
  // Ping-pong: consumer warpgroup w waits on kIssueTurn + w before issuing a
  // batch of GEMMs and, once issued, arrives on the other warpgroup's id, so the
  // two warpgroups' GEMM batches alternate on the tensor cores while the other
  // one runs its softmax. 256 threads: the 128 waiting plus the 128 arriving.
  kIssueTurn = 1,  // and 2
  // Epilogue of consumer warpgroup w (128 threads): orders its writes of O into
  // shared memory against the TMA store that reads them, and the previous
  // store's reads against the next tile's writes.
  kEpilogue = 3,  // and 4
};

}  // namespace flashattn::detail::cuda_sm90
