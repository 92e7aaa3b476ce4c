// Host-side conversions between fp32 and the 16-bit float formats, with
// round-to-nearest-even, so the CPU backends read and write fp16/bf16 exactly
// as the GPU does (no dependence on compiler extensions like _Float16).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "flashattn/tensor.h"

namespace flashattn::detail {

inline float bits_to_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline std::uint32_t float_to_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float bf16_to_float(std::uint16_t h) { return bits_to_float(static_cast<std::uint32_t>(h) << 16); }

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits = float_to_bits(f);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu))
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return bits_to_float(sign | 0x7F800000u | (mantissa << 13));  // inf / NaN
  if (exponent == 0) {
    if (mantissa == 0) return bits_to_float(sign);
    // Subnormal: value = mantissa * 2^-24.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
    return sign ? -magnitude : magnitude;
  }
  return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline std::uint16_t float_to_fp16(float f) {
  const std::uint32_t bits = float_to_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u)
    return static_cast<std::uint16_t>(sign | (abs_bits > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (abs_bits >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to >= 65520: inf
  if (abs_bits < 0x38800000u) {
    // Result is subnormal (or zero): round abs * 2^24 to an integer, ties to even.
    const float scaled = bits_to_float(abs_bits) * 16777216.0f;
    std::uint32_t integer = static_cast<std::uint32_t>(scaled);
    const float remainder = scaled - static_cast<float>(integer);
    if (remainder > 0.5f || (remainder == 0.5f && (integer & 1u))) ++integer;
    return static_cast<std::uint16_t>(sign | integer);
  }
  std::uint32_t rounded = abs_bits + 0xFFFu + ((abs_bits >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((rounded - (112u << 23)) >> 13));
}

// Element i (an offset in elements) of a float tensor of the given dtype, as float.
inline float load_float(const void* base, DType dtype, std::int64_t i) {
  switch (dtype) {
    case DType::float16:
      return fp16_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::bfloat16:
      return bf16_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::float32:
      return static_cast<const float*>(base)[i];
    case DType::int32:
      return static_cast<float>(static_cast<const std::int32_t*>(base)[i]);
    case DType::boolean:
      return static_cast<const std::uint8_t*>(base)[i] != 0 ? 1.f : 0.f;
  }
  return 0.f;
}

inline void store_float(void* base, DType dtype, std::int64_t i, float value) {
  switch (dtype) {
    case DType::float16:
      static_cast<std::uint16_t*>(base)[i] = float_to_fp16(value);
      return;
    case DType::bfloat16:
      static_cast<std::uint16_t*>(base)[i] = float_to_bf16(value);
      return;
    case DType::float32:
      static_cast<float*>(base)[i] = value;
      return;
    case DType::int32:
      static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(value);
      return;
    case DType::boolean:
      static_cast<std::uint8_t*>(base)[i] = value != 0.f ? 1 : 0;
      return;
  }
}

// Rounds a float to the precision of dtype (identity for fp32).
inline float round_to(DType dtype, float value) {
  switch (dtype) {
    case DType::float16:
      return fp16_to_float(float_to_fp16(value));
    case DType::bfloat16:
      return bf16_to_float(float_to_bf16(value));
    default:
      return value;
  }
}

// The spacing of dtype's representable numbers at magnitude x (one unit in the last place; the
// subnormal spacing below the normal range). The result checks add half of it to the gradients'
// bound: an output rounded to dtype can differ from the emulation's by one such step.
inline double spacing_at(DType dtype, double x) {
  int mantissa_bits = 23, min_exponent = -126;
  if (dtype == DType::float16) mantissa_bits = 10, min_exponent = -14;
  if (dtype == DType::bfloat16) mantissa_bits = 7;
  const int exponent = x > 0 ? std::max(std::ilogb(x), min_exponent) : min_exponent;
  return std::ldexp(1.0, exponent - mantissa_bits);
}

}  // namespace flashattn::detail
