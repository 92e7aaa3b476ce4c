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

FLASHATTN_HD KeyRange visible_keys(const MaskParams& mask, std::int64_t i, std::int64_t sq, std::int64_t sk) {
  const std::int64_t diagonal = i + sk - sq;
  std::int64_t first = mask.window_left < 0 ? 0 : diagonal - mask.window_left;
  std::int64_t last = mask.window_right < 0 ? sk - 1 : diagonal + mask.window_right;
  if (first < 0) first = 0;
  if (last > sk - 1) last = sk - 1;
  return KeyRange{first, last};
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
