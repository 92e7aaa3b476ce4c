// Host side of one backward configuration: pick the compile-time variant and
// launch the main kernel. Included by the generated translation units (one per
// head-dim bucket and dtype, plus one for the auxiliary kernels).
#pragma once

#include <cuda_runtime.h>

#include <climits>

#include "cuda/sm80/backward_config.h"
#include "cuda/sm80/backward_kernel.h"
#include "cuda/sm80/grid_launch.h"
#include "cuda/sm80/static_switch.h"

namespace flashattn::detail::cuda_sm80 {

// general: softcap, ALiBi or dropout (per-element work in the inner loop), with its own config
// (BackwardConfig's kGeneral_; the key tile is the same). The key tile is the config's, so the grid is
// sized here.
template <class Cfg>
cudaError_t launch_backward(const BackwardKernelArgs& args_in, bool general, cudaStream_t stream) {
  BackwardKernelArgs args = args_in;
  args.n_blocks = static_cast<int>((args.p.seqlen_k + Cfg::kBlockN - 1) / Cfg::kBlockN);
  args.total_tiles = static_cast<std::int64_t>(args.n_blocks) * args.p.batch * args.p.heads_kv;
  if (args.total_tiles == 0) return cudaSuccess;
  // Deterministic mode needs one CTA per tile (backward_kernel claims each CTA's tile in order). More
  // than 2^31 - 1 key tiles would need a K of terabytes: refused rather than looped.
  if (args.tile_counter != nullptr && args.total_tiles > INT_MAX) return cudaErrorInvalidConfiguration;
  return FLASHATTN_BOOL_SWITCH(general, kGeneral, [&] {
    using Launched = BackwardConfig<Cfg::kHeadDim, typename Cfg::Element, kGeneral>;
    static_assert(Launched::kBlockN == Cfg::kBlockN);
    // options.bias: the general kernel's bias instance (backward_kernel.h kBias), dQ staged or not as
    // decided.
    auto* base_kernel = &backward_kernel<Launched, kGeneral>;
    if constexpr (kGeneral) {
      if (args.p.bias != nullptr) base_kernel = &backward_kernel<Launched, true, false, false, true>;
    }
    if constexpr (Launched::kDqStageExtraBytes > 0) {
      if (args.dq_bulk) {  // DQ_BULK (decided by run()): the dQ staging tile on top
        constexpr int kBytes = Launched::kSmemBytes + Launched::kDqStageExtraBytes;
        auto* kernel = base_kernel;
        // STATIC_BULK_BUCKETS: dq_bulk implies no semaphores and head_dim == the bucket (decide_dq_bulk);
        // checked here again, as the instance relies on it.
        if constexpr (Launched::kStaticBulk) {
          const BackwardParams& p = args.p;
          if (args.dq_semaphore == nullptr && args.tile_counter == nullptr && p.head_dim == Cfg::kHeadDim &&
              p.bias == nullptr) {
            kernel = &backward_kernel<Launched, kGeneral, true>;
            // STATIC_NOMASK_BUCKETS: no window, every key and query tile full in every sequence, dV as wide
            // as dK.
            if constexpr (Launched::kStaticNoMask) {
              if (p.mask.window_left < 0 && p.mask.window_right < 0 && !p.is_kvcache &&
                  p.cu_seqlens_k == nullptr && p.seqused_k == nullptr && p.cu_seqlens_q == nullptr &&
                  p.seqused_q == nullptr && p.seqlen_k % Cfg::kBlockN == 0 &&
                  p.seqlen_q % Launched::kBlockM == 0 && p.head_dim_v == Cfg::kHeadDim) {
                kernel = &backward_kernel<Launched, kGeneral, true, true>;
              }
            }
          }
        }
        const cudaError_t error =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
        if (error != cudaSuccess) return error;
        const std::int64_t grid = args.total_tiles < INT_MAX ? args.total_tiles : INT_MAX;
        kernel<<<static_cast<unsigned>(grid), Launched::kThreads, kBytes, stream>>>(args);
        return cudaGetLastError();
      }
    }
    return launch_tiles<Launched>(base_kernel, args, args.total_tiles, stream);
  });
}

// The PTX virtual architecture (major * 10 + minor) of the main kernel this call would launch, as the
// driver loaded it: 90 for the sm_90a SASS, 80 where the device JIT-compiles the compute_80 PTX (any
// non-9.x device, or a 9.x device under CUDA_FORCE_PTX_JIT=1). The DQ_BULK path exists only in code
// compiled for __CUDA_ARCH__ >= 900, so this, not the device's compute capability, decides it.
template <class Cfg>
cudaError_t backward_kernel_ptx_version(bool general, int* version) {
  return FLASHATTN_BOOL_SWITCH(general, kGeneral, [&] {
    using Launched = BackwardConfig<Cfg::kHeadDim, typename Cfg::Element, kGeneral>;
    cudaFuncAttributes attributes{};
    const cudaError_t error = cudaFuncGetAttributes(&attributes, &backward_kernel<Launched, kGeneral>);
    *version = error == cudaSuccess ? attributes.ptxVersion : 0;
    return error;
  });
}

// which: 0 preprocess, 1 dsink, 2 postprocess (backward_aux_kernels.h).
template <typename Element>
cudaError_t launch_backward_aux(const BackwardKernelArgs& args, int which, cudaStream_t stream);

#define FLASHATTN_SM80_DECLARE_BACKWARD(head_dim, element)                                                  \
  extern template cudaError_t launch_backward<BackwardConfig<head_dim, element>>(const BackwardKernelArgs&, \
                                                                                 bool, cudaStream_t);       \
  extern template cudaError_t backward_kernel_ptx_version<BackwardConfig<head_dim, element>>(bool, int*);

}  // namespace flashattn::detail::cuda_sm80
