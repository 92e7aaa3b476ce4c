// Which keys a query sees, and the score modifiers applied before masking.
// Shared by every backend so "visible" means one thing everywhere.
//
// Everything is bottom-right aligned: query i of a sequence with sq queries
// and sk keys sits at key position i + sk - sq (the last query sees the last
// key). Causal is the window (-1, 0).
#pragma once

#include <cmath>
#include <cstdint>

#include "common/host_device.h"

namespace flashattn::detail {

struct MaskParams {
  std::int64_t window_left = -1;   // -1: unbounded
  std::int64_t window_right = -1;  // -1: unbounded; 0 when causal
};

// Visible key range [first, last] (inclusive) of query i, clipped to [0, sk).
// Empty when first > last.
struct KeyRange {
  std::int64_t first;
  std::int64_t last;
  FLASHATTN_HD bool empty() const { return first > last; }
};

// The same range in any signed index type: GPU kernels whose lengths are int
// evaluate it per row in 32 bits (64-bit temporaries cost them registers);
// everything else goes through visible_keys below.
template <class Index>
struct BasicKeyRange {
  Index first;
  Index last;
};

template <class Index>
FLASHATTN_HD BasicKeyRange<Index> visible_keys_in(Index window_left, Index window_right, Index i, Index sq,
                                                  Index sk) {
  const Index diagonal = i + sk - sq;
  Index first = window_left < 0 ? Index{0} : diagonal - window_left;
  Index last = window_right < 0 ? sk - 1 : diagonal + window_right;
  if (first < 0) first = 0;
  if (last > sk - 1) last = sk - 1;
  return BasicKeyRange<Index>{first, last};
}

FLASHATTN_HD KeyRange visible_keys(const MaskParams& mask, std::int64_t i, std::int64_t sq, std::int64_t sk) {
  const BasicKeyRange<std::int64_t> r = visible_keys_in(mask.window_left, mask.window_right, i, sq, sk);
  return KeyRange{r.first, r.last};
}

FLASHATTN_HD bool key_visible(const MaskParams& mask, std::int64_t i, std::int64_t j, std::int64_t sq,
                              std::int64_t sk) {
  const KeyRange range = visible_keys(mask, i, sq, sk);
  return j >= range.first && j <= range.last;
}

// ALiBi bias for (i, j): -slope * |i + sk - sq - j|.
FLASHATTN_HD float alibi_bias(float slope, std::int64_t i, std::int64_t j, std::int64_t sq, std::int64_t sk) {
  const std::int64_t distance = i + sk - sq - j;
  return -slope * static_cast<float>(distance < 0 ? -distance : distance);
}

}  // namespace flashattn::detail
