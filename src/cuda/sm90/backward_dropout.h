// Dropout in the Hopper backward (BackwardConfig::kGeneral): which of a thread's accumulator elements the
// forward dropped, as one bit each of a 32-bit word, from the Philox stream of common/philox.h (every backend
// drops the same elements (batch, head, i, j), so this backward pairs with any forward).
//
// One Philox call gives the draws of 8 adjacent keys of one query row. In the main kernel's transposed tiles
// (key rows, query columns) those 8 keys are the rows lane / 4 = 0..7 of 8 lanes, and in the dQ pass's
// tiles (query rows, key columns) the column pairs of the 4 lanes of a quad: computing each call in every
// lane that needs one of its draws would be 8x (4x) the Philox work, most of the step's instructions. So the
// lanes that share calls compute one each in turn, reduce each draw to its drop bit, and exchange the bits
// as a transpose across the lanes (transpose_lane_fields): 4 calls a thread a 64 x 64 step, 3 (2) shuffles.
#pragma once

#include <cstdint>

#include "common/philox.h"
#include "cuda/sm90/backward_config.h"

namespace flashattn::detail::cuda_sm90 {

// Bit k: whether key 8 (j / 8) + k of the call's row was dropped (its 16-bit draw below the threshold).
__device__ __forceinline__ std::uint32_t dropout_drop_bits(const Philox4& draws, std::uint32_t threshold) {
  const std::uint32_t words[4] = {draws.x, draws.y, draws.z, draws.w};
  std::uint32_t bits = 0;
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    bits |= ((words[w] & 0xFFFFu) < threshold ? 1u : 0u) << (2 * w);
    bits |= ((words[w] >> 16) < threshold ? 1u : 0u) << (2 * w + 1);
  }
  return bits;
}

// The fields k < kFields (of kBits bits, from bit 0) whose index has bit `b` clear.
template <int kFields, int kBits>
__device__ __forceinline__ constexpr std::uint32_t fields_with_bit_clear(int b) {
  std::uint32_t mask = 0;
  for (int k = 0; k < kFields; ++k) {
    if (((k >> b) & 1) == 0) mask |= ((1u << kBits) - 1u) << (k * kBits);
  }
  return mask;
}

// kLanes lanes (`index` this lane's place among them; its partners kLaneStride << b lanes apart) each hold
// kLanes fields of kBits bits (kLanes x kBits <= 32, from bit 0), field k meant for lane k. Afterwards field
// k of lane `index` is what lane k held in field `index`: one xor shuffle per bit of the lane index, each
// swapping the off-diagonal halves of 2 x 2 blocks (a field moves at the stages where its lane's and its
// index's bits differ, flipping both).
template <int kLanes, int kBits, int kLaneStride>
__device__ __forceinline__ std::uint32_t transpose_lane_fields(std::uint32_t word, int index) {
  static_assert(kLanes * kBits <= 32 && kBits < 32, "one field per lane in a 32-bit word");
#pragma unroll
  for (int b = 0; (1 << b) < kLanes; ++b) {
    const std::uint32_t low = fields_with_bit_clear<kLanes, kBits>(b);
    const int shift = kBits << b;
    const std::uint32_t other = __shfl_xor_sync(0xffffffffu, word, kLaneStride << b);
    word = ((index >> b) & 1) == 0 ? (word & low) | ((other & low) << shift)
                                   : (word & ~low) | ((other & ~low) >> shift);
  }
  return word;
}

// The main kernel's transposed tiles: a warp's 16 key rows (this thread's: key_group * 8 + lane / 4, and + 8)
// by 8 kColumnGroups query columns (element 4 c + r of an accumulator: key + 8 (r / 2), query
// i_first + 8 c + r % 2, i_first = the block's first column + 2 (lane % 4)). The 8 lanes of one lane % 4
// need the 4 kColumnGroups calls (c, q = r % 2, h = r / 2), one draw of each; lane g = lane / 4 computes
// kColumnGroups / 2 of them: at 8 groups (c = g, both q, both h), field bit 2 q + h; at 4 (the d >= 192
// consumers' 32 columns) (c = g % 4, h = g / 4, both q), field bit q. Bit dropout_transposed_bit(c, r) of
// the result: element 4 c + r dropped.
template <int kColumnGroups>
__device__ __forceinline__ constexpr int dropout_transposed_bit(int c, int r) {
  return kColumnGroups == 8 ? 4 * c + 2 * (r % 2) + r / 2 : 2 * (c + 4 * (r / 2)) + r % 2;
}
template <int kColumnGroups>
__device__ __forceinline__ std::uint32_t backward_dropped_transposed(const BackwardKernelParams& p,
                                                                     std::int64_t batch_head, int i_first,
                                                                     int key_group, int lane) {
  static_assert(kColumnGroups == 8 || kColumnGroups == 4, "64 or 32 query columns");
  constexpr int kCalls = kColumnGroups / 2;  // a lane's calls, and its field's bits
  const int g = lane / 4;
  const int c = kColumnGroups == 8 ? g : g % 4;
  std::uint32_t word = 0;
#pragma unroll
  for (int call = 0; call < kCalls; ++call) {
    const int q = kColumnGroups == 8 ? call / 2 : call;
    const int h = kColumnGroups == 8 ? call % 2 : g / 4;
    const std::uint32_t bits = dropout_drop_bits(
        dropout_draws(p.dropout_seed, p.dropout_offset, batch_head, i_first + 8 * c + q, 8 * (key_group + h)),
        p.dropout_threshold);
#pragma unroll
    for (int k = 0; k < 8; ++k) word |= ((bits >> k) & 1u) << (kCalls * k + call);  // field k: for lane k
  }
  return transpose_lane_fields<8, kCalls, 4>(word, g);
}

// The dQ pass's tiles: query rows row and row + 8 (row = ... + lane / 4) by 64 keys (element 4 c + r:
// row + 8 (r / 2), key key_group * 8 + 8 c + 2 (lane % 4) + r % 2). The 4 lanes of a quad need the 16
// calls (c, h = r / 2), two draws of each; lane t = lane % 4 computes (c = 2 t + cc, h) for cc, h in {0, 1},
// field bits 2 (2 cc + h) + e for draws 2 t' + e of lane t'. Bit 4 c + r of the result: element 4 c + r
// dropped.
__device__ __forceinline__ std::uint32_t backward_dropped_rows(const BackwardKernelParams& p,
                                                               std::int64_t batch_head, int row,
                                                               int key_group, int lane) {
  const int t = lane % 4;
  std::uint32_t word = 0;
#pragma unroll
  for (int call = 0; call < 4; ++call) {
    const int cc = call / 2, h = call % 2;
    const std::uint32_t bits = dropout_drop_bits(dropout_draws(p.dropout_seed, p.dropout_offset, batch_head,
                                                               row + 8 * h, 8 * (key_group + 2 * t + cc)),
                                                 p.dropout_threshold);
#pragma unroll
    for (int k = 0; k < 8; ++k) word |= ((bits >> k) & 1u) << (8 * (k / 2) + 2 * call + k % 2);
  }
  return transpose_lane_fields<4, 8, 1>(word, t);
}

}  // namespace flashattn::detail::cuda_sm90
