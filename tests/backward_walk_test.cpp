// cuda_sm90's backward walk (src/cuda/sm90/backward_walk.h), compiled here for the host. For every key block
// of a sequence the kernel walks the query blocks backward_sequence names; deterministic mode orders the dQ
// reductions into a query block by backward_last_block_reaching. Drawn over many shapes (lengths, seqused,
// varlen, every window kind, both key-block sizes):
//  - every (query, key) pair the mask shows lies in the walk of the key's block (no dQ / dK / dV term is
//    skipped);
//  - the key blocks whose walks reach a query block are contiguous, and each one's last block is their
//    highest, so the turns last - n are exactly 0 .. count - 1: the block's semaphore reaches each turn in
//    order (a gap or a repeat would leave a reduction waiting forever on the GPU);
//  - the dQ pass's key range of a query block holds the block of every key its rows see, and its first and
//    last key blocks each hold a key one of its rows sees (no step is wasted at either end).
// The GPU suites run a few of these shapes; this runs thousands.
#include "cuda/sm90/backward_walk.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace flashattn::test {
namespace {

using detail::cuda_sm90::backward_last_block_reaching;
using detail::cuda_sm90::backward_query_walk;
using detail::cuda_sm90::backward_sequence;
using detail::cuda_sm90::BackwardQueryWalk;
using detail::cuda_sm90::BackwardSequence;
using detail::cuda_sm90::kBackwardQueryRows;

// The fields of BackwardKernelParams the walk reads.
struct WalkParams {
  const std::int32_t* cu_seqlens_q = nullptr;
  const std::int32_t* cu_seqlens_k = nullptr;
  const std::int32_t* seqused_q = nullptr;
  const std::int32_t* seqused_k = nullptr;
  int seqlen_q = 0, seqlen_k = 0;
  int window_left = -1, window_right = -1;
};

struct DrawnProblem {
  int batch = 1;
  std::vector<std::int32_t> cu_q, cu_k, used_q, used_k;
  WalkParams p;
  std::string label;
};

DrawnProblem draw_problem(Rng& rng) {
  DrawnProblem d;
  const bool varlen = rng.coin(0.4), seqused = rng.coin(0.3);
  d.batch = varlen ? static_cast<int>(rng.integer(1, 4)) : 1;
  auto length = [&] {
    return static_cast<std::int32_t>(rng.coin(0.1) ? rng.integer(0, 3) : rng.integer(1, 900));
  };
  std::vector<std::int32_t> q(d.batch), k(d.batch);
  for (int b = 0; b < d.batch; ++b) q[b] = length(), k[b] = length();
  if (varlen) {
    d.cu_q = {0};
    d.cu_k = {0};
    for (int b = 0; b < d.batch; ++b)
      d.cu_q.push_back(d.cu_q.back() + q[b]), d.cu_k.push_back(d.cu_k.back() + k[b]);
    d.p.cu_seqlens_q = d.cu_q.data();
    d.p.cu_seqlens_k = d.cu_k.data();
  }
  d.p.seqlen_q = q[0];
  d.p.seqlen_k = k[0];
  if (seqused) {
    for (int b = 0; b < d.batch; ++b) {
      d.used_q.push_back(static_cast<std::int32_t>(rng.integer(0, q[b])));
      d.used_k.push_back(static_cast<std::int32_t>(rng.integer(0, k[b])));
    }
    d.p.seqused_q = d.used_q.data();
    d.p.seqused_k = d.used_k.data();
  }
  // None, causal, a two-sided window, left only, right only, causal with a left window.
  const int kind = static_cast<int>(rng.integer(0, 5));
  auto bound = [&] { return static_cast<int>(rng.coin(0.2) ? rng.integer(0, 3) : rng.integer(0, 600)); };
  if (kind == 1) d.p.window_right = 0;
  if (kind == 2) d.p.window_left = bound(), d.p.window_right = bound();
  if (kind == 3) d.p.window_left = bound();
  if (kind == 4) d.p.window_right = bound();
  if (kind == 5) d.p.window_left = bound(), d.p.window_right = 0;
  d.label = std::string(varlen ? "varlen" : "batched") + (seqused ? " seqused" : "") + " batch " +
            std::to_string(d.batch) + " q0 " + std::to_string(q[0]) + " k0 " + std::to_string(k[0]) +
            " window " + std::to_string(d.p.window_left) + "/" + std::to_string(d.p.window_right);
  return d;
}

template <int kBlockN>
void check_walk(const DrawnProblem& d) {
  const WalkParams& p = d.p;
  for (int b = 0; b < d.batch; ++b) {
    const BackwardSequence s0 = backward_sequence<kBlockN>(p, b, 0);
    const int blocks = (s0.k_allocated + kBlockN - 1) / kBlockN;  // the tiles the launch walks
    std::vector<BackwardSequence> walks;
    for (int n = 0; n < blocks; ++n) walks.push_back(backward_sequence<kBlockN>(p, b, n * kBlockN));
    const int q = s0.q, k = s0.k, offset = k - q;
    // Every visible pair in its key block's walk.
    for (int i = 0; i < q; ++i) {
      for (int j = 0; j < k; ++j) {
        const bool visible = (p.window_left < 0 || j >= i + offset - p.window_left) &&
                             (p.window_right < 0 || j <= i + offset + p.window_right);
        if (!visible) continue;
        const BackwardSequence& w = walks[j / kBlockN];
        const int m = i / kBackwardQueryRows;
        ASSERT_TRUE(m >= w.m_begin && m < w.m_end)
            << d.label << ": sequence " << b << " query " << i << " key " << j << " (block " << j / kBlockN
            << ") outside its walk [" << w.m_begin << ", " << w.m_end << ")";
      }
    }
    // The turns of each query block.
    const int m_blocks = (q + kBackwardQueryRows - 1) / kBackwardQueryRows;
    for (int m = 0; m < m_blocks; ++m) {
      int first = -1, last = -1, count = 0;
      for (int n = 0; n < blocks; ++n) {
        if (m < walks[n].m_begin || m >= walks[n].m_end) continue;
        if (first < 0) first = n;
        last = n;
        ++count;
      }
      if (count == 0) continue;
      ASSERT_EQ(count, last - first + 1) << d.label << ": the key blocks reaching query block " << m
                                         << " of sequence " << b << " are not contiguous";
      for (int n = first; n <= last; ++n) {
        ASSERT_EQ(backward_last_block_reaching<kBlockN>(p, walks[n], m), last)
            << d.label << ": key block " << n << ", query block " << m << " of sequence " << b;
      }
    }
  }
}

// The dQ pass (d = 256): query blocks of kRows rows, key blocks of kBlockN.
template <int kBlockN, int kRows>
void check_query_walk(const DrawnProblem& d) {
  const WalkParams& p = d.p;
  for (int b = 0; b < d.batch; ++b) {
    const BackwardSequence s = backward_sequence<kBlockN>(p, b, 0);
    const int q = s.q, k = s.k, offset = k - q;
    auto visible = [&](int i, int j) {
      return i < q && j < k && (p.window_left < 0 || j >= i + offset - p.window_left) &&
             (p.window_right < 0 || j <= i + offset + p.window_right);
    };
    const int q_blocks = (s.q + kRows - 1) / kRows;
    for (int m = 0; m < q_blocks; ++m) {
      const BackwardQueryWalk w = backward_query_walk<kBlockN>(p, s, m * kRows, kRows);
      ASSERT_LE(w.n_begin, w.n_end) << d.label;
      std::vector<int> seen((k + kBlockN - 1) / kBlockN + 1, 0);
      for (int i = m * kRows; i < (m + 1) * kRows; ++i) {
        for (int j = 0; j < k; ++j) {
          if (!visible(i, j)) continue;
          seen[j / kBlockN] = 1;
          ASSERT_TRUE(j / kBlockN >= w.n_begin && j / kBlockN < w.n_end)
              << d.label << ": sequence " << b << " query " << i << " key " << j
              << " outside its query block's "
              << "key blocks [" << w.n_begin << ", " << w.n_end << ")";
        }
      }
      if (w.n_begin < w.n_end) {
        ASSERT_TRUE(seen[w.n_begin] && seen[w.n_end - 1])
            << d.label << ": sequence " << b << " query block " << m << ": key blocks [" << w.n_begin << ", "
            << w.n_end << ") start or end on a block none of its rows sees";
      }
    }
  }
}

TEST(BackwardWalk, DrawnShapesCoverEveryPairAndOrderEveryTurn) {
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  for (int draw = 0; draw < 600; ++draw) {
    const DrawnProblem d = draw_problem(rng);
    check_walk<128>(d);
    check_walk<192>(d);
    check_walk<64>(d);
    check_query_walk<64, 128>(d);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace flashattn::test
