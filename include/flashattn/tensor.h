// Non-owning tensor views: the only way data crosses the flashattn API.
//
// A view is a pointer plus dtype, shape and element strides. flashattn never
// owns, allocates, copies or frees tensor memory; the caller does. Strides are
// in elements (not bytes) and 64-bit, so tensors over 2^31 elements and
// arbitrary non-contiguous layouts are expressible. Every attention operand must
// have a contiguous last dimension (stride 1); the other strides are free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace flashattn {

enum class DType : std::uint8_t {
  float16,
  bfloat16,
  float32,
  int32,
  boolean,  // one byte, 0 = false, anything else = true (options.bias as a mask)
};

// Short lowercase name ("fp16", "bf16", "fp32", "int32", "bool"), for messages.
const char* dtype_name(DType dtype) noexcept;
std::size_t dtype_size(DType dtype) noexcept;

enum class DeviceType : std::uint8_t { cpu, cuda };

struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;  // CUDA ordinal; ignored for the CPU

  friend bool operator==(const Device&, const Device&) = default;
};

inline constexpr int kMaxRank = 5;

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::float32;
  int rank = 0;  // 0 with a null pointer means "not given" for optional tensors
  std::int64_t shape[kMaxRank] = {};
  std::int64_t stride[kMaxRank] = {};  // in elements
  Device device{};

  // True when the caller passed this (optional) tensor.
  bool defined() const noexcept { return rank > 0 || data != nullptr; }
  std::int64_t size(int dim) const noexcept { return shape[dim]; }
  std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }

  // A row-major (C-contiguous) view.
  static TensorView contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                               Device device = {}) noexcept;
  // A view with explicit strides (elements); shape and strides must have equal length.
  static TensorView strided(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                            std::initializer_list<std::int64_t> strides, Device device = {}) noexcept;
};

}  // namespace flashattn
