// TensorView constructors and dtype helpers.
#include "flashattn/tensor.h"

namespace flashattn {

const char* dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::float16:
      return "fp16";
    case DType::bfloat16:
      return "bf16";
    case DType::float32:
      return "fp32";
    case DType::int32:
      return "int32";
    case DType::boolean:
      return "bool";
  }
  return "invalid-dtype";
}

std::size_t dtype_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::boolean:
      return 1;
    case DType::float16:
    case DType::bfloat16:
      return 2;
    case DType::float32:
    case DType::int32:
      return 4;
  }
  return 0;
}

namespace {

// More dimensions than a view can hold: mark the view with rank -1 so that
// validation rejects it ("rank -1") instead of the view silently dropping dims.
// numel() of such a view is 1 and reads no shape entry, so nothing overruns.
TensorView too_many_dims(void* data, DType dtype, Device device) noexcept {
  TensorView view;
  view.data = data;
  view.dtype = dtype;
  view.rank = -1;
  view.device = device;
  return view;
}

}  // namespace

TensorView TensorView::contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                                  Device device) noexcept {
  if (shape.size() > static_cast<std::size_t>(kMaxRank)) return too_many_dims(data, dtype, device);
  TensorView view;
  view.data = data;
  view.dtype = dtype;
  view.rank = static_cast<int>(shape.size());
  view.device = device;
  int dim = 0;
  for (std::int64_t size : shape) view.shape[dim++] = size;
  // Row-major strides. A size-0 or negative dim makes the view invalid (or empty)
  // anyway; clamping the factor to >= 1 keeps the other strides meaningful.
  std::int64_t stride = 1;
  for (int d = view.rank - 1; d >= 0; --d) {
    view.stride[d] = stride;
    const std::int64_t factor = view.shape[d] > 1 ? view.shape[d] : 1;
    if (__builtin_mul_overflow(stride, factor, &stride)) stride = 0;  // validation reports the overflow
  }
  return view;
}

TensorView TensorView::strided(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                               std::initializer_list<std::int64_t> strides, Device device) noexcept {
  if (shape.size() > static_cast<std::size_t>(kMaxRank) || strides.size() != shape.size()) {
    return too_many_dims(data, dtype, device);
  }
  TensorView view;
  view.data = data;
  view.dtype = dtype;
  view.rank = static_cast<int>(shape.size());
  view.device = device;
  int dim = 0;
  for (std::int64_t size : shape) view.shape[dim++] = size;
  dim = 0;
  for (std::int64_t stride : strides) view.stride[dim++] = stride;
  return view;
}

}  // namespace flashattn
