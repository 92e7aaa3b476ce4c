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

// Extents and byte strides as the driver wants them: every extent >= 1 and every stride a
// multiple of 16 bytes, also for dimensions of extent 1 whose stride is never used.
cuuint64_t extent(std::int64_t n) { return static_cast<cuuint64_t>(n < 1 ? 1 : n); }
cuuint64_t byte_stride(std::int64_t elements, std::int64_t fallback) {
  return static_cast<cuuint64_t>((elements > 0 ? elements : fallback) * 2);
}

// The L2 promotion of every map (FLASHATTN_SM90_L2_PROMOTION: 0 none, 128 or 256 bytes): how much the L2
// fetches from DRAM around each 128-byte box row a TMA load misses on. 256 capped a TMA stream of K/V rows
// (128-byte box rows 2 KB apart) at ~84% of the H200's DRAM peak, 128 and none reach ~92% as 16-byte cp.async
// does (bench/stream_probe.cu); the H200's decode read +7.5-10% with 128 and the standard grid did not move
// (bench/integration/s20_promo.sh, session 20). The H100's decode, at ~90% of its DRAM peak either way, read
// 0.996 of 256 (s20_promo_h100.sh; its control copy of 128 the same).
#ifndef FLASHATTN_SM90_L2_PROMOTION
#define FLASHATTN_SM90_L2_PROMOTION 128
#endif
constexpr CUtensorMapL2promotion kL2Promotion =
    FLASHATTN_SM90_L2_PROMOTION == 0     ? CU_TENSOR_MAP_L2_PROMOTION_NONE
    : FLASHATTN_SM90_L2_PROMOTION == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                         : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;

// A 16-bit tensor of `rank` dimensions read in 64-column boxes with the 128B swizzle
// (the wgmma operand layout), zero fill out of bounds.
bool encode_swizzled(CUtensorMap* map, DType dtype, const void* base, cuuint32_t rank, const cuuint64_t* dims,
                     const cuuint64_t* strides, const cuuint32_t* box) noexcept {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encode_entry_point();
  if (encode == nullptr) return false;
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUtensorMapDataType type =
      dtype == DType::bfloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult result = encode(map, type, rank, const_cast<void*>(base), dims, strides, box,
                                 element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 kL2Promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS;
}

}  // namespace

bool encode_tile_map(CUtensorMap* map, DType dtype, const void* base, std::int64_t cols, std::int64_t rows,
                     std::int64_t heads, std::int64_t batch, std::int64_t row_stride,
                     std::int64_t head_stride, std::int64_t batch_stride, int box_rows) noexcept {
  const cuuint64_t dims[4] = {extent(cols), extent(rows), extent(heads), extent(batch)};
  const cuuint64_t strides[3] = {byte_stride(row_stride, cols), byte_stride(head_stride, cols),
                                 byte_stride(batch_stride, cols)};
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  return encode_swizzled(map, dtype, base, 4, dims, strides, box);
}

bool encode_packed_map(CUtensorMap* map, DType dtype, const void* base, std::int64_t cols, std::int64_t group,
                       std::int64_t rows, std::int64_t kv_heads, std::int64_t batch, std::int64_t row_stride,
                       std::int64_t head_stride, std::int64_t batch_stride, int box_rows) noexcept {
  const cuuint64_t dims[5] = {extent(cols), extent(group), extent(rows), extent(kv_heads), extent(batch)};
  // The kv-head dimension steps over `group` query heads.
  const cuuint64_t strides[4] = {byte_stride(head_stride, cols), byte_stride(row_stride, cols),
                                 byte_stride(head_stride * group, cols), byte_stride(batch_stride, cols)};
  const cuuint32_t box[5] = {64, static_cast<cuuint32_t>(group), static_cast<cuuint32_t>(box_rows), 1, 1};
  return encode_swizzled(map, dtype, base, 5, dims, strides, box);
}

}  // namespace flashattn::detail::cuda_sm90
