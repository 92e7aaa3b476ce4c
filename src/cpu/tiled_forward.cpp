// Forward of the CPU tiled backend: online softmax over KV tiles (FlashAttention),
// for batched, varlen, paged and KV-cache problems alike (all one AttentionParams).
//
// Work item = (sequence b, kv head, packed query tile, key split). For each item:
//   Qt   = scale * Q^T of the tile's rows (d x rows), rotated first for KV-cache rotary
//   for each KV tile that some row of the tile can see:
//     St = K Qt                      (keys x rows: scores kept transposed)
//     softcap, ALiBi, mask (mask only on tiles crossing a row's visible range)
//     m' = max(m, colmax St); P = e^{St - m'}; l = e^{m - m'} l + colsum P
//     O  = e^{m - m'} O + P^T V      (dropout applied to P here, not to l)
//   O /= l (+ e^{sink - m}); LSE = m + log(l ...)
// With several splits each item writes its normalised partial O and LSE to the
// workspace and tiled_combine.cpp merges them.
#include <omp.h>

#include <cmath>
#include <limits>
#include <new>

#include "common/mask.h"
#include "common/numeric.h"
#include "common/philox.h"
#include "cpu/tiled.h"
#include "cpu/tiled_kernels.h"

namespace flashattn::detail::cpu_tiled {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The rows of one packed query tile of one kv head and their running state:
// which (query, head) each row is, what it sees, scale * Q^T, the softmax
// statistics and the unnormalised output. Row-indexed arrays have ld entries
// (kBlockQ on the tile path, the padded row count on the streaming path), and
// qt has leading dimension ld.
struct TileRows {
  float* qt;  // d x ld
  float* q;   // ld x d_pad: scale * Q row-major, zero-padded (streaming path only, else null)
  float* o;   // ld x dv_pad
  float *m, *l, *alpha, *slope;               // ld each
  std::int64_t *first, *last, *query, *head;  // ld each
  std::int64_t ld = 0, rows = 0, rows_pad = 0;
  std::int64_t key_begin = 0, key_end = 0;   // union of the visible ranges
  std::int64_t max_first = 0, min_last = 0;  // intersection: tiles inside need no mask
  bool first_tile = true;

  static TileRows carve(Carver& c, const AttentionParams& p, std::int64_t ld, bool stream) {
    TileRows t;
    t.ld = ld;
    t.qt = c.take<float>(p.head_dim * ld);
    t.q = stream ? c.take<float>(ld * round_up(p.head_dim, kPad)) : nullptr;
    t.o = c.take<float>(ld * round_up(p.head_dim_v, kPad));
    for (float** f : {&t.m, &t.l, &t.alpha, &t.slope}) *f = c.take<float>(ld);
    for (std::int64_t** f : {&t.first, &t.last, &t.query, &t.head}) *f = c.take<std::int64_t>(ld);
    return t;
  }
};

// Per-thread scratch of the forward: one key tile in fp32 and its scores, plus
// the rows of one tile (tile path) or of every kv head of a sequence
// (streaming path).
struct ForwardScratch {
  float* k;               // kBlockK x d_pad
  float* v;               // kBlockK x dv_pad
  float* s;               // kBlockK x ld: scores, then probabilities
  float* row;             // max(d_pad, dv_pad): one row being converted
  float *diag, *lo, *hi;  // ld each
  TileRows* heads;        // 1 (tile path) or heads_kv (streaming path)
  std::int64_t ld;
  bool stream;

  static ForwardScratch carve(Carver& c, const AttentionParams& p) {
    const std::int64_t d_pad = round_up(p.head_dim, kPad), dv_pad = round_up(p.head_dim_v, kPad);
    const std::int64_t stream = stream_rows(p);
    ForwardScratch s;
    s.stream = stream > 0;
    s.ld = s.stream ? stream : kBlockQ;
    s.k = c.take<float>(kBlockK * d_pad);
    s.v = c.take<float>(kBlockK * dv_pad);
    s.s = c.take<float>(kBlockK * s.ld);
    s.row = c.take<float>(std::max(d_pad, dv_pad));
    for (float** f : {&s.diag, &s.lo, &s.hi}) *f = c.take<float>(s.ld);
    const std::int64_t count = stream > 0 ? p.heads_kv : 1;
    s.heads = c.take<TileRows>(count);
    for (std::int64_t h = 0; h < count; ++h) {
      const TileRows rows = TileRows::carve(c, p, s.ld, s.stream);
      if (s.heads) new (s.heads + h) TileRows(rows);
    }
    return s;
  }
};

// Work item: (sequence b, kv head, packed query tile, key split) on the tile
// path; (sequence b, key split) on the streaming path (head_kv = tile = 0).
struct ForwardItem {
  std::int64_t b, head_kv, tile, split;
};

// Fills t with the rows [row0, row0 + rows) of kv head head_kv of sequence b
// (t.rows = 0 when the tile is past the sequence's rows).
template <class Arch>
TILED_INLINE void begin_rows(const AttentionParams& p, const SequenceLengths& seq, std::int64_t b,
                             std::int64_t head_kv, std::int64_t row0, TileRows& t, float* row_buf) {
  const std::int64_t group = group_size(p), ld = t.ld;
  t.rows = std::min<std::int64_t>(ld, seq.q * group - row0);
  if (t.rows <= 0) {
    t.rows = 0;
    return;
  }
  t.rows_pad = round_up(t.rows, kPad);
  t.first_tile = true;
  const std::int64_t d = p.head_dim;
  const bool rotary = p.is_kvcache && p.rotary_dim > 0;
  t.key_begin = seq.k;
  t.key_end = 0;
  t.max_first = 0;
  t.min_last = seq.k;
  for (std::int64_t r = 0; r < t.rows; ++r) {
    const std::int64_t packed = row0 + r;
    const std::int64_t i = packed / group, head = head_kv * group + packed % group;
    t.query[r] = i;
    t.head[r] = head;
    const KeyRange range = visible_keys(p.mask, i, seq.q, seq.k);
    t.first[r] = range.first;
    t.last[r] = range.last;
    if (!range.empty()) {
      t.key_begin = std::min(t.key_begin, range.first);
      t.key_end = std::max(t.key_end, range.last + 1);
    }
    t.max_first = std::max(t.max_first, range.first);
    t.min_last = std::min(t.min_last, range.last);
    t.slope[r] = p.alibi_slopes ? p.alibi_slopes[b * p.alibi_batch_stride + head] : 0.f;

    const void* q_row = static_cast<const char*>(p.q.data) +
                        query_offset(p.q, seq, b, i, head) * static_cast<std::int64_t>(dtype_size(p.dtype));
    load_row(q_row, p.dtype, row_buf, d, d);
    if (rotary) rotate_row(p, row_buf, rotary_query_position(p, seq, i));
    for (std::int64_t c = 0; c < d; ++c) t.qt[c * ld + r] = row_buf[c] * p.scale;
    if (t.q) {
      const std::int64_t d_pad = round_up(d, kPad);
      for (std::int64_t c = 0; c < d; ++c) t.q[r * d_pad + c] = row_buf[c] * p.scale;
      for (std::int64_t c = d; c < d_pad; ++c) t.q[r * d_pad + c] = 0.f;
    }
  }
  for (std::int64_t r = t.rows; r < t.rows_pad; ++r) {
    for (std::int64_t c = 0; c < d; ++c) t.qt[c * ld + r] = 0.f;
    t.slope[r] = 0.f;
  }
  for (std::int64_t r = 0; r < t.rows_pad; ++r) {
    t.m[r] = kNegInf;
    t.l[r] = 0.f;
  }
}

// This split's share [begin, end) of the KV tiles the rows can see. Depends on
// the rows' visible ranges only, which are the same for every kv head.
inline void split_tiles(const TileRows& t, int splits, std::int64_t split, std::int64_t* begin,
                        std::int64_t* end) {
  *begin = *end = 0;
  if (t.key_begin < t.key_end) {
    const std::int64_t first_tile = t.key_begin / kBlockK, last_tile = ceil_div(t.key_end, kBlockK);
    const std::int64_t per_split = ceil_div(last_tile - first_tile, splits);
    *begin = std::min(last_tile, first_tile + split * per_split);
    *end = std::min(last_tile, *begin + per_split);
  }
}

// K and V rows of keys [j0, j0 + cols) of one kv head to fp32.
inline void load_kv_tile(const AttentionParams& p, const SequenceLengths& seq, std::int64_t b,
                         std::int64_t head_kv, std::int64_t j0, int cols, ForwardScratch& ws) {
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  const std::int64_t d_pad = round_up(p.head_dim, kPad), dv_pad = round_up(p.head_dim_v, kPad);
  for (int jj = 0; jj < cols; ++jj) {
    const std::int64_t k_off = key_offset(p, p.k, seq, b, j0 + jj, head_kv);
    const std::int64_t v_off = key_offset(p, p.v, seq, b, j0 + jj, head_kv);
    load_row(static_cast<const char*>(p.k.data) + k_off * elem, p.dtype, ws.k + jj * d_pad, p.head_dim,
             d_pad);
    load_row(static_cast<const char*>(p.v.data) + v_off * elem, p.dtype, ws.v + jj * dv_pad, p.head_dim_v,
             dv_pad);
  }
}

// One KV tile (already in ws.k / ws.v) against the rows of t.
template <class Arch>
TILED_INLINE void attend_tile(const AttentionParams& p, const SequenceLengths& seq, std::int64_t b,
                              std::int64_t j0, int cols, TileRows& t, ForwardScratch& ws) {
  using V = typename Arch::V;
  constexpr int W = kLanes<V>;
  const std::int64_t ld = t.ld, rows = t.rows, rows_pad = t.rows_pad;
  const std::int64_t d = p.head_dim;
  const std::int64_t d_pad = round_up(d, kPad), dv_pad = round_up(p.head_dim_v, kPad);

  // St = K (scale Q)^T: dot products along d for up to 4 rows (decoding),
  // else the broadcast GEMM over all rows at once.
  if (t.q && rows <= 4) {
    const int n = static_cast<int>(d_pad);
    switch (rows) {
      case 1:
        dot_scores<Arch, 1>(cols, n, ws.k, d_pad, t.q, d_pad, ws.s, ld);
        break;
      case 2:
        dot_scores<Arch, 2>(cols, n, ws.k, d_pad, t.q, d_pad, ws.s, ld);
        break;
      case 3:
        dot_scores<Arch, 3>(cols, n, ws.k, d_pad, t.q, d_pad, ws.s, ld);
        break;
      default:
        dot_scores<Arch, 4>(cols, n, ws.k, d_pad, t.q, d_pad, ws.s, ld);
        break;
    }
    for (int jj = 0; jj < cols; ++jj)
      for (std::int64_t r = rows; r < rows_pad; ++r) ws.s[jj * ld + r] = 0.f;
  } else {
    gemm_bcast<Arch>(cols, static_cast<int>(rows_pad), static_cast<int>(d), ws.k, d_pad, 1, t.qt, ld, ws.s,
                     ld, false);
  }

  if (p.softcap > 0.f) {
    const float inv = 1.f / p.softcap;
    for (int jj = 0; jj < cols; ++jj)
      for (std::int64_t r = 0; r < rows_pad; r += W) {
        float* at = ws.s + jj * ld + r;
        vstore(at, p.softcap * vtanh(vload<V>(at) * inv));
      }
  }
  if (p.alibi_slopes) {
    for (std::int64_t r = 0; r < rows_pad; ++r)
      ws.diag[r] = static_cast<float>(t.query[r < rows ? r : 0] + seq.k - seq.q - j0);
    for (int jj = 0; jj < cols; ++jj)
      for (std::int64_t r = 0; r < rows_pad; ++r)
        ws.s[jj * ld + r] -= t.slope[r] * std::fabs(ws.diag[r] - static_cast<float>(jj));
  }
  if (p.bias) add_score_bias(p, b, t.query, t.head, rows, j0, cols, ws.s, ld);
  if (!(t.max_first <= j0 && j0 + cols - 1 <= t.min_last)) {
    // Visible range per row relative to the tile, as floats (exact: clamped to
    // [-2, kBlockK + 1], which keeps empty ranges empty) so the test vectorises.
    for (std::int64_t r = 0; r < rows_pad; ++r) {
      const bool real = r < rows;
      ws.lo[r] = real ? static_cast<float>(std::clamp<std::int64_t>(t.first[r] - j0, -2, kBlockK + 1)) : -2.f;
      ws.hi[r] = real ? static_cast<float>(std::clamp<std::int64_t>(t.last[r] - j0, -2, kBlockK + 1))
                      : kBlockK + 1.f;
    }
    for (int jj = 0; jj < cols; ++jj) {
      const V key = vsplat<V>(static_cast<float>(jj));
      for (std::int64_t r = 0; r < rows_pad; r += W) {
        float* at = ws.s + jj * ld + r;
        const V visible = vload<V>(at);
        vstore(at, key < vload<V>(ws.lo + r) || key > vload<V>(ws.hi + r) ? vsplat<V>(kNegInf) : visible);
      }
    }
  }

  // Online softmax, W rows at a time (rows_pad is a multiple of every W).
  for (std::int64_t r = 0; r < rows_pad; r += W) {
    V m_new = vload<V>(t.m + r);
    for (int jj = 0; jj < cols; ++jj) {
      const V sv = vload<V>(ws.s + jj * ld + r);
      m_new = sv > m_new ? sv : m_new;
    }
    // A row that has seen only masked keys keeps m = -inf; exponentiate
    // against 0 instead so that -inf - -inf never makes a NaN.
    const V m_use = m_new == vsplat<V>(kNegInf) ? V{} : m_new;
    const V alpha = vexp(vload<V>(t.m + r) - m_use);
    V sum{};
    for (int jj = 0; jj < cols; ++jj) {
      const V pv = vexp(vload<V>(ws.s + jj * ld + r) - m_use);
      sum += pv;
      vstore(ws.s + jj * ld + r, pv);
    }
    vstore(t.l + r, alpha * vload<V>(t.l + r) + sum);
    vstore(t.m + r, m_new);
    vstore(t.alpha + r, alpha);
  }

  const std::uint32_t drop_threshold = dropout_threshold(p.dropout_p);
  if (drop_threshold > 0) {
    const float keep_scale = 1.f / (1.f - p.dropout_p);
    // One Philox call decides 8 consecutive keys of a row; j0 is a multiple of 8.
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t batch_head = b * p.heads + t.head[r];
      for (int j8 = 0; j8 < cols; j8 += 8) {
        const Philox4 draws =
            dropout_draws(p.dropout_seed, p.dropout_offset, batch_head, t.query[r], j0 + j8);
        for (int jj = j8; jj < std::min(cols, j8 + 8); ++jj) {
          float& prob = ws.s[jj * ld + r];
          prob = dropout_lane(draws, jj) < drop_threshold ? 0.f : prob * keep_scale;
        }
      }
    }
  }

  // O = alpha O + P^T V.
  if (!t.first_tile) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const float a = t.alpha[r];
      float* o = t.o + r * dv_pad;
      for (std::int64_t c = 0; c < dv_pad; ++c) o[c] *= a;
    }
  }
  gemm_bcast<Arch>(static_cast<int>(rows), static_cast<int>(dv_pad), cols, ws.s, 1, ld, ws.v, dv_pad, t.o,
                   dv_pad, !t.first_tile);
  t.first_tile = false;
}

// Epilogue: normalise and write, or hand a partial to the combine.
inline void end_rows(const AttentionParams& p, const SequenceLengths& seq, std::int64_t b, std::int64_t split,
                     const SplitPartials& partials, TileRows& t) {
  const std::int64_t dv = p.head_dim_v, dv_pad = round_up(dv, kPad);
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  if (t.first_tile) {
    for (std::int64_t r = 0; r < t.rows; ++r)
      for (std::int64_t c = 0; c < dv_pad; ++c) t.o[r * dv_pad + c] = 0.f;
  }
  for (std::int64_t r = 0; r < t.rows; ++r) {
    const std::int64_t i = t.query[r], head = t.head[r];
    const float m = t.m[r], l = t.l[r];
    float* o = t.o + r * dv_pad;
    if (partials.splits > 1) {
      const bool empty = m == kNegInf;
      const float inv = empty ? 0.f : 1.f / l;
      float* out = partials.out + partials.out_index(p, split, b, i, head);
      for (std::int64_t c = 0; c < dv; ++c) out[c] = o[c] * inv;
      partials.lse[partials.lse_index(p, split, b, i, head)] = empty ? kNegInf : m + std::log(l);
      continue;
    }
    float factor = 0.f, lse = kNegInf;
    if (m != kNegInf) {
      if (p.sink) {
        // Sum in the frame of the larger of m and the sink so neither exponent overflows.
        const float sink = p.sink[head], top = std::max(m, sink);
        const float scaled_l = l * std::exp(m - top), denominator = scaled_l + std::exp(sink - top);
        factor = std::exp(m - top) / denominator;
        lse = top + std::log(denominator);
      } else {
        factor = 1.f / l;
        lse = m + std::log(l);
      }
    } else if (p.sink) {
      lse = p.sink[head];
    }
    for (std::int64_t c = 0; c < dv; ++c) o[c] *= factor;
    store_row(static_cast<char*>(p.out.data) + query_offset(p.out, seq, b, i, head) * elem, p.dtype, o, dv);
    if (p.lse) p.lse[lse_offset(p, seq, b, i, head)] = lse;
  }
}

// Tile path: one (sequence, kv head, query tile, split).
template <class Arch>
TILED_INLINE void forward_tile_item(const AttentionParams& p, const ForwardItem& item,
                                    const SplitPartials& partials, ForwardScratch& ws) {
  const SequenceLengths seq = sequence_lengths(p, item.b);
  TileRows& t = ws.heads[0];
  begin_rows<Arch>(p, seq, item.b, item.head_kv, item.tile * kBlockQ, t, ws.row);
  if (t.rows == 0) return;
  std::int64_t tile_begin, tile_end;
  split_tiles(t, partials.splits, item.split, &tile_begin, &tile_end);
  for (std::int64_t tile = tile_begin; tile < tile_end; ++tile) {
    const std::int64_t j0 = tile * kBlockK;
    const int cols = static_cast<int>(std::min<std::int64_t>(kBlockK, seq.k - j0));
    if (tile == tile_begin) prefetch_keys(p, seq, item.b, item.head_kv, j0, cols);
    if (tile + 1 < tile_end)
      prefetch_keys(p, seq, item.b, item.head_kv, j0 + kBlockK,
                    std::min<std::int64_t>(kBlockK, seq.k - j0 - kBlockK));
    load_kv_tile(p, seq, item.b, item.head_kv, j0, cols, ws);
    attend_tile<Arch>(p, seq, item.b, j0, cols, t, ws);
  }
  end_rows(p, seq, item.b, item.split, partials, t);
}

// Streaming path (few query rows per kv head: decoding): one (sequence, split)
// with the rows of every kv head resident, so the keys of the split are read
// once, in memory order -- all heads of key j, then of key j + 1 -- instead of
// one head's rows, several KB apart, per pass.
template <class Arch>
TILED_INLINE void forward_stream_item(const AttentionParams& p, const ForwardItem& item,
                                      const SplitPartials& partials, ForwardScratch& ws) {
  const SequenceLengths seq = sequence_lengths(p, item.b);
  for (std::int64_t h = 0; h < p.heads_kv; ++h) begin_rows<Arch>(p, seq, item.b, h, 0, ws.heads[h], ws.row);
  if (ws.heads[0].rows == 0) return;
  std::int64_t tile_begin, tile_end;
  split_tiles(ws.heads[0], partials.splits, item.split, &tile_begin, &tile_end);
  for (std::int64_t tile = tile_begin; tile < tile_end; ++tile) {
    const std::int64_t j0 = tile * kBlockK;
    const int cols = static_cast<int>(std::min<std::int64_t>(kBlockK, seq.k - j0));
    if (tile == tile_begin) prefetch_all_heads(p, seq, item.b, j0, cols);
    if (tile + 1 < tile_end)
      prefetch_all_heads(p, seq, item.b, j0 + kBlockK, std::min<std::int64_t>(kBlockK, seq.k - j0 - kBlockK));
    for (std::int64_t h = 0; h < p.heads_kv; ++h) {
      load_kv_tile(p, seq, item.b, h, j0, cols, ws);
      attend_tile<Arch>(p, seq, item.b, j0, cols, ws.heads[h], ws);
    }
  }
  for (std::int64_t h = 0; h < p.heads_kv; ++h) end_rows(p, seq, item.b, item.split, partials, ws.heads[h]);
}

template <class Arch>
TILED_INLINE void forward_item(const AttentionParams& p, const ForwardItem& item,
                               const SplitPartials& partials, ForwardScratch& ws) {
  if (ws.stream)
    forward_stream_item<Arch>(p, item, partials, ws);
  else
    forward_tile_item<Arch>(p, item, partials, ws);
}

using ForwardItemFn = void (*)(const AttentionParams&, const ForwardItem&, const SplitPartials&,
                               ForwardScratch&);

[[gnu::target("avx512f"), gnu::flatten]] void forward_item_avx512(const AttentionParams& p,
                                                                  const ForwardItem& item,
                                                                  const SplitPartials& partials,
                                                                  ForwardScratch& ws) {
  forward_item<ArchAvx512>(p, item, partials, ws);
}
[[gnu::target("avx2,fma"), gnu::flatten]] void forward_item_avx2(const AttentionParams& p,
                                                                 const ForwardItem& item,
                                                                 const SplitPartials& partials,
                                                                 ForwardScratch& ws) {
  forward_item<ArchAvx2>(p, item, partials, ws);
}
[[gnu::flatten]] void forward_item_baseline(const AttentionParams& p, const ForwardItem& item,
                                            const SplitPartials& partials, ForwardScratch& ws) {
  forward_item<ArchBaseline>(p, item, partials, ws);
}

ForwardItemFn forward_item_for(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return forward_item_avx512;
    case Isa::avx2:
      return forward_item_avx2;
    default:
      return forward_item_baseline;
  }
}

// The workspace of a forward: split partials (shared), then one scratch per thread.
struct ForwardWorkspace {
  SplitPartials partials;
  std::size_t shared_bytes = 0, thread_bytes = 0;

  ForwardWorkspace(const AttentionParams& p, int splits, void* base) {
    Carver shared(base);
    partials.splits = splits;
    if (splits > 1) {
      const std::int64_t rows = splits * p.batch * p.seqlen_q * p.heads;
      partials.out = shared.take<float>(rows * p.head_dim_v);
      partials.lse = shared.take<float>(rows);
    }
    shared_bytes = shared.bytes();
    Carver one(nullptr);
    ForwardScratch::carve(one, p);
    thread_bytes = one.bytes();
  }
};

}  // namespace

std::int64_t stream_rows(const AttentionParams& p) noexcept {
  const std::int64_t rows = p.seqlen_q * group_size(p);
  if (rows > kStreamRows) return 0;
  const std::int64_t ld = round_up(rows, kPad);
  // Every kv head's rows live in the thread's scratch at once; past a few MB
  // (hundreds of kv heads) the tile path's one-head-at-a-time is the better trade.
  const std::int64_t bytes = p.heads_kv * ld * (p.head_dim + round_up(p.head_dim_v, kPad) + 8) * 4;
  return bytes <= (std::int64_t{4} << 20) ? ld : 0;
}

std::int64_t forward_items_per_split(const AttentionParams& p) noexcept {
  return stream_rows(p) > 0 ? p.batch : p.batch * p.heads_kv * max_query_tiles(p);
}

int resolve_splits(const AttentionParams& p) noexcept {
  if (p.num_splits >= 1) return p.num_splits;
  const std::int64_t items = forward_items_per_split(p);
  // For a KV cache, seqlen_k may not bound the keys (they live in the cache).
  const std::int64_t key_bound = p.is_kvcache ? std::max(p.seqlen_k, p.cache_capacity) : p.seqlen_k;
  const std::int64_t key_tiles = ceil_div(key_bound, kBlockK);
  // kSplitItems items balance well over the thread counts of a CPU; splitting
  // also costs a combine pass and partial buffers, so only split long key
  // ranges, keeping at least two KV tiles per split.
  if (items >= kSplitItems || key_tiles < 4) return 1;
  const std::int64_t want = ceil_div(kSplitItems, std::max<std::int64_t>(items, 1));
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, key_tiles / 2), 1, 64));
}

const char* unsupported_reason(const AttentionParams& p) noexcept {
  if (p.q.data && p.dtype == DType::int32) return "cpu_tiled: int32 attention inputs are not floating point";
  return nullptr;
}

std::size_t workspace_size(const AttentionParams& p, int threads) noexcept {
  const ForwardWorkspace layout(p, resolve_splits(p), nullptr);
  return layout.shared_bytes + static_cast<std::size_t>(std::max(threads, 1)) * layout.thread_bytes;
}

Status run(const AttentionParams& p, const ExecutionContext& ctx) noexcept {
  return run(p, ctx, detect_isa());
}

Status run(const AttentionParams& p, const ExecutionContext& ctx, Isa isa) noexcept {
  if (p.batch == 0 || p.seqlen_q == 0 || p.heads == 0) return Status();
  int threads = std::max(cpu_threads(ctx), 1);
  // Splits (and so every bit of the result) depend on shapes only, never on threads.
  const int splits = resolve_splits(p);
  const ForwardWorkspace layout(p, splits, ctx.workspace);
  // Fewer threads than asked if the caller sized the workspace for fewer.
  const std::size_t available =
      ctx.workspace_bytes > layout.shared_bytes ? ctx.workspace_bytes - layout.shared_bytes : 0;
  threads = static_cast<int>(std::min<std::size_t>(threads, available / layout.thread_bytes));
  if (threads < 1 || !ctx.workspace)
    return Status::error(
        ErrorCode::invalid_argument,
        "workspace: %zu bytes given, cpu_tiled forward needs at least %zu (see workspace_size)",
        ctx.workspace_bytes, layout.shared_bytes + layout.thread_bytes);

  if (p.is_kvcache && p.k_new.data) append_new_kv(p, threads);

  const ForwardItemFn item_fn = forward_item_for(isa);
  const bool stream = stream_rows(p) > 0;
  const std::int64_t tiles = stream ? 1 : max_query_tiles(p), heads_kv = stream ? 1 : p.heads_kv;
  const std::int64_t items = p.batch * heads_kv * tiles * splits;
  // For a KV cache, seqlen_k may not bound the keys (they live in the cache).
  const std::int64_t key_bound = p.is_kvcache ? std::max(p.seqlen_k, p.cache_capacity) : p.seqlen_k;
  const double flops = 2.0 * static_cast<double>(p.batch * p.seqlen_q * p.heads) *
                       static_cast<double>(key_bound) * static_cast<double>(p.head_dim + p.head_dim_v);
  const int team = threads_for_work(flops, items, threads);
  char* const thread_base = static_cast<char*>(ctx.workspace) + layout.shared_bytes;
#pragma omp parallel num_threads(team) if (team > 1)
  {
    Carver carver(thread_base + static_cast<std::size_t>(omp_get_thread_num()) * layout.thread_bytes);
    ForwardScratch ws = ForwardScratch::carve(carver, p);
    // Items of one (sequence, kv head) are adjacent so consecutive items reuse
    // the same K/V from cache; dynamic scheduling absorbs causal imbalance.
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t index = 0; index < items; ++index) {
      ForwardItem item;
      item.split = index % splits;
      item.tile = index / splits % tiles;
      item.head_kv = index / (splits * tiles) % heads_kv;
      item.b = index / (splits * tiles * heads_kv);
      item_fn(p, item, layout.partials, ws);
    }
  }
  if (splits > 1) combine_split_partials(p, layout.partials, threads);
  return Status();
}

}  // namespace flashattn::detail::cpu_tiled
