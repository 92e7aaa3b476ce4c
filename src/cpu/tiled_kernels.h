// Vectorised fp32 building blocks of the CPU tiled backend.
//
// Everything here is written once with GCC generic vectors (vector_size) and
// instantiated per instruction set: the forward/backward tile functions are
// compiled three times with [[gnu::target]] (AVX-512, AVX2+FMA, baseline
// x86-64) and [[gnu::flatten]], which inlines these templates into each copy so
// that a generic vector of 16 floats becomes one zmm, two ymm or four xmm
// registers. The library itself is built without -march, so it runs on any
// x86-64; the best copy is picked at run time (tiled.h, detect_isa).
//
// One GEMM shape serves every product of the algorithm (see gemm_bcast): one
// operand is streamed as whole vectors along the output's contiguous dimension,
// the other is read one scalar at a time and broadcast. Choosing which operand
// is broadcast lets QK^T, PV, dV, dP, dK and dQ all run on fp32 tiles in their
// natural layouts, with only Q and dO ever transposed (once per query tile).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/numeric.h"

// Generic vectors are passed by value between always-inlined helpers only; the
// ABI note GCC prints for that (-Wpsabi) concerns calls that never happen. Left
// off for the rest of the including file (only cpu/tiled_*.cpp include this):
// the notes are emitted where the templates are instantiated.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace flashattn::detail::cpu_tiled {

#define TILED_INLINE inline __attribute__((always_inline))

typedef float tiled_f32x4 __attribute__((vector_size(16)));
typedef float tiled_f32x8 __attribute__((vector_size(32)));
typedef float tiled_f32x16 __attribute__((vector_size(64)));
typedef std::int32_t tiled_i32x4 __attribute__((vector_size(16)));
typedef std::int32_t tiled_i32x8 __attribute__((vector_size(32)));
typedef std::int32_t tiled_i32x16 __attribute__((vector_size(64)));
typedef std::uint32_t tiled_u32x16 __attribute__((vector_size(64)));
typedef std::uint16_t tiled_u16x16 __attribute__((vector_size(32)));

template <class V>
struct IntOf;
template <>
struct IntOf<tiled_f32x4> {
  using type = tiled_i32x4;
};
template <>
struct IntOf<tiled_f32x8> {
  using type = tiled_i32x8;
};
template <>
struct IntOf<tiled_f32x16> {
  using type = tiled_i32x16;
};

template <class V>
inline constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(float));

// Per-ISA choices: the vector type and the GEMM register block (RM broadcast
// rows x CN vectors of accumulators), sized to the register file: 32 zmm on
// AVX-512 (24 accumulators), 16 ymm/xmm otherwise (12 and 8).
struct ArchAvx512 {
  using V = tiled_f32x16;
  static constexpr int kRows = 6, kVecs = 4;
};
struct ArchAvx2 {
  using V = tiled_f32x8;
  static constexpr int kRows = 6, kVecs = 2;
};
struct ArchBaseline {
  using V = tiled_f32x4;
  static constexpr int kRows = 4, kVecs = 2;
};

template <class V>
TILED_INLINE V vload(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
TILED_INLINE void vstore(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
template <class V>
TILED_INLINE V vsplat(float x) {
  return V{} + x;
}

// e^x in fp32, branch-free so it vectorises: x = n ln2 + r with |r| <= ln2/2,
// e^r by Cephes' degree-7 polynomial (about 1 ulp), 2^n built in the exponent
// field. Results below e^-87.3 (the smallest normal float) flush to 0; the
// callers only exponentiate x <= 0 relative to a running max, where such terms
// are far below the rounding of the sum they join. -inf gives exactly 0.
template <class V>
TILED_INLINE V vexp(V x) {
  using I = typename IntOf<V>::type;
  const auto underflow = x < vsplat<V>(-87.33f);
  x = x < vsplat<V>(-87.33f) ? vsplat<V>(-87.33f) : x;
  x = x > vsplat<V>(88.3f) ? vsplat<V>(88.3f) : x;
  // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer in the
  // default rounding mode, without needing SSE4.1's roundps on baseline x86-64.
  const V magic = vsplat<V>(12582912.f);
  const V n = (x * 1.44269504088896341f + magic) - magic;
  V r = x - n * 0.693359375f;  // ln 2 split in two so n * ln2_hi is exact
  r = r - n * -2.12194440e-4f;
  V poly = vsplat<V>(1.9875691500e-4f);
  poly = poly * r + 1.3981999507e-3f;
  poly = poly * r + 8.3334519073e-3f;
  poly = poly * r + 4.1665795894e-2f;
  poly = poly * r + 1.6666665459e-1f;
  poly = poly * r + 5.0000001201e-1f;
  poly = poly * (r * r) + r + 1.f;
  const I exponent = (__builtin_convertvector(n, I) + 127) << 23;
  // A C-style cast between equally sized generic vectors reinterprets the bits.
  const V result = poly * (V)exponent;
  return underflow ? V{} : result;
}

// tanh in fp32 (Cephes' tanhf scheme, about 2 ulp), branch-free: an odd
// polynomial below |x| = 0.625, 1 - 2 / (e^{2|x|} + 1) above (where there is
// no cancellation), the sign restored last.
template <class V>
TILED_INLINE V vtanh(V x) {
  const V ax = x < V{} ? -x : x;
  const V z = x * x;
  V poly = vsplat<V>(-5.70498872745e-3f);
  poly = poly * z + 2.06390887954e-2f;
  poly = poly * z - 5.37397155531e-2f;
  poly = poly * z + 1.33314422036e-1f;
  poly = poly * z - 3.33332819422e-1f;
  const V small = poly * z * x + x;
  V large = 1.f - 2.f / (vexp(ax + ax) + 1.f);
  large = x < V{} ? -large : large;
  return ax > vsplat<V>(0.625f) ? large : small;
}

// ---------------------------------------------------------------------------
// C[m][n] (+)= sum_k A(m, k) * B[k][n]   for m < M, n < N (N a multiple of the
// vector width), with A(m, k) = a[m * a_m + k * a_k] read as broadcast scalars
// and B, C row-major (leading dimensions ldb, ldc).

template <class V, int R, int CV>
TILED_INLINE void gemm_micro(int K, const float* __restrict a, std::ptrdiff_t a_m, std::ptrdiff_t a_k,
                             const float* __restrict b, std::ptrdiff_t ldb, float* __restrict c,
                             std::ptrdiff_t ldc, bool accumulate) {
  constexpr int W = kLanes<V>;
  V acc[R][CV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < CV; ++v) acc[r][v] = accumulate ? vload<V>(c + r * ldc + v * W) : V{};
  for (int k = 0; k < K; ++k) {
    V bv[CV];
    for (int v = 0; v < CV; ++v) bv[v] = vload<V>(b + k * ldb + v * W);
    for (int r = 0; r < R; ++r) {
      const float av = a[r * a_m + k * a_k];
      for (int v = 0; v < CV; ++v) acc[r][v] += av * bv[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < CV; ++v) vstore(c + r * ldc + v * W, acc[r][v]);
}

// All M rows for one column block of CV vectors: full RM-row blocks, then the
// remainder with a block of exactly that many rows (no padding of A or C).
template <class V, int RM, int CV>
TILED_INLINE void gemm_column_block(int M, int K, const float* a, std::ptrdiff_t a_m, std::ptrdiff_t a_k,
                                    const float* b, std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc,
                                    bool accumulate) {
  int m = 0;
  for (; m + RM <= M; m += RM)
    gemm_micro<V, RM, CV>(K, a + m * a_m, a_m, a_k, b, ldb, c + m * ldc, ldc, accumulate);
  const int rest = M - m;
  const float* am = a + m * a_m;
  float* cm = c + m * ldc;
  if constexpr (RM > 1) {
    if (rest == 1) gemm_micro<V, 1, CV>(K, am, a_m, a_k, b, ldb, cm, ldc, accumulate);
  }
  if constexpr (RM > 2) {
    if (rest == 2) gemm_micro<V, 2, CV>(K, am, a_m, a_k, b, ldb, cm, ldc, accumulate);
  }
  if constexpr (RM > 3) {
    if (rest == 3) gemm_micro<V, 3, CV>(K, am, a_m, a_k, b, ldb, cm, ldc, accumulate);
  }
  if constexpr (RM > 4) {
    if (rest == 4) gemm_micro<V, 4, CV>(K, am, a_m, a_k, b, ldb, cm, ldc, accumulate);
  }
  if constexpr (RM > 5) {
    if (rest == 5) gemm_micro<V, 5, CV>(K, am, a_m, a_k, b, ldb, cm, ldc, accumulate);
  }
  static_assert(RM <= 6, "extend the remainder cases");
}

template <class Arch>
TILED_INLINE void gemm_bcast(int M, int N, int K, const float* a, std::ptrdiff_t a_m, std::ptrdiff_t a_k,
                             const float* b, std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc,
                             bool accumulate) {
  using V = typename Arch::V;
  constexpr int W = kLanes<V>, RM = Arch::kRows, CV = Arch::kVecs;
  int n = 0;
  for (; n + CV * W <= N; n += CV * W)
    gemm_column_block<V, RM, CV>(M, K, a, a_m, a_k, b + n, ldb, c + n, ldc, accumulate);
  const int rest = (N - n) / W;
  if constexpr (CV > 1) {
    if (rest == 1) gemm_column_block<V, RM, 1>(M, K, a, a_m, a_k, b + n, ldb, c + n, ldc, accumulate);
  }
  if constexpr (CV > 2) {
    if (rest == 2) gemm_column_block<V, RM, 2>(M, K, a, a_m, a_k, b + n, ldb, c + n, ldc, accumulate);
  }
  if constexpr (CV > 3) {
    if (rest == 3) gemm_column_block<V, RM, 3>(M, K, a, a_m, a_k, b + n, ldb, c + n, ldc, accumulate);
  }
  static_assert(CV <= 4, "extend the remainder cases");
}

// ---------------------------------------------------------------------------
// Sum of the lanes, halving the vector each step.
TILED_INLINE float vsum(tiled_f32x4 v) {
  const tiled_f32x4 pairs = v + __builtin_shufflevector(v, v, 2, 3, 0, 1);
  return pairs[0] + pairs[1];
}
TILED_INLINE float vsum(tiled_f32x8 v) {
  return vsum(__builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7));
}
TILED_INLINE float vsum(tiled_f32x16 v) {
  return vsum(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
              __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
}

// St[j][r] = sum_c K[j][c] Q[r][c] for j < cols, r < R (K: ldk apart, Q: ldq
// apart, both zero-padded to n, a multiple of the vector width), as dot
// products along c, two keys at a time. For a handful of rows this beats
// gemm_bcast, which spends a whole vector of (mostly padding) rows per key.
template <class Arch, int R>
TILED_INLINE void dot_scores(int cols, int n, const float* __restrict k, std::ptrdiff_t ldk,
                             const float* __restrict q, std::ptrdiff_t ldq, float* __restrict s,
                             std::ptrdiff_t lds) {
  using V = typename Arch::V;
  constexpr int W = kLanes<V>;
  int j = 0;
  for (; j + 2 <= cols; j += 2) {
    V acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = V{};
    for (int c = 0; c < n; c += W) {
      const V k0 = vload<V>(k + j * ldk + c), k1 = vload<V>(k + (j + 1) * ldk + c);
      for (int r = 0; r < R; ++r) {
        const V qv = vload<V>(q + r * ldq + c);
        acc0[r] += k0 * qv;
        acc1[r] += k1 * qv;
      }
    }
    for (int r = 0; r < R; ++r) {
      s[j * lds + r] = vsum(acc0[r]);
      s[(j + 1) * lds + r] = vsum(acc1[r]);
    }
  }
  for (; j < cols; ++j) {
    V acc[R];
    for (int r = 0; r < R; ++r) acc[r] = V{};
    for (int c = 0; c < n; c += W) {
      const V kv = vload<V>(k + j * ldk + c);
      for (int r = 0; r < R; ++r) acc[r] += kv * vload<V>(q + r * ldq + c);
    }
    for (int r = 0; r < R; ++r) s[j * lds + r] = vsum(acc[r]);
  }
}

// ---------------------------------------------------------------------------
// Rows of the input dtype to fp32. Exact conversions, so they agree bit for bit
// with numeric.h; the bulk is vectorised, the tail (never over-reading the
// caller's tensor) uses numeric.h directly.

TILED_INLINE void bf16_row_to_float(const std::uint16_t* __restrict src, float* __restrict dst,
                                    std::int64_t n) {
  std::int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    tiled_u16x16 h;
    std::memcpy(&h, src + c, sizeof h);
    const tiled_u32x16 bits = __builtin_convertvector(h, tiled_u32x16) << 16;
    std::memcpy(dst + c, &bits, sizeof bits);
  }
  for (; c < n; ++c) dst[c] = bf16_to_float(src[c]);
}

// fp16 -> fp32 by moving the exponent/mantissa field and multiplying by 2^112,
// which rebiases normals and turns fp16 subnormals into the right fp32 values
// exactly; inf/NaN (exponent all ones) are patched afterwards.
TILED_INLINE void fp16_row_to_float(const std::uint16_t* __restrict src, float* __restrict dst,
                                    std::int64_t n) {
  std::int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    tiled_u16x16 h;
    std::memcpy(&h, src + c, sizeof h);
    const tiled_u32x16 x = __builtin_convertvector(h, tiled_u32x16);
    const tiled_u32x16 sign = (x & 0x8000u) << 16;
    const tiled_u32x16 magnitude = (x & 0x7FFFu) << 13;
    tiled_f32x16 value = (tiled_f32x16)magnitude * 0x1p112f;
    const tiled_u32x16 special = (x & 0x7C00u) == 0x7C00u;  // all ones where inf/NaN
    tiled_u32x16 bits = (tiled_u32x16)value;
    bits = (bits & ~special) | (special & (magnitude | 0x7F800000u));
    bits |= sign;
    std::memcpy(dst + c, &bits, sizeof bits);
  }
  for (; c < n; ++c) dst[c] = fp16_to_float(src[c]);
}

// Converts n elements and zero-fills dst up to n_padded.
TILED_INLINE void load_row(const void* src, DType dtype, float* __restrict dst, std::int64_t n,
                           std::int64_t n_padded) {
  switch (dtype) {
    case DType::float16:
      fp16_row_to_float(static_cast<const std::uint16_t*>(src), dst, n);
      break;
    case DType::bfloat16:
      bf16_row_to_float(static_cast<const std::uint16_t*>(src), dst, n);
      break;
    default:
      std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
      break;
  }
  for (std::int64_t c = n; c < n_padded; ++c) dst[c] = 0.f;
}

TILED_INLINE void store_row(void* dst, DType dtype, const float* __restrict src, std::int64_t n) {
  if (dtype == DType::float32) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  for (std::int64_t c = 0; c < n; ++c) store_float(dst, dtype, c, src[c]);
}

}  // namespace flashattn::detail::cpu_tiled
