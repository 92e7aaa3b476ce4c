// Backward of the CPU tiled backend (FlashAttention-2 style recomputation).
//
//   preprocess: D_i = dO_i . O_i per (sequence, head, row); dsink partials
//   work item (sequence b, kv head, chunk of query tiles), per query tile:
//     load scale*Q (both layouts), dO (both layouts), LSE, D of its packed rows
//     for each KV tile the rows can see:
//       St  = K (scale Q)^T; softcap (keep 1 - tanh^2), ALiBi, mask
//       P   = e^{St - LSE}                  (dropout: Pd = P Z / (1-p))
//       dV += Pd^T dO                        dPt = V dO^T
//       dS  = P (dP Z/(1-p) - D) (1 - tanh^2)
//       dK += dS^T (scale Q)                 dQ += dS K     (scaled on the store)
// A work item owns its (sequence, kv head)'s dK/dV accumulators and its query
// tiles' dQ rows outright, so there are no atomics and every sum runs in a
// fixed order: results are deterministic by construction, whatever the thread
// count or schedule. When there are fewer (sequence, kv head) pairs than
// threads, the query tiles of a pair are dealt to several chunks with private
// dK/dV accumulators, summed afterwards in chunk order (still deterministic).
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "common/mask.h"
#include "common/numeric.h"
#include "common/philox.h"
#include "cpu/tiled.h"
#include "cpu/tiled_kernels.h"

namespace flashattn::detail::cpu_tiled {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kPosInf = std::numeric_limits<float>::infinity();

struct BackwardScratch {
  float* q;                                     // kBlockQ x d_pad: scale * Q
  float* qt;                                    // d x kBlockQ: its transpose
  float* dout;                                  // kBlockQ x dv_pad
  float* doutt;                                 // dv x kBlockQ
  float* k;                                     // kBlockK x d_pad
  float* v;                                     // kBlockK x dv_pad
  float* p;                                     // kBlockK x kBlockQ: scores, then probabilities
  float* pd;                                    // kBlockK x kBlockQ: dropped probabilities (dropout only)
  float* ds;                                    // kBlockK x kBlockQ: dP, then dS
  float* dtanh;                                 // kBlockK x kBlockQ: 1 - tanh^2 (softcap only)
  float* dq;                                    // kBlockQ x d_pad
  float* row;                                   // max(d_pad, dv_pad)
  float *lse, *delta, *slope, *diag, *lo, *hi;  // kBlockQ each
  std::int64_t *first, *last, *query, *head;    // kBlockQ each

  static BackwardScratch carve(Carver& c, const BackwardParams& p) {
    const std::int64_t d_pad = round_up(p.head_dim, kPad), dv_pad = round_up(p.head_dim_v, kPad);
    BackwardScratch s;
    s.q = c.take<float>(kBlockQ * d_pad);
    s.qt = c.take<float>(p.head_dim * kBlockQ);
    s.dout = c.take<float>(kBlockQ * dv_pad);
    s.doutt = c.take<float>(p.head_dim_v * kBlockQ);
    s.k = c.take<float>(kBlockK * d_pad);
    s.v = c.take<float>(kBlockK * dv_pad);
    s.p = c.take<float>(kBlockK * kBlockQ);
    s.pd = p.dropout_p > 0.f ? c.take<float>(kBlockK * kBlockQ) : nullptr;
    s.ds = c.take<float>(kBlockK * kBlockQ);
    s.dtanh = p.softcap > 0.f ? c.take<float>(kBlockK * kBlockQ) : nullptr;
    s.dq = c.take<float>(kBlockQ * d_pad);
    s.row = c.take<float>(std::max(d_pad, dv_pad));
    for (float** f : {&s.lse, &s.delta, &s.slope, &s.diag, &s.lo, &s.hi}) *f = c.take<float>(kBlockQ);
    for (std::int64_t** f : {&s.first, &s.last, &s.query, &s.head}) *f = c.take<std::int64_t>(kBlockQ);
    return s;
  }
};

// Query-tile chunks per (sequence, kv head): 1 when the pairs alone make enough
// items to share out, else enough chunks for about 16 items. From shapes only,
// never the thread count, so that the summation order -- and with it every bit
// of the result -- is the same whatever the number of threads.
std::int64_t chunks_per_group(const BackwardParams& p) {
  constexpr std::int64_t kItems = 16;
  const std::int64_t groups = p.batch * p.heads_kv;
  if (groups >= kItems) return 1;
  // Each chunk costs a private fp32 dK/dV of the whole key range: keep them
  // under 256 MiB together (long sequences have enough query tiles per chunk
  // to balance anyway). At most 64: the reduction lists them on the stack.
  constexpr std::int64_t kBudgetBytes = std::int64_t{256} << 20;
  const std::int64_t slot_bytes =
      4 * std::max<std::int64_t>(p.seqlen_k, 1) * (round_up(p.head_dim, kPad) + round_up(p.head_dim_v, kPad));
  const std::int64_t affordable = kBudgetBytes / (slot_bytes * std::max<std::int64_t>(groups, 1));
  const std::int64_t limit = std::clamp<std::int64_t>(std::min(max_query_tiles(p), affordable), 1, 64);
  return std::clamp<std::int64_t>(ceil_div(kItems, std::max<std::int64_t>(groups, 1)), 1, limit);
}

// The workspace of a backward: shared arrays, dK/dV accumulator slots, and one
// scratch per thread. A slot holds seqlen_k rows of dK and of dV (fp32); there
// is one per thread when chunks == 1 (a thread finishes a group before taking
// the next) and one per (group, chunk) otherwise (reduced after all chunks).
struct BackwardWorkspace {
  float* delta = nullptr;   // batch x heads x seqlen_q
  double* dsink = nullptr;  // batch x heads partial sums (sink only)
  float* slots = nullptr;
  std::int64_t chunks = 1, slot_floats = 0;
  std::size_t shared_bytes = 0, thread_bytes = 0;

  BackwardWorkspace(const BackwardParams& p, int threads, void* base) {
    Carver shared(base);
    chunks = chunks_per_group(p);
    delta = shared.take<float>(p.batch * p.heads * p.seqlen_q);
    if (p.sink) dsink = shared.take<double>(p.batch * p.heads);
    slot_floats = p.seqlen_k * (round_up(p.head_dim, kPad) + round_up(p.head_dim_v, kPad));
    const std::int64_t slot_count = chunks == 1 ? threads : p.batch * p.heads_kv * chunks;
    slots = shared.take<float>(slot_count * slot_floats);
    shared_bytes = shared.bytes();
    Carver one(nullptr);
    BackwardScratch::carve(one, p);
    thread_bytes = one.bytes();
  }
  float* dk_slot(std::int64_t slot) const { return slots + slot * slot_floats; }
};

struct BackwardItem {
  std::int64_t b, head_kv, chunk, chunks;
};

template <class Arch>
TILED_INLINE void backward_query_tile(const BackwardParams& p, const BackwardItem& item,
                                      const SequenceLengths& seq, std::int64_t tile, const float* delta,
                                      float* dk_acc, float* dv_acc, BackwardScratch& ws) {
  using V = typename Arch::V;
  constexpr int W = kLanes<V>;
  const std::int64_t group = group_size(p);
  const std::int64_t row0 = tile * kBlockQ;
  const std::int64_t rows = std::min<std::int64_t>(kBlockQ, seq.q * group - row0);
  const std::int64_t rows_pad = round_up(rows, kPad);
  const std::int64_t d = p.head_dim, dv = p.head_dim_v;
  const std::int64_t d_pad = round_up(d, kPad), dv_pad = round_up(dv, kPad);
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));

  std::int64_t key_begin = seq.k, key_end = 0, max_first = 0, min_last = seq.k;
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
    // A row without visible keys has LSE -inf (or the sink); it has no
    // gradient, and LSE +inf makes its P exactly 0 below.
    const float lse = p.lse[lse_offset(p, seq, item.b, i, head)];
    ws.lse[r] = range.empty() || lse == kNegInf ? kPosInf : lse;
    ws.delta[r] = delta[(item.b * p.heads + head) * p.seqlen_q + i];

    load_row(static_cast<const char*>(p.q.data) + query_offset(p.q, seq, item.b, i, head) * elem, p.dtype,
             ws.q + r * d_pad, d, d_pad);
    for (std::int64_t c = 0; c < d; ++c) {
      ws.q[r * d_pad + c] *= p.scale;
      ws.qt[c * kBlockQ + r] = ws.q[r * d_pad + c];
    }
    load_row(static_cast<const char*>(p.dout.data) + query_offset(p.dout, seq, item.b, i, head) * elem,
             p.dtype, ws.dout + r * dv_pad, dv, dv_pad);
    for (std::int64_t c = 0; c < dv; ++c) ws.doutt[c * kBlockQ + r] = ws.dout[r * dv_pad + c];
  }
  for (std::int64_t r = rows; r < rows_pad; ++r) {
    for (std::int64_t c = 0; c < d; ++c) ws.qt[c * kBlockQ + r] = 0.f;
    for (std::int64_t c = 0; c < dv; ++c) ws.doutt[c * kBlockQ + r] = 0.f;
    ws.lse[r] = kPosInf;
    ws.delta[r] = 0.f;
    ws.slope[r] = 0.f;
  }
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < d_pad; ++c) ws.dq[r * d_pad + c] = 0.f;

  const std::uint32_t drop_threshold = dropout_threshold(p.dropout_p);
  const float keep_scale = p.dropout_p > 0.f ? 1.f / (1.f - p.dropout_p) : 1.f;
  const std::int64_t tile_begin = key_begin < key_end ? key_begin / kBlockK : 0;
  const std::int64_t tile_end = key_begin < key_end ? ceil_div(key_end, kBlockK) : 0;
  for (std::int64_t kv_tile = tile_begin; kv_tile < tile_end; ++kv_tile) {
    const std::int64_t j0 = kv_tile * kBlockK;
    const int cols = static_cast<int>(std::min<std::int64_t>(kBlockK, seq.k - j0));
    if (kv_tile + 1 < tile_end)
      prefetch_keys(p, seq, item.b, item.head_kv, j0 + kBlockK,
                    std::min<std::int64_t>(kBlockK, seq.k - j0 - kBlockK));
    for (int jj = 0; jj < cols; ++jj) {
      const std::int64_t k_off = key_offset(p, p.k, seq, item.b, j0 + jj, item.head_kv);
      const std::int64_t v_off = key_offset(p, p.v, seq, item.b, j0 + jj, item.head_kv);
      load_row(static_cast<const char*>(p.k.data) + k_off * elem, p.dtype, ws.k + jj * d_pad, d, d_pad);
      load_row(static_cast<const char*>(p.v.data) + v_off * elem, p.dtype, ws.v + jj * dv_pad, dv, dv_pad);
    }

    gemm_bcast<Arch>(cols, static_cast<int>(rows_pad), static_cast<int>(d), ws.k, d_pad, 1, ws.qt, kBlockQ,
                     ws.p, kBlockQ, false);
    if (p.softcap > 0.f) {
      const float inv = 1.f / p.softcap;
      for (int jj = 0; jj < cols; ++jj)
        for (std::int64_t r = 0; r < rows_pad; r += W) {
          const std::int64_t at = jj * kBlockQ + r;
          const V t = vtanh(vload<V>(ws.p + at) * inv);
          vstore(ws.p + at, p.softcap * t);
          vstore(ws.dtanh + at, 1.f - t * t);
        }
    }
    if (p.alibi_slopes) {
      for (std::int64_t r = 0; r < rows_pad; ++r)
        ws.diag[r] = static_cast<float>(ws.query[r < rows ? r : 0] + seq.k - seq.q - j0);
      for (int jj = 0; jj < cols; ++jj)
        for (std::int64_t r = 0; r < rows_pad; ++r)
          ws.p[jj * kBlockQ + r] -= ws.slope[r] * std::fabs(ws.diag[r] - static_cast<float>(jj));
    }
    if (p.bias) add_score_bias(p, item.b, ws.query, ws.head, rows, j0, cols, ws.p, kBlockQ);
    if (!(max_first <= j0 && j0 + cols - 1 <= min_last)) {
      // Visible range per row relative to the tile, as floats (exact: clamped to
      // [-2, kBlockK + 1], which keeps empty ranges empty) so the test vectorises.
      for (std::int64_t r = 0; r < rows_pad; ++r) {
        const bool real = r < rows;
        ws.lo[r] =
            real ? static_cast<float>(std::clamp<std::int64_t>(ws.first[r] - j0, -2, kBlockK + 1)) : -2.f;
        ws.hi[r] = real ? static_cast<float>(std::clamp<std::int64_t>(ws.last[r] - j0, -2, kBlockK + 1))
                        : kBlockK + 1.f;
      }
      for (int jj = 0; jj < cols; ++jj) {
        const V key = vsplat<V>(static_cast<float>(jj));
        for (std::int64_t r = 0; r < rows_pad; r += W) {
          float* at = ws.p + jj * kBlockQ + r;
          const V visible = vload<V>(at);
          vstore(at, key < vload<V>(ws.lo + r) || key > vload<V>(ws.hi + r) ? vsplat<V>(kNegInf) : visible);
        }
      }
    }
    for (int jj = 0; jj < cols; ++jj)
      for (std::int64_t r = 0; r < rows_pad; r += W)
        vstore(ws.p + jj * kBlockQ + r, vexp(vload<V>(ws.p + jj * kBlockQ + r) - vload<V>(ws.lse + r)));

    const float* pd = ws.p;
    if (drop_threshold > 0) {
      for (int jj = 0; jj < cols; ++jj)
        for (std::int64_t r = rows; r < rows_pad; ++r) ws.pd[jj * kBlockQ + r] = 0.f;
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t batch_head = item.b * p.heads + ws.head[r];
        for (int j8 = 0; j8 < cols; j8 += 8) {
          const Philox4 draws =
              dropout_draws(p.dropout_seed, p.dropout_offset, batch_head, ws.query[r], j0 + j8);
          for (int jj = j8; jj < std::min(cols, j8 + 8); ++jj) {
            const float prob = ws.p[jj * kBlockQ + r];
            ws.pd[jj * kBlockQ + r] = dropout_lane(draws, jj) < drop_threshold ? 0.f : prob * keep_scale;
          }
        }
      }
      pd = ws.pd;
    }

    // dV += Pd^T dO;  dPt = V dO^T.
    gemm_bcast<Arch>(cols, static_cast<int>(dv_pad), static_cast<int>(rows), pd, kBlockQ, 1, ws.dout, dv_pad,
                     dv_acc + j0 * dv_pad, dv_pad, true);
    gemm_bcast<Arch>(cols, static_cast<int>(rows_pad), static_cast<int>(dv), ws.v, dv_pad, 1, ws.doutt,
                     kBlockQ, ws.ds, kBlockQ, false);

    // dS = P (dP Z/(1-p) - D) (1 - tanh^2). Pd is nonzero exactly where the
    // element was kept and P > 0; where P == 0, dS is 0 whatever Z is.
    for (int jj = 0; jj < cols; ++jj)
      for (std::int64_t r = 0; r < rows_pad; r += W) {
        const std::int64_t at = jj * kBlockQ + r;
        V dp = vload<V>(ws.ds + at);
        if (drop_threshold > 0) dp = vload<V>(ws.pd + at) != V{} ? dp * keep_scale : V{};
        V ds = vload<V>(ws.p + at) * (dp - vload<V>(ws.delta + r));
        if (p.softcap > 0.f) ds *= vload<V>(ws.dtanh + at);
        vstore(ws.ds + at, ds);
      }

    // dK += dS^T (scale Q);  dQ += dS K.
    gemm_bcast<Arch>(cols, static_cast<int>(d_pad), static_cast<int>(rows), ws.ds, kBlockQ, 1, ws.q, d_pad,
                     dk_acc + j0 * d_pad, d_pad, true);
    gemm_bcast<Arch>(static_cast<int>(rows), static_cast<int>(d_pad), cols, ws.ds, 1, kBlockQ, ws.k, d_pad,
                     ws.dq, d_pad, true);
  }

  for (std::int64_t r = 0; r < rows; ++r) {
    float* dq = ws.dq + r * d_pad;
    for (std::int64_t c = 0; c < d; ++c) dq[c] *= p.scale;
    store_row(static_cast<char*>(p.dq.data) + query_offset(p.dq, seq, item.b, ws.query[r], ws.head[r]) * elem,
              p.dtype, dq, d);
  }
}

// One work item: zero its dK/dV slot, run its query tiles.
template <class Arch>
TILED_INLINE void backward_item(const BackwardParams& p, const BackwardItem& item, const float* delta,
                                float* slot, BackwardScratch& ws) {
  const SequenceLengths seq = sequence_lengths(p, item.b);
  const std::int64_t d_pad = round_up(p.head_dim, kPad), dv_pad = round_up(p.head_dim_v, kPad);
  float* dk_acc = slot;
  float* dv_acc = slot + p.seqlen_k * d_pad;
  for (std::int64_t x = 0; x < seq.k * d_pad; ++x) dk_acc[x] = 0.f;
  for (std::int64_t x = 0; x < seq.k * dv_pad; ++x) dv_acc[x] = 0.f;
  const std::int64_t tiles = ceil_div(seq.q * group_size(p), kBlockQ);
  // Tiles dealt round-robin: under a causal mask later tiles see more keys.
  for (std::int64_t tile = item.chunk; tile < tiles; tile += item.chunks)
    backward_query_tile<Arch>(p, item, seq, tile, delta, dk_acc, dv_acc, ws);
}

using BackwardItemFn = void (*)(const BackwardParams&, const BackwardItem&, const float*, float*,
                                BackwardScratch&);

[[gnu::target("avx512f"), gnu::flatten]] void backward_item_avx512(const BackwardParams& p,
                                                                   const BackwardItem& item,
                                                                   const float* delta, float* slot,
                                                                   BackwardScratch& ws) {
  backward_item<ArchAvx512>(p, item, delta, slot, ws);
}
[[gnu::target("avx2,fma"), gnu::flatten]] void backward_item_avx2(const BackwardParams& p,
                                                                  const BackwardItem& item,
                                                                  const float* delta, float* slot,
                                                                  BackwardScratch& ws) {
  backward_item<ArchAvx2>(p, item, delta, slot, ws);
}
[[gnu::flatten]] void backward_item_baseline(const BackwardParams& p, const BackwardItem& item,
                                             const float* delta, float* slot, BackwardScratch& ws) {
  backward_item<ArchBaseline>(p, item, delta, slot, ws);
}

BackwardItemFn backward_item_for(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return backward_item_avx512;
    case Isa::avx2:
      return backward_item_avx2;
    default:
      return backward_item_baseline;
  }
}

// Rows of dk/dv for keys [0, count) of sequence b from fp32 rows (stride
// d_pad / dv_pad) of each source; several sources are summed in order.
void store_dk_dv(const BackwardParams& p, const SequenceLengths& seq, std::int64_t b, std::int64_t head_kv,
                 std::int64_t key_begin, std::int64_t key_end, const float* const* dk_sources,
                 const float* const* dv_sources, std::int64_t sources, float* row) {
  const std::int64_t d_pad = round_up(p.head_dim, kPad), dv_pad = round_up(p.head_dim_v, kPad);
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  for (std::int64_t j = key_begin; j < key_end; ++j) {
    for (std::int64_t c = 0; c < p.head_dim; ++c) {
      float sum = 0.f;
      for (std::int64_t s = 0; s < sources; ++s) sum += dk_sources[s][j * d_pad + c];
      row[c] = sum;
    }
    store_row(static_cast<char*>(p.dk.data) + key_offset(p, p.dk, seq, b, j, head_kv) * elem, p.dtype, row,
              p.head_dim);
    for (std::int64_t c = 0; c < p.head_dim_v; ++c) {
      float sum = 0.f;
      for (std::int64_t s = 0; s < sources; ++s) sum += dv_sources[s][j * dv_pad + c];
      row[c] = sum;
    }
    store_row(static_cast<char*>(p.dv.data) + key_offset(p, p.dv, seq, b, j, head_kv) * elem, p.dtype, row,
              p.head_dim_v);
  }
}

// D_i = dO_i . O_i for every used row, the per-sequence dsink partials, and
// zeros for varlen rows outside the used ranges (seqused).
void preprocess(const BackwardParams& p, const BackwardWorkspace& layout, int threads) {
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(p.dtype));
  const std::int64_t dv = p.head_dim_v;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t index = 0; index < p.batch * p.heads; ++index) {
      const std::int64_t b = index / p.heads, head = index % p.heads;
      const SequenceLengths seq = sequence_lengths(p, b);
      double dsink = 0.0;
      for (std::int64_t i = 0; i < seq.q; ++i) {
        const char* dout =
            static_cast<const char*>(p.dout.data) + query_offset(p.dout, seq, b, i, head) * elem;
        const char* out = static_cast<const char*>(p.out.data) + query_offset(p.out, seq, b, i, head) * elem;
        double dot = 0.0;
        for (std::int64_t c = 0; c < dv; ++c)
          dot += static_cast<double>(load_float(dout, p.dtype, c)) * load_float(out, p.dtype, c);
        layout.delta[index * p.seqlen_q + i] = static_cast<float>(dot);
        if (p.sink) {
          const float lse = p.lse[lse_offset(p, seq, b, i, head)];
          if (lse != kNegInf) dsink += std::exp(static_cast<double>(p.sink[head]) - lse) * dot;
        }
      }
      if (p.sink) layout.dsink[index] = dsink;
    }
    if (p.cu_seqlens_q && p.seqused_q) {
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < p.batch; ++b) {
        const SequenceLengths seq = sequence_lengths(p, b);
        for (std::int64_t i = seq.q; i < p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b]; ++i)
          for (std::int64_t head = 0; head < p.heads; ++head)
            std::memset(static_cast<char*>(p.dq.data) + query_offset(p.dq, seq, b, i, head) * elem, 0,
                        static_cast<std::size_t>(p.head_dim * elem));
      }
    }
    if (p.cu_seqlens_k && p.seqused_k) {
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < p.batch; ++b) {
        const SequenceLengths seq = sequence_lengths(p, b);
        for (std::int64_t j = seq.k; j < p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b]; ++j)
          for (std::int64_t head_kv = 0; head_kv < p.heads_kv; ++head_kv) {
            std::memset(static_cast<char*>(p.dk.data) + key_offset(p, p.dk, seq, b, j, head_kv) * elem, 0,
                        static_cast<std::size_t>(p.head_dim * elem));
            std::memset(static_cast<char*>(p.dv.data) + key_offset(p, p.dv, seq, b, j, head_kv) * elem, 0,
                        static_cast<std::size_t>(p.head_dim_v * elem));
          }
      }
    }
  }
  if (p.sink) {
    for (std::int64_t head = 0; head < p.heads; ++head) {
      double sum = 0.0;
      for (std::int64_t b = 0; b < p.batch; ++b) sum += layout.dsink[b * p.heads + head];
      p.dsink[head] = static_cast<float>(-sum);
    }
  }
}

}  // namespace

const char* unsupported_reason(const BackwardParams& p) noexcept {
  if (p.q.data && p.dtype == DType::int32) return "cpu_tiled: int32 attention inputs are not floating point";
  if (p.is_kvcache) return "cpu_tiled: no backward through a KV cache";
  return nullptr;
}

std::size_t workspace_size(const BackwardParams& p, int threads) noexcept {
  threads = std::max(threads, 1);
  const BackwardWorkspace layout(p, threads, nullptr);
  return layout.shared_bytes + static_cast<std::size_t>(threads) * layout.thread_bytes;
}

Status run(const BackwardParams& p, const ExecutionContext& ctx) noexcept {
  return run(p, ctx, detect_isa());
}

Status run(const BackwardParams& p, const ExecutionContext& ctx, Isa isa) noexcept {
  if (p.batch == 0 || p.heads == 0) return Status();
  const int requested = std::max(cpu_threads(ctx), 1);
  {
    // Checked against the requested count: workspace_size's answer must suffice.
    const BackwardWorkspace sized(p, requested, nullptr);
    const std::size_t needed = sized.shared_bytes + static_cast<std::size_t>(requested) * sized.thread_bytes;
    if (!ctx.workspace || ctx.workspace_bytes < needed)
      return Status::error(
          ErrorCode::invalid_argument,
          "workspace: %zu bytes given, cpu_tiled backward needs %zu for %d threads (see workspace_size)",
          ctx.workspace_bytes, needed, requested);
  }
  // Fewer threads for small problems: the chunking (and so the summation
  // order) depends on shapes only, so the result is the same bits regardless.
  const double flops = 5.0 * static_cast<double>(p.batch * p.seqlen_q * p.heads) *
                       static_cast<double>(p.seqlen_k) * static_cast<double>(p.head_dim + p.head_dim_v);
  const int threads = threads_for_work(flops, p.batch * p.heads_kv * chunks_per_group(p), requested);
  const BackwardWorkspace layout(p, threads, ctx.workspace);

  preprocess(p, layout, threads);

  const BackwardItemFn item_fn = backward_item_for(isa);
  const std::int64_t chunks = layout.chunks, items = p.batch * p.heads_kv * chunks;
  char* const thread_base = static_cast<char*>(ctx.workspace) + layout.shared_bytes;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int thread = omp_get_thread_num();
    Carver carver(thread_base + static_cast<std::size_t>(thread) * layout.thread_bytes);
    BackwardScratch ws = BackwardScratch::carve(carver, p);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t index = 0; index < items; ++index) {
      BackwardItem item{index / chunks / p.heads_kv, index / chunks % p.heads_kv, index % chunks, chunks};
      float* slot = layout.dk_slot(chunks == 1 ? thread : index);
      item_fn(p, item, layout.delta, slot, ws);
      if (chunks == 1) {
        const SequenceLengths seq = sequence_lengths(p, item.b);
        const float* dk = slot;
        const float* dv = slot + p.seqlen_k * round_up(p.head_dim, kPad);
        store_dk_dv(p, seq, item.b, item.head_kv, 0, seq.k, &dk, &dv, 1, ws.row);
      }
    }
    if (chunks > 1) {
      // Sum the chunks' accumulators in chunk order, a KV tile per step.
      const std::int64_t key_tiles = ceil_div(p.seqlen_k, kBlockK);
      const float* dk_sources[64];
      const float* dv_sources[64];
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t index = 0; index < p.batch * p.heads_kv * key_tiles; ++index) {
        const std::int64_t group = index / key_tiles, key_tile = index % key_tiles;
        const std::int64_t b = group / p.heads_kv, head_kv = group % p.heads_kv;
        const SequenceLengths seq = sequence_lengths(p, b);
        const std::int64_t begin = key_tile * kBlockK, end = std::min(seq.k, begin + kBlockK);
        if (begin >= end) continue;
        for (std::int64_t c = 0; c < chunks; ++c) {
          dk_sources[c] = layout.dk_slot(group * chunks + c);
          dv_sources[c] = dk_sources[c] + p.seqlen_k * round_up(p.head_dim, kPad);
        }
        store_dk_dv(p, seq, b, head_kv, begin, end, dk_sources, dv_sources, chunks, ws.row);
      }
    }
  }
  return Status();
}

}  // namespace flashattn::detail::cpu_tiled
