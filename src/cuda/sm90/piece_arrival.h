// The last-arriver handshake of split pieces, shared by the split tail (split_tail.h) and split-KV
// (split_kv.h): each piece's consumer warpgroup stores its record, counts itself on its unit's counter, and
// the warpgroup whose arrival completes the unit combines every record. Nobody waits for anybody.
#pragma once

#include "cuda/ptx/ptx.h"
#include "cuda/ptx/warpgroup.h"

namespace flashattn::detail::cuda_sm90 {

// Called by all 128 threads of a consumer warpgroup (named barrier `barrier`) once each has stored its share
// of the piece's record: counts the piece on the counter counter() points to; true in every thread of the
// warpgroup whose arrival is the `pieces`-th. Every thread's record stores come before the arrival (the
// barrier), whose release covers them; the last arrival's acquire covers every other piece's, and the barrier
// hands that to every thread. (counter is evaluated by the arriving thread alone: an address computed by
// every thread moved the split-tail kernel's instruction schedule.)
template <class Counter>
__device__ __forceinline__ bool completes_pieces(Counter counter, int pieces, int barrier) {
  ptx::bar_sync(barrier, 128);
  const bool leader = threadIdx.x % 128 == 0;
  int arrived = 0;
  if (leader) arrived = ptx::atom_add_acq_rel_gpu(counter(), 1);
  return ptx::bar_red_or(barrier, 128, leader && arrived == pieces - 1);
}

}  // namespace flashattn::detail::cuda_sm90
