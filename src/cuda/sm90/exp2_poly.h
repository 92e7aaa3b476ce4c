// 2^x computed on the FMA and integer pipes instead of the MUFU (special-function) unit.
//
// Why: at head dim 64 the forward kernel needs one exponential per score, and MUFU.EX2
// runs 16 per clock per SM, which takes exactly as long per key block as the two GEMMs
// on the tensor cores (docs/kernel-notes-sm90.md, "Where the time goes"). Computing a
// fraction of the exponentials here, on pipes the softmax leaves partly idle, would move
// that wall if the MUFU were the bound (FlashAttention 4's idea; this is our own
// derivation). On an H200 it is not: every fraction measured slower (forward_config.h
// FLASHATTN_SM90_EXP2_POLY_*, off by default; docs/performance-sm90.md, session 5).
//
// How: 2^x = 2^j * 2^f with j = floor(x) and f = x - j in [0, 1).
//   - j comes from one rounded-down addition of 1.5 * 2^23: the sum's unit in the last
//     place is 1, so its low mantissa bits hold j as a two's-complement integer, and
//     subtracting the constant again gives j as a float (exact); f = x - j is exact.
//   - 2^f ~ p(f) = 1 + c1 f + ... + cn f^n, a minimax polynomial for the *relative*
//     error on [0, 1) with p(0) = 1 exactly (coefficients from a Remez exchange,
//     rounded to float; the bounds below were measured on those float coefficients,
//     Horner's scheme in fp32 FMAs, tests/exp2_poly_test.cpp).
//   - 2^j is applied by adding j << 23 to p's bits (the exponent field), an integer
//     shift-add. The sum's low mantissa bits shifted up by 23 are exactly j << 23: the
//     constant's own bits (0x4B400000) all leave the word.
// Inputs: x is clamped to >= -127 first. Then -inf (a masked score) and every
// x <= -127 give j = -127, f = 0, p = 1 = 0x3F800000, and 0x3F800000 + (-127 << 23) is
// +0.0 exactly, as ex2.approx gives. For -127 < x < -126 the result lands in the
// subnormal range with absolute error below 2^-127 (relative error unbounded there,
// harmless next to a row sum >= 1). For -126 <= x < 128 the relative error is the
// polynomial's. A NaN x gives 0 (fmaxf drops NaN), where ex2.approx gives NaN.
// Cost per element: FMNMX, FADD.RM, 2 FADD, n FFMA, one shift-add: n + 5 instructions,
// none of them on the MUFU.
//
// Degree per element type (the probabilities are rounded to the input type for the
// P V GEMM; their fp32 values go into the row sums):
//   3: max relative error 8.6e-5 (2^-13.5), 1/23 of bf16's half unit in the last place
//      (2^-9); the bf16 kernels use it.
//   4: max relative error 3.0e-6 (2^-18.4), 1/80 of fp16's half ulp (2^-12); degree 3
//      would be a third of it, not "well under", so the fp16 kernels use 4.
//
// Host and device compute the same bits: the device rounds the addition down, the host
// takes std::floor (the same j) and forms the same sum; both use correctly rounded
// fused multiply-adds. So the host test checks the arithmetic the kernels run.
#pragma once

#include <cmath>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

#include "common/host_device.h"

namespace flashattn::detail {

template <int kDegree>
struct Exp2Poly;

// p(f) = 1 + f (c1 + f (c2 + f c3)) on [0, 1).
template <>
struct Exp2Poly<3> {
  static constexpr float kC1 = 0x1.63e658p-1f;
  static constexpr float kC2 = 0x1.d2378ap-3f;
  static constexpr float kC3 = 0x1.3baaa6p-4f;
  static constexpr double kMaxRelativeError = 8.6e-5;  // measured 8.57e-5
};

// p(f) = 1 + f (c1 + f (c2 + f (c3 + f c4))) on [0, 1).
template <>
struct Exp2Poly<4> {
  static constexpr float kC1 = 0x1.62d6c6p-1f;
  static constexpr float kC2 = 0x1.ee245p-3f;
  static constexpr float kC3 = 0x1.abf868p-5f;
  static constexpr float kC4 = 0x1.b7f73p-7f;
  static constexpr double kMaxRelativeError = 3.0e-6;  // measured 2.96e-6
};

// 1.5 * 2^23: x + this, rounded down, is 1.5 * 2^23 + floor(x) for |x| < 2^22.
inline constexpr float kExp2PolyShifter = 12582912.f;
// Inputs at or below this give exactly +0.
inline constexpr float kExp2PolyLowest = -127.f;

template <int kDegree>
FLASHATTN_HD float exp2_poly(float x) {
  static_assert(kDegree == 3 || kDegree == 4, "exp2_poly: degree 3 or 4");
  using C = Exp2Poly<kDegree>;
  x = fmaxf(x, kExp2PolyLowest);
#if defined(__CUDA_ARCH__)
  const float shifted = __fadd_rd(x, kExp2PolyShifter);
  const float j = __fsub_rn(shifted, kExp2PolyShifter);
  const std::uint32_t shifted_bits = __float_as_uint(shifted);
#else
  const float j = std::floor(x);
  const std::uint32_t shifted_bits = std::bit_cast<std::uint32_t>(kExp2PolyShifter + j);
#endif
  const float f = x - j;
  float p;
  if constexpr (kDegree == 3) {
    p = fmaf(fmaf(fmaf(C::kC3, f, C::kC2), f, C::kC1), f, 1.f);
  } else {
    p = fmaf(fmaf(fmaf(fmaf(C::kC4, f, C::kC3), f, C::kC2), f, C::kC1), f, 1.f);
  }
#if defined(__CUDA_ARCH__)
  return __uint_as_float(__float_as_uint(p) + (shifted_bits << 23));
#else
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(p) + (shifted_bits << 23));
#endif
}

}  // namespace flashattn::detail
