// flashattn::detail::cuda_sm90: the backend interface (src/backend.h) over the
// Hopper (sm_90a) forward kernels. Host code only: what the kernels cover,
// and the dispatch to the per-(head dim, dtype) instantiation. Everything
// unsupported is reported by unsupported_reason so the API picks cuda_sm80
// visibly; nothing is silently approximated.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backend.h"
#include "cuda/sm90/forward_dispatch.h"

// Which (head dims, dtype) kernels this build has (src/cuda/sm90/CMakeLists.txt).
#ifndef FLASHATTN_SM90_HAS_D64_FP16
#define FLASHATTN_SM90_HAS_D64_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D64_BF16
#define FLASHATTN_SM90_HAS_D64_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D128_FP16
#define FLASHATTN_SM90_HAS_D128_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D128_BF16
#define FLASHATTN_SM90_HAS_D128_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D192_FP16
#define FLASHATTN_SM90_HAS_D192_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D192_BF16
#define FLASHATTN_SM90_HAS_D192_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D192X128_FP16
#define FLASHATTN_SM90_HAS_D192X128_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D192X128_BF16
#define FLASHATTN_SM90_HAS_D192X128_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D256_FP16
#define FLASHATTN_SM90_HAS_D256_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D256_BF16
#define FLASHATTN_SM90_HAS_D256_BF16 0
#endif

namespace flashattn::detail::cuda_sm90 {
namespace {

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

// TMA: base 16-byte aligned, strides multiples of 16 bytes below 2^40 bytes.
bool tma_compatible(const Operand& op) {
  constexpr std::int64_t kMaxStride = std::int64_t{1} << 39;  // elements of 2 bytes
  auto ok = [&](std::int64_t stride) { return stride % 8 == 0 && stride >= 0 && stride < kMaxStride; };
  return aligned16(op.data) && ok(op.batch_stride) && ok(op.row_stride) && ok(op.head_stride);
}

// (d, dv) pairs with a kernel: d = dv in {64, 128, 192, 256}, and (192, 128).
bool head_dims_supported(std::int64_t d, std::int64_t dv) {
  if (d == 192 && dv == 128) return true;
  return d == dv && (d == 64 || d == 128 || d == 192 || d == 256);
}

bool kernel_compiled(std::int64_t d, std::int64_t dv, DType dtype) {
  const bool bf16 = dtype == DType::bfloat16;
  if (d == 192 && dv == 128) return bf16 ? FLASHATTN_SM90_HAS_D192X128_BF16 : FLASHATTN_SM90_HAS_D192X128_FP16;
  switch (d) {
    case 64:
      return bf16 ? FLASHATTN_SM90_HAS_D64_BF16 : FLASHATTN_SM90_HAS_D64_FP16;
    case 128:
      return bf16 ? FLASHATTN_SM90_HAS_D128_BF16 : FLASHATTN_SM90_HAS_D128_FP16;
    case 192:
      return bf16 ? FLASHATTN_SM90_HAS_D192_BF16 : FLASHATTN_SM90_HAS_D192_FP16;
    case 256:
      return bf16 ? FLASHATTN_SM90_HAS_D256_BF16 : FLASHATTN_SM90_HAS_D256_FP16;
    default:
      return false;
  }
}

// Launches the compiled instantiation, or reports that it is absent.
template <int kHeadDim, int kHeadDimV, typename Element, bool kCompiled>
cudaError_t dispatch(const AttentionParams& p, void* workspace, cudaStream_t stream) {
  if constexpr (kCompiled) {
    return run_forward<kHeadDim, kHeadDimV, Element>(p, workspace, stream);
  } else {
    (void)p, (void)workspace, (void)stream;
    return cudaErrorInvalidDeviceFunction;
  }
}

template <typename Element, bool kBf16>
cudaError_t dispatch_dims(const AttentionParams& p, void* workspace, cudaStream_t stream) {
  constexpr bool b = kBf16;
  if (p.head_dim == 192 && p.head_dim_v == 128) {
    return dispatch<192, 128, Element, b ? FLASHATTN_SM90_HAS_D192X128_BF16 : FLASHATTN_SM90_HAS_D192X128_FP16>(
        p, workspace, stream);
  }
  switch (p.head_dim) {
    case 64:
      return dispatch<64, 64, Element, b ? FLASHATTN_SM90_HAS_D64_BF16 : FLASHATTN_SM90_HAS_D64_FP16>(
          p, workspace, stream);
    case 128:
      return dispatch<128, 128, Element, b ? FLASHATTN_SM90_HAS_D128_BF16 : FLASHATTN_SM90_HAS_D128_FP16>(
          p, workspace, stream);
    case 192:
      return dispatch<192, 192, Element, b ? FLASHATTN_SM90_HAS_D192_BF16 : FLASHATTN_SM90_HAS_D192_FP16>(
          p, workspace, stream);
    case 256:
      return dispatch<256, 256, Element, b ? FLASHATTN_SM90_HAS_D256_BF16 : FLASHATTN_SM90_HAS_D256_FP16>(
          p, workspace, stream);
    default:
      return cudaErrorInvalidConfiguration;
  }
}

Status cuda_status(cudaError_t error, const char* what) {
  return Status::error(ErrorCode::cuda_error, "cuda_sm90: %s failed: %s", what, cudaGetErrorString(error));
}

}  // namespace

const char* unsupported_reason(const AttentionParams& p) noexcept {
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16)
    return "cuda_sm90 runs fp16 and bf16 inputs only";
  if (!head_dims_supported(p.head_dim, p.head_dim_v)) {
    return "cuda_sm90 has kernels for head dims 64, 128, 192, 256 (dv = d) and (d, dv) = (192, 128) only";
  }
  if (!kernel_compiled(p.head_dim, p.head_dim_v, p.dtype)) {
    return "cuda_sm90: the kernel for this head dim and dtype was not compiled (see FLASHATTN_HEAD_DIMS and "
           "FLASHATTN_DTYPES)";
  }
  if (p.is_kvcache) return "cuda_sm90 does not yet run the KV-cache forward";
  if (p.block_table != nullptr) return "cuda_sm90 does not yet run paged K/V";
  if (p.dropout_p > 0.f) return "cuda_sm90 does not support dropout";
  if (!tma_compatible(p.q) || !tma_compatible(p.k) || !tma_compatible(p.v) || !tma_compatible(p.out)) {
    return "cuda_sm90 needs q, k, v and out 16-byte aligned with strides that are multiples of 8 elements";
  }
  constexpr std::int64_t kMaxInt = 0x3fffffff;
  if (p.seqlen_q > kMaxInt || p.seqlen_k > kMaxInt || p.batch * p.heads > kMaxInt ||
      (p.seqlen_q + 127) / 128 * p.batch * p.heads > kMaxInt) {
    return "cuda_sm90: problem too large for 32-bit tile indices";
  }
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return "cuda_sm90: no usable CUDA device";
  }
  if (major != 9 || minor != 0) return "cuda_sm90 kernels (sm_90a) run on compute capability 9.0 only";
  return nullptr;
}

const char* unsupported_reason(const BackwardParams&) noexcept {
  return "cuda_sm90 has no backward kernels yet";
}

const char* unsupported_reason(const CombineParams&) noexcept {
  return "cuda_sm90 has no split-KV combine kernel (cuda_sm80's serves)";
}

// The dynamic tile scheduler's counter, plus per-sequence lengths and tensor
// maps for variable-length / seqused calls (forward_dispatch.h).
std::size_t workspace_size(const AttentionParams& p, int) noexcept { return forward_workspace_bytes(p); }
std::size_t workspace_size(const BackwardParams&, int) noexcept { return 0; }
std::size_t workspace_size(const CombineParams&, int) noexcept { return 0; }

Status run(const AttentionParams& p, const ExecutionContext& ctx) noexcept {
  if (p.batch == 0 || p.seqlen_q == 0 || p.heads == 0) return Status::ok_status();
  auto stream = static_cast<cudaStream_t>(ctx.stream);
  if (ctx.workspace == nullptr || ctx.workspace_bytes < workspace_size(p, 0)) {
    return Status::error(ErrorCode::invalid_argument, "cuda_sm90: workspace of %zu bytes needed, %zu given",
                         workspace_size(p, 0), ctx.workspace_bytes);
  }
  const cudaError_t e = p.dtype == DType::bfloat16
                            ? dispatch_dims<__nv_bfloat16, true>(p, ctx.workspace, stream)
                            : dispatch_dims<__half, false>(p, ctx.workspace, stream);
  if (e == cudaErrorInvalidValue) {
    return Status::error(ErrorCode::internal, "cuda_sm90: tensor map encoding failed (head_dim %lld)",
                         static_cast<long long>(p.head_dim));
  }
  if (e != cudaSuccess) return cuda_status(e, "forward launch");
  return Status::ok_status();
}

Status run(const BackwardParams&, const ExecutionContext&) noexcept {
  return Status::error(ErrorCode::unsupported, "cuda_sm90 has no backward kernels yet");
}

Status run(const CombineParams&, const ExecutionContext&) noexcept {
  return Status::error(ErrorCode::unsupported, "cuda_sm90 has no split-KV combine kernel");
}

}  // namespace flashattn::detail::cuda_sm90
