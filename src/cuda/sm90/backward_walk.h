// The Hopper backward's walk over one key block's work, host-compilable (tests/backward_walk_test.cpp checks
// it over shapes far beyond the GPU suites): the sequence lengths a tile works with, the query blocks that
// see its key block, the last key block that reaches a query block (the base of deterministic mode's dQ
// turns, whose every value must be reached exactly once, or a turn's wait never ends), and the dQ pass's key
// blocks of a query block. P is any struct with the fields of BackwardKernelParams used here.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace flashattn::detail::cuda_sm90 {

// The lengths one CTA works with. Varlen: the tensor maps are over every sequence's rows (batch extent 1),
// so q_row0 / k_row0 are global rows and the maps' batch coordinate is 0.
struct BackwardSequence {
  int q = 0, k = 0;            // rows taking part (seqused applied)
  int k_allocated = 0;         // key rows of the sequence in dK / dV (zeros past k)
  int q_allocated = 0;         // query rows of the sequence in dQ (zeros past q)
  int q_row0 = 0, k_row0 = 0;  // first row in the maps / dQ, dK, dV
  int map_batch = 0;           // the maps' batch coordinate
  int m_begin = 0,
      m_end = 0;  // query blocks (of kBackwardQueryRows rows) that see any key of this CTA's block
};

inline constexpr int kBackwardQueryRows = 64;  // query rows per step

// The device's min / max (the kernels' code as it was before this header), the host's equivalent.
FLASHATTN_HD int walk_min(int a, int b) {
#if defined(__CUDA_ARCH__)
  return min(a, b);
#else
  return a < b ? a : b;
#endif
}
FLASHATTN_HD int walk_max(int a, int b) {
#if defined(__CUDA_ARCH__)
  return max(a, b);
#else
  return a > b ? a : b;
#endif
}

template <int kBlockN, class P>
FLASHATTN_HD BackwardSequence backward_sequence(const P& p, int b, int n0) {
  BackwardSequence s;
  if (p.cu_seqlens_q != nullptr) {
    s.q_row0 = p.cu_seqlens_q[b];
    s.q = p.cu_seqlens_q[b + 1] - s.q_row0;
  } else {
    s.q = p.seqlen_q;
    s.map_batch = b;
  }
  if (p.cu_seqlens_k != nullptr) {
    s.k_row0 = p.cu_seqlens_k[b];
    s.k = p.cu_seqlens_k[b + 1] - s.k_row0;
  } else {
    s.k = p.seqlen_k;
  }
  s.q_allocated = s.q;
  s.k_allocated = s.k;
  if (p.seqused_q != nullptr) s.q = p.seqused_q[b];
  if (p.seqused_k != nullptr) s.k = p.seqused_k[b];
  // Query i sees key j iff diag - window_left <= j <= diag + window_right (a bound < 0: none) with
  // diag = i + k - q (bottom-right aligned), and j < k. Rows that see any key of [n0, n0 + kBlockN):
  // i >= n0 - offset - window_right and i <= n0 + kBlockN - 1 - offset + window_left.
  const int offset = s.k - s.q;
  int first = 0, last = s.q - 1;
  if (p.window_right >= 0) first = walk_max(first, n0 - offset - p.window_right);
  if (p.window_left >= 0) last = walk_min(last, n0 + (kBlockN - 1) - offset + p.window_left);
  if (n0 >= s.k || first > last) {
    s.m_begin = s.m_end = 0;
  } else {
    s.m_begin = first / kBackwardQueryRows;
    s.m_end = last / kBackwardQueryRows + 1;
  }
  return s;
}

// The last key block whose walk reaches query block m, for a key block that reaches it. The key blocks that
// reach m are contiguous (m_begin / m_end are non-decreasing in the key block): the last is the highest below
// the sequence's key blocks whose first query block is at most m.
template <int kBlockN, class P>
FLASHATTN_HD int backward_last_block_reaching(const P& p, const BackwardSequence& seq, int m) {
  int last = (seq.k + kBlockN - 1) / kBlockN - 1;
  if (p.window_right >= 0) {
    // Key block n's first query row is max(0, n kBlockN - offset - right), in a query block <= m iff
    // n kBlockN <= 64 (m + 1) - 1 + offset + right (>= the first key of a block that reaches m: not
    // negative).
    last = walk_min(last, (kBackwardQueryRows * (m + 1) - 1 + (seq.k - seq.q) + p.window_right) / kBlockN);
  }
  return last;
}

// The dQ pass (d >= 192, backward_dq_kernel.h): the key blocks [n_begin, n_end) of kBlockN keys that any of
// the query rows [i0, i0 + rows) of a sequence sees (n_begin == n_end: none, dQ is zero there). Rows at or
// past the sequence's queries see nothing.
struct BackwardQueryWalk {
  int n_begin = 0, n_end = 0;
};

template <int kBlockN, class P>
FLASHATTN_HD BackwardQueryWalk backward_query_walk(const P& p, const BackwardSequence& s, int i0, int rows) {
  BackwardQueryWalk w;
  const int last_row = walk_min(i0 + rows, s.q) - 1;
  if (last_row < i0 || s.k <= 0) return w;
  // Row i sees keys [i + offset - window_left, i + offset + window_right] within [0, k) (backward_sequence).
  const int offset = s.k - s.q;
  int first_key = 0, last_key = s.k - 1;
  if (p.window_left >= 0) first_key = walk_max(first_key, i0 + offset - p.window_left);
  if (p.window_right >= 0) last_key = walk_min(last_key, last_row + offset + p.window_right);
  if (first_key > last_key) return w;
  w.n_begin = first_key / kBlockN;
  w.n_end = last_key / kBlockN + 1;
  return w;
}

}  // namespace flashattn::detail::cuda_sm90
