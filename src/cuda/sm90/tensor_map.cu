#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include "cuda/sm90/tensor_map.h"

namespace flashattn::detail::cuda_sm90 {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_entry_point() noexcept {
  static const PFN_cuTensorMapEncodeTiled_v12000 entry = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  return entry;
}

}  // namespace

bool encode_tile_map(CUtensorMap* map, DType dtype, const void* base, std::int64_t cols, std::int64_t rows,
                     std::int64_t heads, std::int64_t batch, std::int64_t row_stride,
                     std::int64_t head_stride, std::int64_t batch_stride, int box_rows) noexcept {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encode_entry_point();
  if (encode == nullptr) return false;
  // The driver wants every extent >= 1 and every stride a multiple of 16 bytes,
  // also for dimensions of extent 1 whose stride is never used.
  auto extent = [](std::int64_t n) { return static_cast<cuuint64_t>(n < 1 ? 1 : n); };
  auto stride = [](std::int64_t elements, std::int64_t fallback) {
    return static_cast<cuuint64_t>((elements > 0 ? elements : fallback) * 2);
  };
  const cuuint64_t dims[4] = {extent(cols), extent(rows), extent(heads), extent(batch)};
  const cuuint64_t strides[3] = {stride(row_stride, cols), stride(head_stride, cols),
                                 stride(batch_stride, cols)};
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type =
      dtype == DType::bfloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult result = encode(map, type, 4, const_cast<void*>(base), dims, strides, box, element_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS;
}

bool encode_packed_map(CUtensorMap* map, DType dtype, const void* base, std::int64_t cols, std::int64_t group,
                       std::int64_t rows, std::int64_t kv_heads, std::int64_t batch, std::int64_t row_stride,
                       std::int64_t head_stride, std::int64_t batch_stride, int box_rows) noexcept {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encode_entry_point();
  if (encode == nullptr) return false;
  auto extent = [](std::int64_t n) { return static_cast<cuuint64_t>(n < 1 ? 1 : n); };
  auto stride = [](std::int64_t elements, std::int64_t fallback) {
    return static_cast<cuuint64_t>((elements > 0 ? elements : fallback) * 2);
  };
  const cuuint64_t dims[5] = {extent(cols), extent(group), extent(rows), extent(kv_heads), extent(batch)};
  // The kv-head dimension steps over `group` query heads.
  const cuuint64_t strides[4] = {stride(head_stride, cols), stride(row_stride, cols),
                                 stride(head_stride * group, cols), stride(batch_stride, cols)};
  const cuuint32_t box[5] = {64, static_cast<cuuint32_t>(group), static_cast<cuuint32_t>(box_rows), 1, 1};
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUtensorMapDataType type =
      dtype == DType::bfloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult result = encode(map, type, 5, const_cast<void*>(base), dims, strides, box, element_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS;
}

}  // namespace flashattn::detail::cuda_sm90
