// Dropout on the probability tile, with the Philox stream of common/philox.h,
// so the GPU drops exactly the elements (b, head, i, j) the CPU backends drop.
// One Philox call yields the draws of 8 adjacent keys of one row.
//
// The forward (apply_dropout, query rows x key columns): a lane needs 2 of a call's
// draws per n-tile and row (columns 2*(lane%4) + {0,1}), i.e. 32-bit word lane%4,
// and the 4 lanes of a quad need the same call. So each lane of a quad computes a
// different call of every 4 and a 4x4 transpose across the quad (two xor-shuffle
// stages) hands each lane its word of all 4: a quarter of the Philox work of
// computing every call in every lane (v7; the Philox rounds were most of the
// dropout kernel's time).
//
// The backward's transposed tiles (key rows, query columns; both backends'
// S^T / dP^T and the mma.sync / wgmma accumulator layouts alike): a call's 8 keys
// are the rows lane/4 = 0..7 of 8 lanes. Computing each call in every lane that
// needs one of its draws would be 8x the Philox work (cuda_sm80's backward did so
// until session 67, at ~0.25x FlashAttention 2's speed with dropout). Instead the
// 8 lanes sharing calls compute one each in turn, reduce each draw to its drop bit
// and exchange the bits as a transpose across the lanes (transpose_lane_fields):
// 4 calls a thread per 16 x 64 tile, 3 shuffles. The Hopper dQ pass's tiles (query
// rows, key columns) exchange within the quad the same way (dropout_bits_rows), and so
// does the Hopper forward, its bits laid out for packed pairs (dropout_bits_pairs).
#pragma once

#include <cstdint>

#include "common/philox.h"

namespace flashattn::detail::cuda_sm80 {

// Lane q (of its quad) holds a[w] = word w of call q; afterwards a[c] = word q of call c.
__device__ __forceinline__ void quad_transpose(std::uint32_t (&a)[4], int quad) {
#pragma unroll
  for (int bit = 0; bit < 2; ++bit) {
    const int mask = 1 << bit;
    const bool high = (quad & mask) != 0;
#pragma unroll
    for (int other = 0; other < 2; ++other) {
      // The pair of positions that differ in `bit`, with the other index bit equal to `other`.
      const int low_index = bit == 0 ? 2 * other : other;
      const int high_index = low_index + mask;
      // Send the element whose `bit` differs from this lane's; receive the partner's into it.
      const std::uint32_t send = high ? a[low_index] : a[high_index];
      const std::uint32_t received = __shfl_xor_sync(0xffffffffu, send, mask);
      if (high) {
        a[low_index] = received;
      } else {
        a[high_index] = received;
      }
    }
  }
}

template <int kNTiles>
__device__ __forceinline__ void apply_dropout(float (&p)[kNTiles][4], const PhiloxKeys& keys,
                                              std::uint64_t offset, std::uint32_t threshold,
                                              std::int64_t batch_head, std::int64_t i0, int n0, int lane) {
  // Calls c = r * kNTiles + n (row i0 + 8r, keys n0 + 8n ..), in groups of 4.
  constexpr int kCalls = 2 * kNTiles;
  static_assert(kCalls % 4 == 0, "n-tiles come in pairs");
  const int quad = lane & 3;
#pragma unroll
  for (int group = 0; group < kCalls / 4; ++group) {
    const int mine = 4 * group + quad;  // the call this lane computes
    const Philox4 draws =
        dropout_draws_keyed(keys, offset, batch_head, i0 + 8 * (mine / kNTiles), n0 + 8 * (mine % kNTiles));
    std::uint32_t words[4] = {draws.x, draws.y, draws.z, draws.w};
    quad_transpose(words, quad);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int call = 4 * group + c, r = call / kNTiles, n = call % kNTiles;
      if ((words[c] & 0xFFFFu) < threshold) p[n][2 * r] = 0.f;
      if ((words[c] >> 16) < threshold) p[n][2 * r + 1] = 0.f;
    }
  }
}

// Bit pos[k] set where draw k (key 8 (j / 8) + k of the call's row) is dropped, below the threshold;
// thresh_high = the threshold << 16 (a draw's 16 bits compared in the high half of a word: the high draw in
// place, the low one shifted up).
__device__ __forceinline__ std::uint32_t dropout_drop_bits(const Philox4& draws, std::uint32_t thresh_high,
                                                           const int (&pos)[8]) {
  const std::uint32_t words[4] = {draws.x, draws.y, draws.z, draws.w};
  std::uint32_t bits = 0;
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    bits |= (words[w] << 16) < thresh_high ? 1u << pos[2 * w] : 0u;
    bits |= words[w] < thresh_high ? 1u << pos[2 * w + 1] : 0u;
  }
  return bits;
}

// The fields k < kFields whose index has bit `b` clear; field k is kField0 << (k kStride).
template <int kFields, int kStride, std::uint32_t kField0>
__device__ __forceinline__ constexpr std::uint32_t fields_with_bit_clear(int b) {
  std::uint32_t mask = 0;
  for (int k = 0; k < kFields; ++k) {
    if (((k >> b) & 1) == 0) mask |= kField0 << (k * kStride);
  }
  return mask;
}

// kLanes lanes (`index` this lane's place among them; its partners kLaneStride << b lanes apart) each hold
// kLanes fields, field k (kField0 << k kStride: by default kStride bits from bit k kStride) meant for lane k.
// Afterwards field k of lane `index` is what lane k held in field `index`: one xor shuffle per bit of the
// lane index, each swapping the off-diagonal halves of 2 x 2 blocks (a field moves at the stages where its
// lane's and its index's bits differ, flipping both).
template <int kLanes, int kStride, int kLaneStride, std::uint32_t kField0 = (1u << kStride) - 1u>
__device__ __forceinline__ std::uint32_t transpose_lane_fields(std::uint32_t word, int index) {
  static_assert(
      kStride < 32 && (static_cast<std::uint64_t>(kField0) << ((kLanes - 1) * kStride)) < (1ull << 32),
      "every field within a 32-bit word");
#pragma unroll
  for (int b = 0; (1 << b) < kLanes; ++b) {
    const std::uint32_t low = fields_with_bit_clear<kLanes, kStride, kField0>(b);
    const int shift = kStride << b;
    const std::uint32_t other = __shfl_xor_sync(0xffffffffu, word, kLaneStride << b);
    word = ((index >> b) & 1) == 0 ? (word & low) | ((other & low) << shift)
                                   : (word & ~low) | ((other & ~low) >> shift);
  }
  return word;
}

// The backward's transposed tiles: a warp's 16 key rows (this lane's: 8 key_group + lane / 4, and + 8) by
// 8 kColumnGroups query columns; element (c, r) (accumulator element 4 c + r: key + 8 (r / 2), query
// i_first + 8 c + r % 2, i_first = the tile's first column + 2 (lane % 4)). The 8 lanes of one lane % 4 need
// the 4 kColumnGroups calls L = (h kColumnGroups + c) 2 + q (query i_first + 8 c + q, keys of group
// key_group + h), one draw of each; lane s = lane / 4 computes L = kCalls s + v, v < kCalls =
// kColumnGroups / 2, whose draw k goes to bit v of field k (lane k's). After the transpose bit L of the
// result holds call L's draw for this lane: dropout_transposed_bit.
template <int kColumnGroups>
__device__ __forceinline__ constexpr int dropout_transposed_bit(int c, int r) {
  return ((r / 2) * kColumnGroups + c) * 2 + r % 2;
}
template <int kColumnGroups>
__device__ __forceinline__ std::uint32_t dropout_bits_transposed(const PhiloxKeys& keys, std::uint64_t offset,
                                                                 std::uint32_t threshold,
                                                                 std::int64_t batch_head, int i_first,
                                                                 int key_group, int lane) {
  static_assert(kColumnGroups == 2 || kColumnGroups == 4 || kColumnGroups == 8, "16-64 query columns");
  constexpr int kCalls = kColumnGroups / 2;
  const int s = lane / 4;
  std::uint32_t word = 0;
#pragma unroll
  for (int v = 0; v < kCalls; ++v) {
    const int call = kCalls * s + v;
    const int q = call % 2, c = (call / 2) % kColumnGroups, h = call / (2 * kColumnGroups);
    int pos[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) pos[k] = kCalls * k + v;
    word |= dropout_drop_bits(
        dropout_draws_keyed(keys, offset, batch_head, i_first + 8 * c + q, 8 * (key_group + h)),
        threshold << 16, pos);
  }
  return transpose_lane_fields<8, kCalls, 4>(word, s);
}

// The Hopper dQ pass's tiles: query rows row and row + 8 (row = ... + lane / 4) by 64 key columns (element
// 4 c + r: row + 8 (r / 2), key 8 key_group + 8 c + 2 (lane % 4) + r % 2). The 4 lanes of a quad need the 16
// calls L = 2 c + h (row + 8 h, the keys of group c), two draws of each; lane t = lane % 4 computes L = 4 t +
// v, v < 4, whose draws 2 t' + e go to bits 2 v + e of field t' (8 bits, lane t''s). After the transpose bit
// 8 t + 2 v + e = 2 L + e = 4 c + r of the result marks element 4 c + r dropped. (The Hopper forward's tiles
// are the same; its form, dropout_bits_pairs below, lays the bits out for packed pairs.)
__device__ __forceinline__ std::uint32_t dropout_bits_rows(const PhiloxKeys& keys, std::uint64_t offset,
                                                           std::uint32_t threshold, std::int64_t batch_head,
                                                           int row, int key_group, int lane) {
  constexpr int kCalls = 4;
  constexpr int kBits = 2 * kCalls;
  const int t = lane % 4;
  std::uint32_t word = 0;
#pragma unroll
  for (int v = 0; v < kCalls; ++v) {
    const int call = kCalls * t + v, c = call / 2, h = call % 2;
    int pos[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) pos[k] = kBits * (k / 2) + 2 * v + k % 2;
    word |= dropout_drop_bits(dropout_draws_keyed(keys, offset, batch_head, row + 8 * h, 8 * (key_group + c)),
                              threshold << 16, pos);
  }
  return transpose_lane_fields<4, kBits, 1>(word, t);
}

// The Hopper forward's form of dropout_bits_rows (the same tile and calls, from the stream's key schedule,
// dropout_keys), laid out for its packed probabilities: bits L and L + 16 of the result mark the two elements
// 4 c + r, r = 2 h + e (e = 0, 1), of call L = 2 c + h, i.e. the pair of accumulator elements x, x + 1 (x
// even) that one register of P's A fragment packs sits at bits x / 2 and x / 2 + 16 (consumer.h
// drop_probabilities). Each Philox word (two draws) is compared in three instructions (dropout_draws_below,
// common/philox.h); the comparisons land at bits 15 and 31, one shift places both.
template <int kColumnGroups>
__device__ __forceinline__ std::uint32_t dropout_bits_pairs(const PhiloxKeys& keys, std::uint64_t offset,
                                                            std::uint32_t threshold2,
                                                            std::uint32_t threshold2_low15,
                                                            std::int64_t batch_head, int row, int key_group,
                                                            int lane) {
  static_assert(kColumnGroups % 2 == 0 && kColumnGroups >= 2 && kColumnGroups <= 8, "16-64 key columns");
  constexpr int kCalls = kColumnGroups / 2;
  const int t = lane % 4;
  std::uint32_t word = 0;
#pragma unroll
  for (int v = 0; v < kCalls; ++v) {
    const int call = kCalls * t + v, c = call / 2, h = call % 2;
    const Philox4 draws = dropout_draws_keyed(keys, offset, batch_head, row + 8 * h, 8 * (key_group + c));
    const std::uint32_t words[4] = {draws.x, draws.y, draws.z, draws.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      // Word w holds draws 2 w, 2 w + 1: keys 8 c + 2 w + e, lane w's (field w at kCalls w + v, + 16 for e).
      const std::uint32_t below = dropout_draws_below(words[w], threshold2, threshold2_low15);
      const int pos = kCalls * w + v;
      word |= (below >> (15 - pos)) & (0x10001u << pos);
    }
  }
  constexpr std::uint32_t kField0 = ((1u << kCalls) - 1u) * 0x10001u;
  return transpose_lane_fields<4, kCalls, 1, kField0>(word, t);
}

}  // namespace flashattn::detail::cuda_sm80
