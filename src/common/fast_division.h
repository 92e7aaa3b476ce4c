// Division by a divisor fixed for the whole launch, as a multiply-high and a shift
// (a 32-bit integer division is ~20 SASS instructions of dependent work). Used by the
// sm90 tile decode (cuda/sm90/tile_scheduler.h runs it in every consumer thread once
// per tile, on the path from the previous tile's last P V to the next tile's first S)
// and by the sm80 paged K/V loader (cuda/sm80/paged_kv.h: a row's page is its
// position divided by the page size, once per copied row).
//
// For 0 <= n < 2^31 and a divisor d >= 1 with l = ceil(log2 d), m = ceil(2^(31+l) / d):
// n / d = floor(n m / 2^(31+l)) exactly. With m d = 2^(31+l) + e, 0 <= e < d <= 2^l,
// n m / 2^(31+l) = n / d + n e / (d 2^(31+l)), and the second term is below 1 / d
// because n e < 2^31 2^l; adding less than 1 / d to n / d never crosses the next
// integer. m < 2^32 (m = 2^31 when d is a power of two), and 2n < 2^32, so the
// product's bits 31+l.. are umulhi(2n, m) >> l.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace flashattn::detail {

struct FastDivisor {
  std::uint32_t multiplier = 1u << 31;  // the divisor 1 by default
  std::uint32_t shift = 0;
};

// Host side: the constants for divisor d (1 <= d < 2^31).
inline FastDivisor make_fast_divisor(int d) {
  std::uint32_t l = 0;
  while ((std::uint64_t{1} << l) < static_cast<std::uint64_t>(d)) ++l;
  const std::uint64_t numerator = std::uint64_t{1} << (31 + l);
  FastDivisor f;
  f.multiplier = static_cast<std::uint32_t>((numerator + static_cast<std::uint64_t>(d) - 1) / d);
  f.shift = l;
  return f;
}

// n / d for 0 <= n < 2^31 (tile indices and their parts, key positions). The host computes the
// same bits (tests and the host's plans of the sm90 tile order).
FLASHATTN_HD int fast_divide(int n, FastDivisor f) {
#if defined(__CUDA_ARCH__)
  return static_cast<int>(__umulhi(static_cast<std::uint32_t>(n) << 1, f.multiplier) >> f.shift);
#else
  const std::uint64_t product = static_cast<std::uint64_t>(static_cast<std::uint32_t>(n) << 1) * f.multiplier;
  return static_cast<int>(static_cast<std::uint32_t>(product >> 32) >> f.shift);
#endif
}

}  // namespace flashattn::detail
