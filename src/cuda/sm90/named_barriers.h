// Named hardware barriers (bar.sync / bar.arrive ids) of the Hopper forward
// kernel. Id 0 is __syncthreads. Each id has exactly one purpose.
#pragma once

namespace flashattn::detail::cuda_sm90 {

// Most consumer warpgroups any configuration uses (forward_config.h); each gets
// its own issue-turn and epilogue barrier.
inline constexpr int kMaxConsumerWarpgroups = 4;

enum NamedBarrier : int {
  // Ping-pong: consumer warpgroup w waits on kIssueTurn + w before issuing a
  // batch of GEMMs and, once issued, arrives on the next warpgroup's id
  // ((w + 1) mod the number of consumers), so the warpgroups' GEMM batches take
  // turns on the tensor cores while the others run their softmax. 256 threads:
  // the 128 waiting plus the 128 arriving.
  kIssueTurn = 1,  // 1 .. kMaxConsumerWarpgroups
  // Epilogue of consumer warpgroup w (128 threads): orders its writes of O into
  // shared memory against the TMA store that reads them, and the previous
  // store's reads against the next tile's writes.
  kEpilogue = kIssueTurn + kMaxConsumerWarpgroups,  // .. + kMaxConsumerWarpgroups - 1
  // The narrow decode tile's consumer warpgroup (128 threads; decode_consumer.h): its warps' row maxima of a
  // key block meet in shared memory, and the P^T each wrote before is complete for the GEMM that reads it.
  kNarrowExchange = kEpilogue + kMaxConsumerWarpgroups,
  kNamedBarrierEnd,
};
static_assert(kNamedBarrierEnd <= 16, "16 hardware barriers per CTA");

}  // namespace flashattn::detail::cuda_sm90
