// flashattn::detail::cuda_sm80, backward half of the backend interface (src/backend.h):
// capability checks, the workspace layout and the launch sequence
//   preprocess (D, LSE in base 2, zero dQ accumulator) -> [dsink] -> main kernel -> postprocess (dQ).
// Everything is enqueued on ctx.stream; nothing allocates or synchronises.
// With FLASHATTN_BACKWARD=OFF the kernel list is empty and every problem is unsupported.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "backend.h"
#include "cuda/sm80/backward_config.h"  // kBackwardRowPad: workspace layout exists with backward off too
#include "cuda/sm80/sm80_backward_kernel_list.h"  // generated: FLASHATTN_SM80_FOR_EACH_BACKWARD_KERNEL
#if FLASHATTN_SM80_BACKWARD
#include "cuda/sm80/backward_launch.h"
#endif

namespace flashattn::detail::cuda_sm80 {

#if FLASHATTN_SM80_BACKWARD
FLASHATTN_SM80_FOR_EACH_BACKWARD_KERNEL(FLASHATTN_SM80_DECLARE_BACKWARD)
extern template cudaError_t launch_backward_aux<__half>(const BackwardKernelArgs&, int, cudaStream_t);
extern template cudaError_t launch_backward_aux<__nv_bfloat16>(const BackwardKernelArgs&, int, cudaStream_t);
#endif

namespace {

int backward_bucket(const BackwardParams& p) {
  const std::int64_t d = std::max(p.head_dim, p.head_dim_v);
  const int bucket = static_cast<int>((d + 31) / 32 * 32);
  return bucket < 32 ? 32 : bucket;
}

bool backward_compiled(int bucket, DType dtype) {
  (void)bucket, (void)dtype;
#define FLASHATTN_SM80_MATCH(head_dim, element)                                                            \
  if (bucket == head_dim && dtype == (std::is_same_v<element, __half> ? DType::float16 : DType::bfloat16)) \
    return true;
  FLASHATTN_SM80_FOR_EACH_BACKWARD_KERNEL(FLASHATTN_SM80_MATCH)
#undef FLASHATTN_SM80_MATCH
  return false;
}

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }
bool rows_aligned(const Operand& op) {
  return aligned16(op.data) && op.batch_stride % 8 == 0 && op.row_stride % 8 == 0 && op.head_stride % 8 == 0;
}

#if FLASHATTN_SM80_BACKWARD
Status cuda_status(cudaError_t error, const char* what) {
  return Status::error(ErrorCode::cuda_error, "cuda_sm80: backward %s failed: %s", what,
                       cudaGetErrorString(error));
}

cudaError_t dispatch_backward(const BackwardKernelArgs& args, bool general, cudaStream_t stream) {
  const int bucket = backward_bucket(args.p);
#define FLASHATTN_SM80_LAUNCH(head_dim, element)                                            \
  if (bucket == head_dim &&                                                                 \
      args.p.dtype == (std::is_same_v<element, __half> ? DType::float16 : DType::bfloat16)) \
    return launch_backward<BackwardConfig<head_dim, element>>(args, general, stream);
  FLASHATTN_SM80_FOR_EACH_BACKWARD_KERNEL(FLASHATTN_SM80_LAUNCH)
#undef FLASHATTN_SM80_LAUNCH
  return cudaErrorInvalidDeviceFunction;
}

// DQ_BULK (backward_config.h): whether this call stages dQ and reduces it in bulk. Decided here, once,
// because the postprocess must read the dQ accumulator in the layout the main kernel wrote. The bulk path
// is compiled only under __CUDA_ARCH__ >= 900, so the question is which code the driver runs for the main
// kernel (backward_kernel_ptx_version), not what the device is: a 9.x device JIT-compiles the compute_80
// PTX instead of running the sm_90 SASS when the build has none, or under CUDA_FORCE_PTX_JIT=1.
cudaError_t decide_dq_bulk(const BackwardParams& p, bool general, bool* bulk) {
  *bulk = false;
  const int bucket = backward_bucket(p);
  if (p.deterministic || p.head_dim != bucket) return cudaSuccess;
  bool config = false;
  int ptx_version = 0;
  cudaError_t error = cudaSuccess;
#define FLASHATTN_SM80_BULK(head_dim, element)                                                       \
  if (bucket == head_dim &&                                                                          \
      p.dtype == (std::is_same_v<element, __half> ? DType::float16 : DType::bfloat16)) {             \
    config = general ? BackwardConfig<head_dim, element, true>::kDqBulk                              \
                     : BackwardConfig<head_dim, element, false>::kDqBulk;                            \
    if (config)                                                                                      \
      error = backward_kernel_ptx_version<BackwardConfig<head_dim, element>>(general, &ptx_version); \
  }
  FLASHATTN_SM80_FOR_EACH_BACKWARD_KERNEL(FLASHATTN_SM80_BULK)
#undef FLASHATTN_SM80_BULK
  *bulk = config && ptx_version >= 90;
  return error;
}

cudaError_t dispatch_aux(const BackwardKernelArgs& args, int which, cudaStream_t stream) {
  return args.p.dtype == DType::float16 ? launch_backward_aux<__half>(args, which, stream)
                                        : launch_backward_aux<__nv_bfloat16>(args, which, stream);
}
#endif

}  // namespace

const char* unsupported_reason(const BackwardParams& p) noexcept {
  if (!FLASHATTN_SM80_BACKWARD) {
    return "cuda_sm80: backward kernels were not compiled (built with FLASHATTN_BACKWARD=OFF)";
  }
  if (p.is_kvcache || p.block_table != nullptr)
    return "cuda_sm80: backward over a KV cache or paged K/V is not defined";
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16)
    return "cuda_sm80 runs fp16 and bf16 inputs only";
  if (p.head_dim > 256 || p.head_dim_v > 256) return "cuda_sm80 supports head dims up to 256";
  if (p.head_dim % 8 != 0 || p.head_dim_v % 8 != 0)
    return "cuda_sm80 needs head dims that are multiples of 8";
  if (p.heads_kv <= 0 || p.heads % p.heads_kv != 0) return "cuda_sm80: heads must be a multiple of heads_kv";
  if (!backward_compiled(backward_bucket(p), p.dtype)) {
    return "cuda_sm80: the backward head-dim bucket for this problem was not compiled (see "
           "FLASHATTN_HEAD_DIMS and "
           "FLASHATTN_DTYPES)";
  }
  if (!rows_aligned(p.q) || !rows_aligned(p.k) || !rows_aligned(p.v) || !rows_aligned(p.out) ||
      !rows_aligned(p.dout) || !rows_aligned(p.dq) || !rows_aligned(p.dk) || !rows_aligned(p.dv)) {
    return "cuda_sm80 backward needs q, k, v, out, dout, dq, dk and dv rows 16-byte aligned (data pointers "
           "aligned, strides multiples of 8 elements)";
  }
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    return "cuda_sm80: no usable CUDA device";
  }
  if (major < 8) return "cuda_sm80 needs a GPU of compute capability 8.0 or newer";
  return nullptr;
}

std::size_t workspace_size(const BackwardParams& p, int) noexcept { return backward_layout(p).total; }

Status run(const BackwardParams& p, const ExecutionContext& ctx) noexcept {
#if FLASHATTN_SM80_BACKWARD
  if (p.batch == 0 || p.heads == 0) return Status::ok_status();
  auto stream = static_cast<cudaStream_t>(ctx.stream);
  auto* workspace = static_cast<unsigned char*>(ctx.workspace);
  const BackwardLayout layout = backward_layout(p);

  BackwardKernelArgs args;
  args.p = p;
  args.rows_padded = layout.rows_padded;
  args.lse_log2 = reinterpret_cast<float*>(workspace + layout.lse);
  args.delta = reinterpret_cast<float*>(workspace + layout.delta);
  args.dq_accum = reinterpret_cast<float*>(workspace + layout.dq_accum);
  args.dq_semaphore = p.deterministic ? reinterpret_cast<int*>(workspace + layout.semaphore) : nullptr;
  args.tile_counter =
      p.deterministic ? reinterpret_cast<unsigned long long*>(workspace + layout.tile_counter) : nullptr;
  args.m_blocks = static_cast<int>(layout.rows_padded / kBackwardBlockM);
  args.scale_log2 = p.scale * 1.4426950408889634f;
  args.dropout_threshold = p.dropout_p > 0.f ? dropout_threshold(p.dropout_p) : 0u;
  args.dropout_rescale = p.dropout_p > 0.f ? 1.f / (1.f - p.dropout_p) : 1.f;
  if (p.dropout_p > 0.f) args.dropout_keys = dropout_keys(p.dropout_seed, p.dropout_offset);
  const bool general =
      p.softcap > 0.f || p.alibi_slopes != nullptr || p.bias != nullptr || args.dropout_threshold > 0;
  if (cudaError_t e = decide_dq_bulk(p, general, &args.dq_bulk); e != cudaSuccess)
    return cuda_status(e, "kernel attribute query");

  if (cudaError_t e = dispatch_aux(args, 0, stream); e != cudaSuccess)
    return cuda_status(e, "preprocess launch");
  if (p.sink != nullptr && p.dsink != nullptr) {
    if (cudaError_t e = dispatch_aux(args, 1, stream); e != cudaSuccess)
      return cuda_status(e, "dsink launch");
  }
  if (p.seqlen_k > 0) {
    if (cudaError_t e = dispatch_backward(args, general, stream); e != cudaSuccess) {
      return cuda_status(e, "kernel launch");
    }
  }
  if (p.seqlen_q > 0) {
    if (cudaError_t e = dispatch_aux(args, 2, stream); e != cudaSuccess)
      return cuda_status(e, "postprocess launch");
  }
  return Status::ok_status();
#else
  (void)p, (void)ctx;
  return Status::error(ErrorCode::unsupported, "%s", unsupported_reason(p));
#endif
}

}  // namespace flashattn::detail::cuda_sm80
