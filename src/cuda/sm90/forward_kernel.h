// The Hopper forward kernel: warp-specialised, persistent, TMA + wgmma.
//   warpgroup 0  producer: gives most of its registers away, one thread issues
//                every TMA load (producer.h);
//   warpgroups 1, 2  consumers: take the registers, run the GEMMs, the online
//                softmax and the epilogue of 64 query rows each (consumer.h).
#pragma once

#include <cstdint>

#include "cuda/ptx/ptx.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/sm90/consumer.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/pipeline.h"
#include "cuda/sm90/producer.h"

namespace flashattn::detail::cuda_sm90 {

template <class Config>
__global__ void __launch_bounds__(Config::kThreads, 1)
    forward_kernel(const __grid_constant__ ForwardKernelParams p) {
  extern __shared__ unsigned char shared_buffer[];
  // 128B-swizzle atoms (TMA boxes, wgmma descriptors) need 1024-byte alignment.
  const std::uint32_t raw = ptx::cvta_to_shared(shared_buffer);
  const SharedPipeline<Config> pipe{(raw + 1023u) & ~1023u};

  if (threadIdx.x == 0) pipe.init_barriers();
  // Every thread must see initialised barriers before its first wait or arrive.
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<Config::kProducerRegisters>();
    if (p.paged.block_table != nullptr) {
      if (threadIdx.x < 32) producer_loop_paged<Config>(p, pipe);  // paged K/V: a gathering warp
    } else if (threadIdx.x == 0) {
      producer_loop<Config>(p, pipe);
    }
  } else {
    ptx::setmaxnreg_inc<Config::kConsumerRegisters>();
    consumer_loop<Config>(p, pipe, warpgroup - 1);
  }
}

}  // namespace flashattn::detail::cuda_sm90
