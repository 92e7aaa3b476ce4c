// Counter-based random numbers for dropout.
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11). Being counter-based, the decision for one attention element is a pure
// function of (seed, offset, batch, head, i, j): every backend, tile shape and
// thread count drops exactly the same elements, and the backward pass
// regenerates the forward's mask without storing it.
//
// Element (b, head, i, j) of a problem with `heads` query heads:
//   counter = { j / 8, i, b * heads + head, offset mod 2^32 }
//   key     = { seed mod 2^32, (seed >> 32) xor (offset >> 32) }
//   r       = 16-bit lane (j mod 8) of the 128-bit Philox output (lane 2w is the low half of word w)
//   dropped  iff  r < dropout_threshold(p) = floor(p * 65536)
// One Philox call serves 8 adjacent keys, which is what a GPU thread tile wants.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace flashattn::detail {

struct Philox4 {
  std::uint32_t x, y, z, w;
};

FLASHATTN_HD void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(product >> 32);
  lo = static_cast<std::uint32_t>(product);
}

// Round multipliers and Weyl key increments from the Philox paper.
inline constexpr std::uint32_t kPhiloxMul0 = 0xD2511F53u, kPhiloxMul1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxWeyl0 = 0x9E3779B9u, kPhiloxWeyl1 = 0xBB67AE85u;

FLASHATTN_HD Philox4 philox_round(const Philox4& c, std::uint32_t key0, std::uint32_t key1) {
  std::uint32_t hi0, lo0, hi1, lo1;
  philox_mulhilo(kPhiloxMul0, c.x, hi0, lo0);
  philox_mulhilo(kPhiloxMul1, c.z, hi1, lo1);
  return Philox4{hi1 ^ c.y ^ key0, lo1, hi0 ^ c.w ^ key1, lo0};
}

FLASHATTN_HD Philox4 philox4x32_10(Philox4 counter, std::uint32_t key0, std::uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    counter = philox_round(counter, key0, key1);
    key0 += kPhiloxWeyl0;
    key1 += kPhiloxWeyl1;
  }
  return counter;
}

// philox4x32_10's key schedule for one dropout stream (round r's keys are round[2 r], round[2 r + 1]),
// computed once: a kernel that takes it as a parameter reads each round's keys as constant operands of its
// XORs instead of adding the Weyl increments in every call (20 integer adds a call).
struct PhiloxKeys {
  std::uint32_t round[20];
};

FLASHATTN_HD PhiloxKeys dropout_keys(std::uint64_t seed, std::uint64_t offset) {
  PhiloxKeys keys{};
  std::uint32_t key0 = static_cast<std::uint32_t>(seed);
  std::uint32_t key1 = static_cast<std::uint32_t>(seed >> 32) ^ static_cast<std::uint32_t>(offset >> 32);
  for (int r = 0; r < 10; ++r) {
    keys.round[2 * r] = key0;
    keys.round[2 * r + 1] = key1;
    key0 += kPhiloxWeyl0;
    key1 += kPhiloxWeyl1;
  }
  return keys;
}

FLASHATTN_HD std::uint32_t dropout_threshold(float p) {
  const float scaled = p * 65536.0f;
  return scaled <= 0.f ? 0u : (scaled >= 65535.f ? 65535u : static_cast<std::uint32_t>(scaled));
}

// The eight 16-bit draws for keys [8*(j/8), 8*(j/8) + 8) of one query row.
FLASHATTN_HD Philox4 dropout_draws(std::uint64_t seed, std::uint64_t offset, std::int64_t batch_head,
                                   std::int64_t i, std::int64_t j) {
  const Philox4 counter{static_cast<std::uint32_t>(j >> 3), static_cast<std::uint32_t>(i),
                        static_cast<std::uint32_t>(batch_head), static_cast<std::uint32_t>(offset)};
  return philox4x32_10(counter, static_cast<std::uint32_t>(seed),
                       static_cast<std::uint32_t>(seed >> 32) ^ static_cast<std::uint32_t>(offset >> 32));
}

// dropout_draws from the stream's key schedule (keys = dropout_keys(seed, offset)): the same draws.
FLASHATTN_HD Philox4 dropout_draws_keyed(const PhiloxKeys& keys, std::uint64_t offset,
                                         std::int64_t batch_head, std::int64_t i, std::int64_t j) {
  Philox4 counter{static_cast<std::uint32_t>(j >> 3), static_cast<std::uint32_t>(i),
                  static_cast<std::uint32_t>(batch_head), static_cast<std::uint32_t>(offset)};
  for (int r = 0; r < 10; ++r) counter = philox_round(counter, keys.round[2 * r], keys.round[2 * r + 1]);
  return counter;
}

// Both 16-bit draws of a Philox word against the threshold t at once: bit 15 set where the low draw is below
// t, bit 31 where the high one is (the other bits are not defined). threshold2 = t 0x10001, threshold2_low15
// = (t mod 0x8000) 0x10001. (a | 0x8000 per half) - (t mod 0x8000 per half) borrows within no half, and its
// bit 15 per half is clear where the draw's low 15 bits are below t's; a draw is below t iff the majority of
// (its bit 15 clear, t's bit 15 set, that borrow) holds. Three instructions on a GPU where two compares and
// the moves of their results were six or more (cuda_sm80::dropout_bits_pairs).
FLASHATTN_HD std::uint32_t dropout_draws_below(std::uint32_t word, std::uint32_t threshold2,
                                               std::uint32_t threshold2_low15) {
  const std::uint32_t borrow_free = (word | 0x80008000u) - threshold2_low15;
  return (~word & threshold2) | (~word & ~borrow_free) | (threshold2 & ~borrow_free);
}

FLASHATTN_HD std::uint32_t dropout_lane(const Philox4& draws, std::int64_t j) {
  const int lane = static_cast<int>(j & 7);
  const std::uint32_t word = lane < 2 ? draws.x : lane < 4 ? draws.y : lane < 6 ? draws.z : draws.w;
  return (lane & 1) ? (word >> 16) : (word & 0xFFFFu);
}

// batch_head = b * heads + head.
FLASHATTN_HD bool dropout_is_dropped(std::uint64_t seed, std::uint64_t offset, std::uint32_t threshold,
                                     std::int64_t batch_head, std::int64_t i, std::int64_t j) {
  return dropout_lane(dropout_draws(seed, offset, batch_head, i, j), j) < threshold;
}

}  // namespace flashattn::detail
