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

#include "common/mask.h"
#include "common/numeric.h"
#include "common/philox.h"
#include "cpu/tiled.h"
#include "cpu/tiled_kernels.h"

namespace flashattn::detail::cpu_tiled {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Per-thread scratch of the forward.
struct ForwardScratch {
  float* qt;    // d x kBlockQ: scaled Q^T of the tile
  float* k;     // kBlockK x d_pad
  float* v;     // kBlockK x dv_pad
  float* s;     // kBlockK x kBlockQ: scores, then probabilities
  float* o;     // kBlockQ x dv_pad: unnormalised output
  float* row;   // max(d_pad, dv_pad): one row being converted
  float *m, *l, *alpha, *m_use, *slope, *diag, *lo, *hi;  // kBlockQ each, per packed row
  std::int64_t *first, *last, *query, *head;    // kBlockQ each

  static ForwardScratch carve(Carver& c, const AttentionParams& p) {
    const std::int64_t d_pad = round_up(p.head_dim, kPad), dv_pad = round_up(p.head_dim_v, kPad);
    ForwardScratch s;
    s.qt = c.take<float>(p.head_dim * kBlockQ);
    s.k = c.take<float>(kBlockK * d_pad);
    s.v = c.take<float>(kBlockK * dv_pad);
    s.s = c.take<float>(kBlockK * kBlockQ);
    s.o = c.take<float>(kBlockQ * dv_pad);
    s.row = c.take<float>(std::max(d_pad, dv_pad));
    for (float** f : {&s.m, &s.l, &s.alpha, &s.m_use, &s.slope, &s.diag, &s.lo, &s.hi}) *f = c.take<float>(kBlockQ);
    for (std::int64_t** f : {&s.first, &s.last, &s.query, &s.head}) *f = c.take<std::int64_t>(kBlockQ);
    return s;
  }
};

struct ForwardItem {
  std::int64_t b, head_kv, tile, split;
};

// The whole of one work item; compiled once per instruction set (below).
template <class Arch>
TILED_INLINE void forward_item(const AttentionParams& p, const ForwardItem& item, const SplitPartials& partials,
                               ForwardScratch& ws) {
  using V = typename Arch::V;
  constexpr int W = kLanes<V>;
  const SequenceLengths seq = sequence_lengths(p, item.b);
  const std::int64_t group = group_size(p);
  const std::int64_t row0 = item.tile * kBlockQ;
  const std::int64_t rows = std::min<std::int64_t>(kBlockQ, seq.q * group - row0);
  if (rows <= 0) return;
  const std::int64_t rows_pad = round_up(rows, kPad);
  const std::int64_t d = p.head_dim, dv = p.head_dim_v;
  const std::int64_t d_pad = round_up(d, kPad), dv_pad = round_up(dv, kPad);
  const bool rotary = p.is_kvcache && p.rotary_dim > 0;

  // Rows: which (query, head) they are, what they see, and their Q^T column.
  std::int64_t key_begin = seq.k, key_end = 0;  // union of the visible ranges
  std::int64_t max_first = 0, min_last = seq.k;  // intersection: tiles inside need no mask
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t packed = row0 + r;
    const std::int64_t i = packed / group, head = item.head_kv * group + packed % group;
    ws.query[r] = i;
    ws.head[r] = head;
    const KeyRange range = visible_keys(p.mask, i, seq.q, seq.k);
    ws.first[r] = range.first;
    ws.last[r] = range.last;
    if (!range.empty()) {
      key_begin = std::min(key_begin, range.first);
      key_end = std::max(key_end, range.last + 1);
    }
    max_first = std::max(max_first, range.first);
    min_last = std::min(min_last, range.last);
    ws.slope[r] = p.alibi_slopes ? p.alibi_slopes[item.b * p.alibi_batch_stride + head] : 0.f;

    const void* q_row = static_cast<const char*>(p.q.data) +
                        query_offset(p.q, seq, item.b, i, head) * static_cast<std::int64_t>(dtype_size(p.dtype));
    load_row(q_row, p.dtype, ws.row, d, d);
    if (rotary) rotate_row(p, ws.row, rotary_query_position(p, seq, i));
    for (std::int64_t c = 0; c < d; ++c) ws.qt[c * kBlockQ + r] = ws.row[c] * p.scale;
  }
  for (std::int64_t r = rows; r < rows_pad; ++r) {
    for (std::int64_t c = 0; c < d; ++c) ws.qt[c * kBlockQ + r] = 0.f;
    ws.slope[r] = 0.f;
  }
  for (std::int64_t r = 0; r < rows_pad; ++r) {
    ws.m[r] = kNegInf;
    ws.l[r] = 0.f;
  }

  // This split's share of the KV tiles the rows can see.
  std::int64_t tile_begin = 0, tile_end = 0;
  if (key_begin < key_end) {
    const std::int64_t first_tile = key_begin / kBlockK, last_tile = ceil_div(key_end, kBlockK);
    const std::int64_t per_split = ceil_div(last_tile - first_tile, partials.splits);
    tile_begin = std::min(last_tile, first_tile + item.split * per_split);
    tile_end = std::min(last_tile, tile_begin + per_split);
  }

  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  const std::uint32_t drop_threshold = dropout_threshold(p.dropout_p);
  const float keep_scale = p.dropout_p > 0.f ? 1.f / (1.f - p.dropout_p) : 1.f;
  bool first_tile = true;
  for (std::int64_t tile = tile_begin; tile < tile_end; ++tile) {
    const std::int64_t j0 = tile * kBlockK;
    const int cols = static_cast<int>(std::min<std::int64_t>(kBlockK, seq.k - j0));
    if (tile == tile_begin) prefetch_keys(p, seq, item.b, item.head_kv, j0, cols);
    if (tile + 1 < tile_end)
      prefetch_keys(p, seq, item.b, item.head_kv, j0 + kBlockK, std::min<std::int64_t>(kBlockK, seq.k - j0 - kBlockK));
    for (int jj = 0; jj < cols; ++jj) {
      const std::int64_t k_off = key_offset(p, p.k, seq, item.b, j0 + jj, item.head_kv);
      const std::int64_t v_off = key_offset(p, p.v, seq, item.b, j0 + jj, item.head_kv);
      load_row(static_cast<const char*>(p.k.data) + k_off * elem, p.dtype, ws.k + jj * d_pad, d, d_pad);
      load_row(static_cast<const char*>(p.v.data) + v_off * elem, p.dtype, ws.v + jj * dv_pad, dv, dv_pad);
    }

    // St = K (scale Q)^T.
    gemm_bcast<Arch>(cols, static_cast<int>(rows_pad), static_cast<int>(d), ws.k, d_pad, 1, ws.qt, kBlockQ, ws.s,
                     kBlockQ, false);

    if (p.softcap > 0.f) {
      const float inv = 1.f / p.softcap;
      for (int jj = 0; jj < cols; ++jj)
        for (std::int64_t r = 0; r < rows_pad; r += W) {
          float* at = ws.s + jj * kBlockQ + r;
          vstore(at, p.softcap * vtanh(vload<V>(at) * inv));
        }
    }
    if (p.alibi_slopes) {
      for (std::int64_t r = 0; r < rows_pad; ++r)
        ws.diag[r] = static_cast<float>(ws.query[r < rows ? r : 0] + seq.k - seq.q - j0);
      for (int jj = 0; jj < cols; ++jj)
        for (std::int64_t r = 0; r < rows_pad; ++r)
          ws.s[jj * kBlockQ + r] -= ws.slope[r] * std::fabs(ws.diag[r] - static_cast<float>(jj));
    }
    if (!(max_first <= j0 && j0 + cols - 1 <= min_last)) {
      // Visible range per row relative to the tile, as floats (exact: clamped to
      // [-2, kBlockK + 1], which keeps empty ranges empty) so the test vectorises.
      for (std::int64_t r = 0; r < rows_pad; ++r) {
        const bool real = r < rows;
        ws.lo[r] = real ? static_cast<float>(std::clamp<std::int64_t>(ws.first[r] - j0, -2, kBlockK + 1)) : -2.f;
        ws.hi[r] = real ? static_cast<float>(std::clamp<std::int64_t>(ws.last[r] - j0, -2, kBlockK + 1)) : kBlockK + 1.f;
      }
      for (int jj = 0; jj < cols; ++jj) {
        const V key = vsplat<V>(static_cast<float>(jj));
        for (std::int64_t r = 0; r < rows_pad; r += W) {
          float* at = ws.s + jj * kBlockQ + r;
          const V visible = vload<V>(at);
          vstore(at, key < vload<V>(ws.lo + r) || key > vload<V>(ws.hi + r) ? vsplat<V>(kNegInf) : visible);
        }
      }
    }

    // Online softmax, W rows at a time (rows_pad is a multiple of every W).
    for (std::int64_t r = 0; r < rows_pad; r += W) {
      V m_new = vload<V>(ws.m + r);
      for (int jj = 0; jj < cols; ++jj) {
        const V sv = vload<V>(ws.s + jj * kBlockQ + r);
        m_new = sv > m_new ? sv : m_new;
      }
      // A row that has seen only masked keys keeps m = -inf; exponentiate
      // against 0 instead so that -inf - -inf never makes a NaN.
      const V m_use = m_new == vsplat<V>(kNegInf) ? V{} : m_new;
      const V alpha = vexp(vload<V>(ws.m + r) - m_use);
      V sum{};
      for (int jj = 0; jj < cols; ++jj) {
        const V pv = vexp(vload<V>(ws.s + jj * kBlockQ + r) - m_use);
        sum += pv;
        vstore(ws.s + jj * kBlockQ + r, pv);
      }
      vstore(ws.l + r, alpha * vload<V>(ws.l + r) + sum);
      vstore(ws.m + r, m_new);
      vstore(ws.alpha + r, alpha);
    }

    if (drop_threshold > 0) {
      // One Philox call decides 8 consecutive keys of a row; j0 is a multiple of 8.
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t batch_head = item.b * p.heads + ws.head[r];
        for (int j8 = 0; j8 < cols; j8 += 8) {
          const Philox4 draws = dropout_draws(p.dropout_seed, p.dropout_offset, batch_head, ws.query[r], j0 + j8);
          for (int jj = j8; jj < std::min(cols, j8 + 8); ++jj) {
            float& prob = ws.s[jj * kBlockQ + r];
            prob = dropout_lane(draws, jj) < drop_threshold ? 0.f : prob * keep_scale;
          }
        }
      }
    }

    // O = alpha O + P^T V.
    if (!first_tile) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const float a = ws.alpha[r];
        float* o = ws.o + r * dv_pad;
        for (std::int64_t c = 0; c < dv_pad; ++c) o[c] *= a;
      }
    }
    gemm_bcast<Arch>(static_cast<int>(rows), static_cast<int>(dv_pad), cols, ws.s, 1, kBlockQ, ws.v, dv_pad, ws.o,
                     dv_pad, !first_tile);
    first_tile = false;
  }
  if (first_tile) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < dv_pad; ++c) ws.o[r * dv_pad + c] = 0.f;
  }

  // Epilogue: normalise and write, or hand a partial to the combine.
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t i = ws.query[r], head = ws.head[r];
    const float m = ws.m[r], l = ws.l[r];
    float* o = ws.o + r * dv_pad;
    if (partials.splits > 1) {
      const bool empty = m == kNegInf;
      const float inv = empty ? 0.f : 1.f / l;
      float* out = partials.out + partials.out_index(p, item.split, item.b, i, head);
      for (std::int64_t c = 0; c < dv; ++c) out[c] = o[c] * inv;
      partials.lse[partials.lse_index(p, item.split, item.b, i, head)] = empty ? kNegInf : m + std::log(l);
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
    store_row(static_cast<char*>(p.out.data) + query_offset(p.out, seq, item.b, i, head) * elem, p.dtype, o, dv);
    if (p.lse) p.lse[lse_offset(p, seq, item.b, i, head)] = lse;
  }
}

using ForwardItemFn = void (*)(const AttentionParams&, const ForwardItem&, const SplitPartials&, ForwardScratch&);

[[gnu::target("avx512f"), gnu::flatten]] void forward_item_avx512(const AttentionParams& p, const ForwardItem& item,
                                                                  const SplitPartials& partials, ForwardScratch& ws) {
  forward_item<ArchAvx512>(p, item, partials, ws);
}
[[gnu::target("avx2,fma"), gnu::flatten]] void forward_item_avx2(const AttentionParams& p, const ForwardItem& item,
                                                                 const SplitPartials& partials, ForwardScratch& ws) {
  forward_item<ArchAvx2>(p, item, partials, ws);
}
[[gnu::flatten]] void forward_item_baseline(const AttentionParams& p, const ForwardItem& item,
                                            const SplitPartials& partials, ForwardScratch& ws) {
  forward_item<ArchBaseline>(p, item, partials, ws);
}

ForwardItemFn forward_item_for(Isa isa) {
  switch (isa) {
    case Isa::avx512: return forward_item_avx512;
    case Isa::avx2: return forward_item_avx2;
    default: return forward_item_baseline;
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

int resolve_splits(const AttentionParams& p, int threads) noexcept {
  if (p.num_splits >= 1) return p.num_splits;
  const std::int64_t items = p.batch * p.heads_kv * max_query_tiles(p);
  // For a KV cache, seqlen_k may not bound the keys (they live in the cache).
  const std::int64_t key_bound = p.is_kvcache ? std::max(p.seqlen_k, p.cache_capacity) : p.seqlen_k;
  const std::int64_t key_tiles = ceil_div(key_bound, kBlockK);
  // Enough items to fill the threads twice over balance well already; splitting
  // also costs a combine pass and partial buffers, so only split long key ranges.
  if (items >= 2 * threads || key_tiles < 4) return 1;
  const std::int64_t want = ceil_div(2 * threads, std::max<std::int64_t>(items, 1));
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, key_tiles / 2), 1, 64));
}

const char* unsupported_reason(const AttentionParams& p) noexcept {
  if (p.q.data && p.dtype == DType::int32) return "cpu_tiled: int32 attention inputs are not floating point";
  return nullptr;
}

std::size_t workspace_size(const AttentionParams& p, int threads) noexcept {
  const ForwardWorkspace layout(p, resolve_splits(p, threads), nullptr);
  return layout.shared_bytes + static_cast<std::size_t>(std::max(threads, 1)) * layout.thread_bytes;
}

Status run(const AttentionParams& p, const ExecutionContext& ctx) noexcept { return run(p, ctx, detect_isa()); }

Status run(const AttentionParams& p, const ExecutionContext& ctx, Isa isa) noexcept {
  if (p.batch == 0 || p.seqlen_q == 0 || p.heads == 0) return Status();
  int threads = std::max(cpu_threads(ctx), 1);
  const int splits = resolve_splits(p, threads);
  const ForwardWorkspace layout(p, splits, ctx.workspace);
  // Fewer threads than asked if the caller sized the workspace for fewer.
  const std::size_t available = ctx.workspace_bytes > layout.shared_bytes ? ctx.workspace_bytes - layout.shared_bytes : 0;
  threads = static_cast<int>(std::min<std::size_t>(threads, available / layout.thread_bytes));
  if (threads < 1 || !ctx.workspace)
    return Status::error(ErrorCode::invalid_argument,
                         "workspace: %zu bytes given, cpu_tiled forward needs at least %zu (see workspace_size)",
                         ctx.workspace_bytes, layout.shared_bytes + layout.thread_bytes);

  if (p.is_kvcache && p.k_new.data) append_new_kv(p, threads);

  const ForwardItemFn item_fn = forward_item_for(isa);
  const std::int64_t tiles = max_query_tiles(p);
  const std::int64_t items = p.batch * p.heads_kv * tiles * splits;
  char* const thread_base = static_cast<char*>(ctx.workspace) + layout.shared_bytes;
#pragma omp parallel num_threads(threads)
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
      item.head_kv = index / (splits * tiles) % p.heads_kv;
      item.b = index / (splits * tiles * p.heads_kv);
      item_fn(p, item, layout.partials, ws);
    }
  }
  if (splits > 1) combine_split_partials(p, layout.partials, threads);
  return Status();
}

}  // namespace flashattn::detail::cpu_tiled
