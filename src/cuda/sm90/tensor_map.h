// Host-side encoding of TMA tensor maps. cuTensorMapEncodeTiled lives in the
// driver; it is reached through the runtime's driver entry point so the library
// does not link libcuda. The lookup runs once (a function-local static, written
// before first use and read-only afterwards); encoding itself is pure host work:
// it neither allocates nor touches the device.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "flashattn/tensor.h"

namespace flashattn::detail::cuda_sm90 {

// A 4-D view (cols, rows, heads, batch) of 16-bit elements with element strides
// for rows/heads/batch (cols contiguous), read or written as 128B-swizzled boxes of
// {64 cols, box_rows}. Returns false when the driver rejects the description or
// the entry point is unavailable.
bool encode_tile_map(CUtensorMap* map, DType dtype, const void* base, std::int64_t cols, std::int64_t rows,
                     std::int64_t heads, std::int64_t batch, std::int64_t row_stride,
                     std::int64_t head_stride, std::int64_t batch_stride, int box_rows) noexcept;

// Packed GQA (the query heads of one kv head share a tile): the 5-D view
// (cols, group heads, rows, kv heads, batch) of q or out, whose boxes
// {64, group, box_rows} land in shared memory as group * box_rows consecutive
// 128-byte rows, packed row r = row * group + head in group.
bool encode_packed_map(CUtensorMap* map, DType dtype, const void* base, std::int64_t cols, std::int64_t group,
                       std::int64_t rows, std::int64_t kv_heads, std::int64_t batch, std::int64_t row_stride,
                       std::int64_t head_stride, std::int64_t batch_stride, int box_rows) noexcept;

}  // namespace flashattn::detail::cuda_sm90
