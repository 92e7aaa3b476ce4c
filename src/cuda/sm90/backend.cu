// flashattn::detail::cuda_sm90: the backend interface (src/backend.h) over the
// Hopper (sm_90a) forward kernels. Host code only: what the kernels cover,
// and the dispatch to the per-(head dim, dtype) instantiation. Everything
// unsupported is reported by unsupported_reason so the API picks cuda_sm80
// visibly; nothing is silently approximated.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backend.h"
#include "common/philox.h"  // dropout_threshold
#include "cuda/sm80/backward_config.h"
#include "cuda/sm80/kvcache_kernels.h"
#include "cuda/sm80/sm80_backward_kernel_list.h"  // generated: FLASHATTN_SM80_BACKWARD (its aux kernels built)
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
#ifndef FLASHATTN_SM90_HAS_D96_FP16  // d = 128's tile kernels with GEMMs over 96 columns
#define FLASHATTN_SM90_HAS_D96_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D96_BF16
#define FLASHATTN_SM90_HAS_D96_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D160_FP16  // d = 192's tile kernels with GEMMs over 160 columns
#define FLASHATTN_SM90_HAS_D160_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D160_BF16
#define FLASHATTN_SM90_HAS_D160_BF16 0
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
#ifndef FLASHATTN_SM90_HAS_D64X256_FP16
#define FLASHATTN_SM90_HAS_D64X256_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D64X256_BF16
#define FLASHATTN_SM90_HAS_D64X256_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D64X512_FP16
#define FLASHATTN_SM90_HAS_D64X512_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D64X512_BF16
#define FLASHATTN_SM90_HAS_D64X512_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D256_FP16
#define FLASHATTN_SM90_HAS_D256_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_D256_BF16
#define FLASHATTN_SM90_HAS_D256_BF16 0
#endif

// Which backward main kernels this build has (d = dv = 64, 128, 192, 256, (d, dv) = (192, 128);
// FLASHATTN_BACKWARD).
#ifndef FLASHATTN_SM90_HAS_BWD_D96_FP16  // d = 128's kernels narrowed to 96 columns (every mode)
#define FLASHATTN_SM90_HAS_BWD_D96_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D96_BF16
#define FLASHATTN_SM90_HAS_BWD_D96_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D64_FP16
#define FLASHATTN_SM90_HAS_BWD_D64_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D64_BF16
#define FLASHATTN_SM90_HAS_BWD_D64_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D128_FP16
#define FLASHATTN_SM90_HAS_BWD_D128_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D128_BF16
#define FLASHATTN_SM90_HAS_BWD_D128_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D192_FP16
#define FLASHATTN_SM90_HAS_BWD_D192_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D192_BF16
#define FLASHATTN_SM90_HAS_BWD_D192_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D192X128_FP16
#define FLASHATTN_SM90_HAS_BWD_D192X128_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D192X128_BF16
#define FLASHATTN_SM90_HAS_BWD_D192X128_BF16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D256_FP16
#define FLASHATTN_SM90_HAS_BWD_D256_FP16 0
#endif
#ifndef FLASHATTN_SM90_HAS_BWD_D256_BF16
#define FLASHATTN_SM90_HAS_BWD_D256_BF16 0
#endif

namespace flashattn::detail::cuda_sm90 {

template <int kHeadDim, typename Element, bool kDeterministic, bool kGeneral, int kHeadDimV,
          int kGemmDim = kHeadDim>
cudaError_t run_backward(const cuda_sm80::BackwardKernelArgs& args, cudaStream_t stream);

namespace {

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

// TMA: base 16-byte aligned, strides multiples of 16 bytes below 2^40 bytes.
bool tma_compatible(const Operand& op) {
  constexpr std::int64_t kMaxStride = std::int64_t{1} << 39;  // elements of 2 bytes
  auto ok = [&](std::int64_t stride) { return stride % 8 == 0 && stride >= 0 && stride < kMaxStride; };
  return aligned16(op.data) && ok(op.batch_stride) && ok(op.row_stride) && ok(op.head_stride);
}

// (d, dv) pairs with a kernel (forward_config.h kernel_head_dims): (192, 128), (64, 256), (64, 512), and
// every pair of multiples of 8 up to 256 on the d = dv = 64, 128, 192 or 256 kernel that holds both.
bool head_dims_supported(std::int64_t d, std::int64_t dv) { return kernel_head_dims(d, dv).d != 0; }

// Whether the build compiled the (d, dv, dtype) instantiation: one table for the capability
// query (at run time) and the dispatch below (at compile time).
constexpr bool kernel_compiled(std::int64_t d, std::int64_t dv, bool bf16) {
  if (d == 192 && dv == 128)
    return bf16 ? FLASHATTN_SM90_HAS_D192X128_BF16 : FLASHATTN_SM90_HAS_D192X128_FP16;
  if (d == 64 && dv == 256) return bf16 ? FLASHATTN_SM90_HAS_D64X256_BF16 : FLASHATTN_SM90_HAS_D64X256_FP16;
  if (d == 64 && dv == 512) return bf16 ? FLASHATTN_SM90_HAS_D64X512_BF16 : FLASHATTN_SM90_HAS_D64X512_FP16;
  if (d != dv) return false;
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

bool kernel_compiled(std::int64_t d, std::int64_t dv, DType dtype) {
  const KernelHeadDims kernel = kernel_head_dims(d, dv);
  return kernel.d != 0 && kernel_compiled(kernel.d, kernel.dv, dtype == DType::bfloat16);
}

// Launches the compiled instantiation, or reports that it is absent.
template <int kHeadDim, int kHeadDimV, typename Element, bool kBf16>
cudaError_t dispatch(const AttentionParams& p, void* workspace, cudaStream_t stream) {
  if constexpr (kernel_compiled(kHeadDim, kHeadDimV, kBf16)) {
    return run_forward<kHeadDim, kHeadDimV, Element>(p, workspace, stream);
  } else {
    (void)p, (void)workspace, (void)stream;
    return cudaErrorInvalidDeviceFunction;
  }
}

// Whether the build compiled the narrowed GEMMs' units of width `gemm` (forward_config.h narrowed_gemm_dim).
constexpr bool narrowed_compiled(int gemm, bool bf16) {
  if (gemm == 96) return bf16 ? FLASHATTN_SM90_HAS_D96_BF16 : FLASHATTN_SM90_HAS_D96_FP16;
  if (gemm == 160) return bf16 ? FLASHATTN_SM90_HAS_D160_BF16 : FLASHATTN_SM90_HAS_D160_FP16;
  return false;
}

// By the kernel head dims (kernel_head_dims); p keeps its own, which the tensor maps describe. Head dims of
// at most 96 / 160 run d = 128's / 192's tile kernels with narrowed GEMMs where built, except the calls that
// drop or decode.
template <typename Element, bool kBf16>
cudaError_t dispatch_dims(const AttentionParams& p, void* workspace, cudaStream_t stream) {
  const KernelHeadDims kernel = kernel_head_dims(p.head_dim, p.head_dim_v);
  if (const int gemm = narrowed_gemm_dim(p.head_dim, p.head_dim_v);
      gemm != 0 && !drops(p) && !runs_decode_kernel(p)) {
    if constexpr (narrowed_compiled(96, kBf16)) {
      if (gemm == 96) return run_forward<128, 128, Element, 96>(p, workspace, stream);
    }
    if constexpr (narrowed_compiled(160, kBf16)) {
      if (gemm == 160) return run_forward<192, 192, Element, 160>(p, workspace, stream);
    }
  }
  if (kernel.d == 192 && kernel.dv == 128) return dispatch<192, 128, Element, kBf16>(p, workspace, stream);
  if (kernel.d == 64 && kernel.dv == 256) return dispatch<64, 256, Element, kBf16>(p, workspace, stream);
  if (kernel.d == 64 && kernel.dv == 512) return dispatch<64, 512, Element, kBf16>(p, workspace, stream);
  if (kernel.d != kernel.dv) return cudaErrorInvalidConfiguration;
  switch (kernel.d) {
    case 64:
      return dispatch<64, 64, Element, kBf16>(p, workspace, stream);
    case 128:
      return dispatch<128, 128, Element, kBf16>(p, workspace, stream);
    case 192:
      return dispatch<192, 192, Element, kBf16>(p, workspace, stream);
    case 256:
      return dispatch<256, 256, Element, kBf16>(p, workspace, stream);
    default:
      return cudaErrorInvalidConfiguration;
  }
}

int device_sm_count() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 132;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 132;
  return count;
}

// Whether the launch runs the kernel with split-KV (which then splits as split_kv_shape decides).
bool has_split_kv(const AttentionParams& p) { return FLASHATTN_SM90_SPLIT_KV != 0 && runs_decode_kernel(p); }

// Decoding one or a few sequences over a long cache on a kernel without split-KV (every one but the decode
// kernels, forward_config.h SPLIT_KV): the tiles (packed GQA counted, the most favourable case)
// cannot fill the GPU, while cuda_sm80 splits the keys over the SMs. Left to cuda_sm80 (a visible choice)
// below a quarter of the SMs: on an H200 (GQA 32/8, d128, 4096-16384 keys; s44_decode_rows.sh, before
// SPLIT_KV) cuda_sm80, with the group's heads as rows, took 0.45-0.85 of this path's time at 8-32 tiles and
// 1.5-1.6x at 64 (batch 8), where the rule had been half the SMs.
bool few_tiles_long_cache(const AttentionParams& p) {
  if (p.seqlen_k < 2048 || has_split_kv(p)) return false;
  const std::int64_t group = p.heads / p.heads_kv;
  const std::int64_t tiles = p.batch * p.heads_kv * ((p.seqlen_q * group + 127) / 128);
  return tiles * 4 < device_sm_count();
}

// Whether the build has the backward main kernel of (d, dv, dtype): one table for the capability query and
// the dispatch (as kernel_compiled for the forward).
constexpr bool backward_compiled(std::int64_t d, std::int64_t dv, bool bf16) {
  if (d == 192 && dv == 128)
    return bf16 ? FLASHATTN_SM90_HAS_BWD_D192X128_BF16 : FLASHATTN_SM90_HAS_BWD_D192X128_FP16;
  if (d != dv) return false;
  if (d == 64) return bf16 ? FLASHATTN_SM90_HAS_BWD_D64_BF16 : FLASHATTN_SM90_HAS_BWD_D64_FP16;
  if (d == 128) return bf16 ? FLASHATTN_SM90_HAS_BWD_D128_BF16 : FLASHATTN_SM90_HAS_BWD_D128_FP16;
  if (d == 192) return bf16 ? FLASHATTN_SM90_HAS_BWD_D192_BF16 : FLASHATTN_SM90_HAS_BWD_D192_FP16;
  if (d == 256) return bf16 ? FLASHATTN_SM90_HAS_BWD_D256_BF16 : FLASHATTN_SM90_HAS_BWD_D256_FP16;
  return false;
}

// The backward kernel head dims that run (d, dv): the forward's (forward_config.h kernel_head_dims, padded
// head dims on the kernel that holds them) where a backward kernel has them, d = dv = 64, 128, 192, 256 or
// (192, 128); {0, 0} for none.
constexpr KernelHeadDims backward_kernel_dims(std::int64_t d, std::int64_t dv) {
  const KernelHeadDims kernel = kernel_head_dims(d, dv);
  const bool has =
      (kernel.d == 192 && kernel.dv == 128) ||
      (kernel.d == kernel.dv && (kernel.d == 64 || kernel.d == 128 || kernel.d == 192 || kernel.d == 256));
  return has ? kernel : KernelHeadDims{};
}

bool backward_compiled(std::int64_t d, std::int64_t dv, DType dtype) {
  const KernelHeadDims kernel = backward_kernel_dims(d, dv);
  return kernel.d != 0 && backward_compiled(kernel.d, kernel.dv, dtype == DType::bfloat16);
}

// The (d, dv) pairs with a Hopper backward kernel.
bool backward_head_dims_supported(std::int64_t d, std::int64_t dv) {
  return backward_kernel_dims(d, dv).d != 0;
}

template <int kHeadDim, int kHeadDimV, typename Element, bool kBf16>
cudaError_t dispatch_backward(const cuda_sm80::BackwardKernelArgs& args, cudaStream_t stream) {
  if constexpr (backward_compiled(kHeadDim, kHeadDimV, kBf16)) {
    const bool general = args.p.softcap > 0.f || args.p.alibi_slopes != nullptr || args.dropout_threshold > 0;
    if constexpr (kHeadDim >= 192) {  // one kernel for both modes (BackwardConfig::kSplitHeadDim)
      return general ? run_backward<kHeadDim, Element, false, true, kHeadDimV>(args, stream)
                     : run_backward<kHeadDim, Element, false, false, kHeadDimV>(args, stream);
    } else {
      if constexpr (kHeadDim == 128 &&
                    (kBf16 ? FLASHATTN_SM90_HAS_BWD_D96_BF16 : FLASHATTN_SM90_HAS_BWD_D96_FP16)) {
        // Head dims of at most 96: d = 128's kernels narrowed to 96 columns (forward_config.h
        // narrowed_gemm_dim).
        if (narrowed_gemm_dim(args.p.head_dim, args.p.head_dim_v) == 96) {
          if (general) {
            return args.p.deterministic
                       ? run_backward<kHeadDim, Element, true, true, kHeadDimV, 96>(args, stream)
                       : run_backward<kHeadDim, Element, false, true, kHeadDimV, 96>(args, stream);
          }
          return args.p.deterministic
                     ? run_backward<kHeadDim, Element, true, false, kHeadDimV, 96>(args, stream)
                     : run_backward<kHeadDim, Element, false, false, kHeadDimV, 96>(args, stream);
        }
      }
      if (general) {
        return args.p.deterministic ? run_backward<kHeadDim, Element, true, true, kHeadDimV>(args, stream)
                                    : run_backward<kHeadDim, Element, false, true, kHeadDimV>(args, stream);
      }
      return args.p.deterministic ? run_backward<kHeadDim, Element, true, false, kHeadDimV>(args, stream)
                                  : run_backward<kHeadDim, Element, false, false, kHeadDimV>(args, stream);
    }
  } else {
    (void)args, (void)stream;
    return cudaErrorInvalidDeviceFunction;
  }
}

// Why the current device cannot run sm_90a kernels, or nullptr.
const char* device_reason() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return "cuda_sm90: no usable CUDA device";
  }
  if (major != 9 || minor != 0) return "cuda_sm90 kernels (sm_90a) run on compute capability 9.0 only";
  return nullptr;
}

Status cuda_status(cudaError_t error, const char* what) {
  return Status::error(ErrorCode::cuda_error, "cuda_sm90: %s failed: %s", what, cudaGetErrorString(error));
}

}  // namespace

const char* unsupported_reason(const AttentionParams& p) noexcept {
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16)
    return "cuda_sm90 runs fp16 and bf16 inputs only";
  if (!head_dims_supported(p.head_dim, p.head_dim_v)) {
    return "cuda_sm90 runs head dims (d, dv) = (192, 128), (64, 256), (64, 512) and any d, dv that are "
           "multiples of 8 up to 256 (on the d = dv = 64, 128, 192 or 256 kernel that holds both)";
  }
  if (!kernel_compiled(p.head_dim, p.head_dim_v, p.dtype)) {
    return "cuda_sm90: the kernel for this head dim and dtype was not compiled (see FLASHATTN_HEAD_DIMS and "
           "FLASHATTN_DTYPES)";
  }
  if (p.bias != nullptr) {
    return "cuda_sm90's kernels take no bias tensor (options.bias): a call with one runs on cuda_sm80";
  }
  if (p.block_table != nullptr && p.page_size <= 0) return "cuda_sm90: paged K/V needs page_size >= 1";
  if (p.block_table != nullptr && p.page_size % 8 != 0) {
    // The paged producer reads pages as TMA boxes of 8-128 rows (forward_launch.h paged_box_rows); other
    // page sizes would be gathered by the producer warp, which is far slower than cuda_sm80's loaders
    // (H200, d128 fp16 8192 keys b1 h4, pages of 192 before the boxes, a third of the key blocks
    // gathered: 1321 us on cuda_sm90, 396 us on cuda_sm80; docs/performance-sm90.md, helper sm90p).
    return "cuda_sm90 reads paged K/V as TMA boxes of whole 8-row groups: page sizes that are not a multiple "
           "of 8 run on cuda_sm80";
  }
  if (p.is_kvcache && p.num_splits > 1 && !has_split_kv(p)) {
    return "cuda_sm90 splits the keys only in its decode kernels (kernel head dims 64, 128 or 256: d = dv up "
           "to 128 or above 192; at most 64 packed query rows per K/V head): a requested num_splits > 1 runs "
           "on cuda_sm80";
  }
  if (p.is_kvcache && p.num_splits == 0 && few_tiles_long_cache(p)) {
    return "cuda_sm90 splits the keys only in its decode kernels (kernel head dims 64, 128, 256): a KV-cache "
           "forward with fewer query tiles than a quarter of the SMs over 2048 or more cached keys runs "
           "faster split on cuda_sm80";
  }
  if (drops(p) && p.block_table != nullptr) {
    return "cuda_sm90 runs dropout on dense K/V only (forward_config.h DropoutConfig): with paged K/V it "
           "runs on cuda_sm80";
  }
  if (!tma_compatible(p.q) || !tma_compatible(p.k) || !tma_compatible(p.v) || !tma_compatible(p.out)) {
    return "cuda_sm90 needs q, k, v and out 16-byte aligned with strides that are multiples of 8 elements";
  }
  constexpr std::int64_t kMaxInt = 0x3fffffff;
  if (p.seqlen_q > kMaxInt || p.seqlen_k > kMaxInt || p.batch * p.heads > kMaxInt ||
      (p.seqlen_q + 127) / 128 * p.batch * p.heads > kMaxInt) {
    return "cuda_sm90: problem too large for 32-bit tile indices";
  }
  return device_reason();
}

const char* unsupported_reason(const BackwardParams& p) noexcept {
  bool any_compiled = false;
  for (const std::int64_t d : {64, 128, 192, 256}) {
    any_compiled =
        any_compiled || backward_compiled(d, d, DType::float16) || backward_compiled(d, d, DType::bfloat16);
  }
  if (!any_compiled) {
    return "cuda_sm90: no backward kernel was compiled (it needs FLASHATTN_BACKWARD and head dim 64, "
           "128, 192 or 256 among FLASHATTN_HEAD_DIMS)";
  }
  if (p.is_kvcache || p.block_table != nullptr)
    return "cuda_sm90: backward over a KV cache or paged K/V is not defined";
  if (p.bias != nullptr) {
    return "cuda_sm90's backward kernels take no bias tensor (options.bias): a call with one runs on "
           "cuda_sm80";
  }
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16)
    return "cuda_sm90 runs fp16 and bf16 inputs only";
  if (!backward_head_dims_supported(p.head_dim, p.head_dim_v)) {
    return "cuda_sm90's backward kernels cover d = dv = 64, 128, 192, 256, (d, dv) = (192, 128) and any d, "
           "dv that are multiples of 8 up to 256 (on the d = dv kernel that holds both); other head dims run "
           "on cuda_sm80";
  }
  if (!backward_compiled(p.head_dim, p.head_dim_v, p.dtype)) {
    return "cuda_sm90: the backward kernel for this head dim and dtype was not compiled (see "
           "FLASHATTN_HEAD_DIMS and FLASHATTN_DTYPES)";
  }
  if (p.heads_kv <= 0 || p.heads % p.heads_kv != 0) return "cuda_sm90: heads must be a multiple of heads_kv";
  if ((p.cu_seqlens_q == nullptr) != (p.cu_seqlens_k == nullptr))
    return "cuda_sm90's backward needs cu_seqlens_q and cu_seqlens_k together";
  if (!tma_compatible(p.q) || !tma_compatible(p.k) || !tma_compatible(p.v) || !tma_compatible(p.dout) ||
      !tma_compatible(p.out) || !tma_compatible(p.dq) || !tma_compatible(p.dk) || !tma_compatible(p.dv)) {
    return "cuda_sm90's backward needs q, k, v, out, dout, dq, dk and dv 16-byte aligned with strides that "
           "are multiples of 8 elements";
  }
  constexpr std::int64_t kMaxInt = 0x3fffffff;
  const std::int64_t q_rows = p.cu_seqlens_q != nullptr ? p.q_rows : p.seqlen_q;
  const std::int64_t k_rows = p.cu_seqlens_k != nullptr ? p.k_rows : p.seqlen_k;
  if (p.seqlen_q > kMaxInt || p.seqlen_k > kMaxInt || q_rows > kMaxInt || k_rows > kMaxInt ||
      (p.seqlen_k + 127) / 128 * p.batch * p.heads_kv > kMaxInt || p.batch * p.heads > kMaxInt ||
      (p.seqlen_q + 127) / 128 * p.batch * p.heads > kMaxInt) {
    return "cuda_sm90: problem too large for 32-bit tile indices";
  }
  return device_reason();
}

const char* unsupported_reason(const CombineParams&) noexcept {
  return "cuda_sm90 combines its split-KV pieces inside the forward kernel; the standalone combine runs on "
         "cuda_sm80";
}

// The dynamic tile scheduler's counter, plus per-sequence lengths and tensor
// maps for variable-length / seqused calls, or the split tail's records (forward_dispatch.h).
std::size_t workspace_size(const AttentionParams& p, int) noexcept {
  return forward_workspace_bytes(p, device_sm_count());
}
// Whether this call's dQ comes from the dQ pass (kernel head dim d >= 192; backward_dq_kernel.h), which needs
// neither the dQ accumulator nor the deterministic semaphores.
static bool backward_dq_pass(const BackwardParams& p) {
  return backward_kernel_dims(p.head_dim, p.head_dim_v).d >= 192;
}

// cuda_sm80's backward workspace (LSE, D, the dQ accumulator, whose rows are the kernel's: a padded head
// dim's wider than its own): its preprocess and postprocess run around the main kernel. The dQ pass needs LSE
// and D only, the layout's first arrays.
static cuda_sm80::BackwardLayout backward_workspace_layout(const BackwardParams& p) {
  return cuda_sm80::backward_layout(p, backward_kernel_dims(p.head_dim, p.head_dim_v).d);
}
std::size_t workspace_size(const BackwardParams& p, int) noexcept {
  const cuda_sm80::BackwardLayout layout = backward_workspace_layout(p);
  return backward_dq_pass(p) ? layout.dq_accum : layout.total;
}
std::size_t workspace_size(const CombineParams&, int) noexcept { return 0; }

Status run(const AttentionParams& p, const ExecutionContext& ctx) noexcept {
  if (p.batch == 0 || p.seqlen_q == 0 || p.heads == 0) return Status::ok_status();
  auto stream = static_cast<cudaStream_t>(ctx.stream);
  if (const std::size_t needed = workspace_size(p, 0);
      needed > 0 && (ctx.workspace == nullptr || ctx.workspace_bytes < needed)) {
    return Status::error(ErrorCode::invalid_argument, "cuda_sm90: workspace of %zu bytes needed, %zu given",
                         needed, ctx.workspace_bytes);
  }
  // KV cache: k_new/v_new are appended into the cache in place (rotating k_new) by the prepare kernel of the
  // per-sequence maps (forward_launch.h), q is rotated into the workspace with cuda_sm80's kernel
  // (element-wise, memory-bound: nothing to gain from Hopper instructions); the attention then reads the
  // cache like seqused_k.
  AttentionParams a = p;
  if (rotates_q(a)) {
    void* q_rotated = static_cast<unsigned char*>(ctx.workspace) + q_rotated_offset(a);
    if (cudaError_t e = cuda_sm80::launch_rotate_q(a, q_rotated, stream); e != cudaSuccess)
      return cuda_status(e, "rotate_q launch");
    a.q.data = q_rotated;
    a.q.head_stride = a.head_dim;
    a.q.row_stride = a.heads * a.head_dim;
    a.q.batch_stride = a.seqlen_q * a.heads * a.head_dim;
  }
  const cudaError_t e = a.dtype == DType::bfloat16
                            ? dispatch_dims<__nv_bfloat16, true>(a, ctx.workspace, stream)
                            : dispatch_dims<__half, false>(a, ctx.workspace, stream);
  if (e == cudaErrorInvalidValue) {
    return Status::error(ErrorCode::internal, "cuda_sm90: tensor map encoding failed (head_dim %lld)",
                         static_cast<long long>(p.head_dim));
  }
  if (e != cudaSuccess) return cuda_status(e, "forward launch");
  return Status::ok_status();
}

// preprocess (cuda_sm80: D, LSE in base 2, the dQ accumulator zeroed) -> [dsink] -> the main kernel ->
// postprocess (cuda_sm80: dQ scaled and converted from the accumulator's DQ_BULK layout). d >= 192:
// preprocess -> [dsink] -> the main kernel (dK, dV) -> the dQ pass (dQ), no accumulator.
// The API calls it only with problems unsupported_reason accepts (as the forward's run).
Status run(const BackwardParams& p, const ExecutionContext& ctx) noexcept {
  if (p.batch == 0 || p.heads == 0) return Status::ok_status();
  auto stream = static_cast<cudaStream_t>(ctx.stream);
  auto* workspace = static_cast<unsigned char*>(ctx.workspace);  // sized and aligned (the API's check)
  const cuda_sm80::BackwardLayout layout = backward_workspace_layout(p);
  const KernelHeadDims kernel = backward_kernel_dims(p.head_dim, p.head_dim_v);
  cuda_sm80::BackwardKernelArgs args;
  args.p = p;
  args.dq_accum_cols = kernel.d;
  args.rows_padded = layout.rows_padded;
  args.lse_log2 = reinterpret_cast<float*>(workspace + layout.lse);
  args.delta = reinterpret_cast<float*>(workspace + layout.delta);
  const bool dq_pass = backward_dq_pass(p);
  args.dq_accum = dq_pass ? nullptr : reinterpret_cast<float*>(workspace + layout.dq_accum);
  args.m_blocks = static_cast<int>(layout.rows_padded / cuda_sm80::kBackwardBlockM);
  // Deterministic mode (but not the dQ pass's): the dQ turns' semaphores and the tile counter, zeroed by the
  // preprocess.
  if (p.deterministic && !dq_pass) {
    args.dq_semaphore = reinterpret_cast<int*>(workspace + layout.semaphore);
    args.tile_counter = reinterpret_cast<unsigned long long*>(workspace + layout.tile_counter);
  }
  args.scale_log2 = p.scale * 1.4426950408889634f;
  args.dropout_threshold = p.dropout_p > 0.f ? dropout_threshold(p.dropout_p) : 0u;
  args.dropout_rescale = p.dropout_p > 0.f ? 1.f / (1.f - p.dropout_p) : 1.f;
  if (p.dropout_p > 0.f) args.dropout_keys = dropout_keys(p.dropout_seed, p.dropout_offset);
  // The main kernel writes the accumulator in the DQ_BULK layout (d = 256: no accumulator, the dQ pass).
  args.dq_bulk = !dq_pass;
  const bool bf16 = p.dtype == DType::bfloat16;
  auto aux = [&](int which) -> cudaError_t {
#if FLASHATTN_SM80_BACKWARD
    return bf16 ? cuda_sm80::launch_backward_aux<__nv_bfloat16>(args, which, stream)
                : cuda_sm80::launch_backward_aux<__half>(args, which, stream);
#else
    // FLASHATTN_BACKWARD=OFF: no aux kernels exist to link (nor any backward kernel: unsupported_reason
    // refuses every backward call before this runs).
    static_cast<void>(which);
    return cudaErrorNotSupported;
#endif
  };
  if (cudaError_t e = aux(0); e != cudaSuccess) return cuda_status(e, "backward preprocess launch");
  if (p.sink != nullptr && p.dsink != nullptr) {
    if (cudaError_t e = aux(1); e != cudaSuccess) return cuda_status(e, "backward dsink launch");
  }
  // (Without keys the dQ pass still runs: it writes dQ's zeros.)
  if (p.seqlen_k > 0 || (dq_pass && p.seqlen_q > 0)) {
    auto dispatch = [&](auto d, auto dv) {
      constexpr int kD = decltype(d)::value, kDv = decltype(dv)::value;
      return bf16 ? dispatch_backward<kD, kDv, __nv_bfloat16, true>(args, stream)
                  : dispatch_backward<kD, kDv, __half, false>(args, stream);
    };
    using D64 = std::integral_constant<int, 64>;
    using D128 = std::integral_constant<int, 128>;
    using D192 = std::integral_constant<int, 192>;
    using D256 = std::integral_constant<int, 256>;
    // By the kernel head dims (backward_kernel_dims); p keeps its own, which the tensor maps describe.
    const cudaError_t e = kernel.d == 64     ? dispatch(D64{}, D64{})
                          : kernel.d == 128  ? dispatch(D128{}, D128{})
                          : kernel.d == 256  ? dispatch(D256{}, D256{})
                          : kernel.dv == 128 ? dispatch(D192{}, D128{})
                                             : dispatch(D192{}, D192{});
    if (e == cudaErrorInvalidValue) {
      return Status::error(ErrorCode::internal, "cuda_sm90: backward tensor map encoding failed");
    }
    if (e != cudaSuccess) return cuda_status(e, "backward launch");
  }
  if (p.seqlen_q > 0 && !dq_pass) {
    if (cudaError_t e = aux(2); e != cudaSuccess) return cuda_status(e, "backward postprocess launch");
  }
  return Status::ok_status();
}

Status run(const CombineParams&, const ExecutionContext&) noexcept {
  return Status::error(ErrorCode::unsupported,
                       "cuda_sm90 has no standalone split-KV combine (its forward combines its own pieces)");
}

}  // namespace flashattn::detail::cuda_sm90
