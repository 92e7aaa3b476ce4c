// Stand-alone correctness check and benchmark of the cuda_sm90 (Hopper) forward
// backend, driving detail::cuda_sm90::run with hand-built AttentionParams. The
// case builder and float64 reference are those of bench/sm80_forward_check.cu
// (same params, same shared semantic helpers); the cases are the ones sm90
// covers, each launched twice over NaN-poisoned outputs (results must be
// bit-identical), plus a check that uncovered cases are refused with a reason.
// Every CUDA call is checked.
//
//   sm90_forward_check            # correctness cases, exits 1 on any failure
//   sm90_forward_check bench [d]  # TFLOP/s on the standard grid (bf16), JSON rows
//   sm90_forward_check small      # one small case (for compute-sanitizer)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "common/mask.h"
#include "common/numeric.h"
#include "common/params.h"
#include "common/philox.h"

using namespace flashattn;
using namespace flashattn::detail;

#define CHECK_CUDA(call)                                                                          \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)

namespace {

std::mt19937_64 rng(12345);

// A host buffer of 16-bit elements mirrored on the device.
struct Buffer {
  std::vector<std::uint16_t> host;
  void* device = nullptr;
  explicit Buffer(std::size_t n, DType dtype, bool random = true, float amplitude = 1.f) : host(n) {
    std::uniform_real_distribution<float> u(-amplitude, amplitude);
    for (auto& x : host) {
      const float value = random ? u(rng) : NAN;
      x = dtype == DType::float16 ? float_to_fp16(value) : float_to_bf16(value);
    }
    CHECK_CUDA(cudaMalloc(&device, std::max<std::size_t>(n, 1) * 2));
    upload();
  }
  void upload() { CHECK_CUDA(cudaMemcpy(device, host.data(), host.size() * 2, cudaMemcpyHostToDevice)); }
  void download() { CHECK_CUDA(cudaMemcpy(host.data(), device, host.size() * 2, cudaMemcpyDeviceToHost)); }
  ~Buffer() { cudaFree(device); }
};

template <typename T>
struct DeviceArray {
  std::vector<T> host;
  T* device = nullptr;
  explicit DeviceArray(std::vector<T> values) : host(std::move(values)) {
    CHECK_CUDA(cudaMalloc(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
    CHECK_CUDA(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download() { CHECK_CUDA(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost)); }
  ~DeviceArray() { cudaFree(device); }
};

struct Case {
  std::string name;
  DType dtype = DType::float16;
  int b = 2, sq = 128, sk = 128, h = 4, hk = 4, d = 64, dv = 64;
  bool causal = false;
  std::int64_t left = -1, right = -1;
  float softcap = 0.f;
  bool alibi = false, sink = false;
  float dropout = 0.f;
  bool lse = true;
  bool varlen = false;              // sequences of lengths q_lens/k_lens packed
  std::vector<int> q_lens, k_lens;  // varlen lengths (b entries)
  bool seqused_k = false;
  int page_size = 0;                // > 0: paged K/V
  bool head_major = false;          // q/k/v/out stored (b, h, s, d) instead of (b, s, h, d)
  // KV cache
  bool kvcache = false;
  int s_new = 0, rotary_dim = 0;
  bool rotary_interleaved = true, batch_idx = false, leftpad = false;
  int num_splits = 1;
  float scale = 0.f;  // 0: 1/sqrt(d)
};

float to_f(DType t, std::uint16_t x) { return t == DType::float16 ? fp16_to_float(x) : bf16_to_float(x); }
std::uint16_t from_f(DType t, float x) { return t == DType::float16 ? float_to_fp16(x) : float_to_bf16(x); }

// Rotary of element c of a row (host copy of the kernel's semantics), fp64.
double rotate(const Case& c, DType t, const std::uint16_t* row, int col, const std::uint16_t* cos_row,
              const std::uint16_t* sin_row) {
  const double x = to_f(t, row[col]);
  if (col >= c.rotary_dim) return x;
  const int half = c.rotary_dim / 2;
  int m, partner;
  bool first;
  if (c.rotary_interleaved) {
    m = col / 2, first = col % 2 == 0, partner = first ? col + 1 : col - 1;
  } else {
    first = col < half, m = first ? col : col - half, partner = first ? col + half : col - half;
  }
  const double cs = to_f(t, cos_row[m]), sn = to_f(t, sin_row[m]), y = to_f(t, row[partner]);
  return first ? x * cs - y * sn : y * sn + x * cs;
}

bool run_case(const Case& c) {
  std::vector<std::uint16_t> first_out;
  const DType t = c.dtype;
  const int b = c.b, h = c.h, hk = c.hk, d = c.d, dv = c.dv;
  std::vector<int> q_lens = c.varlen ? c.q_lens : std::vector<int>(b, c.sq);
  std::vector<int> k_lens = !c.k_lens.empty() ? c.k_lens : std::vector<int>(b, c.sk);
  std::vector<int> cu_q(b + 1, 0), cu_k(b + 1, 0);
  for (int i = 0; i < b; ++i) cu_q[i + 1] = cu_q[i] + q_lens[i], cu_k[i + 1] = cu_k[i] + k_lens[i];
  const int max_q = *std::max_element(q_lens.begin(), q_lens.end());
  const int max_k = *std::max_element(k_lens.begin(), k_lens.end());
  const std::int64_t total_q = c.varlen ? cu_q[b] : std::int64_t(b) * c.sq;

  AttentionParams p;
  p.dtype = t;
  p.batch = b, p.heads = h, p.heads_kv = hk, p.head_dim = d, p.head_dim_v = dv;
  p.seqlen_q = max_q, p.seqlen_k = max_k;
  p.scale = c.scale != 0.f ? c.scale : 1.f / std::sqrt(float(d));
  p.softcap = c.softcap;
  p.mask.window_left = c.left;
  p.mask.window_right = c.causal ? 0 : c.right;
  p.dropout_p = c.dropout, p.dropout_seed = 0x1234567890ull, p.dropout_offset = 77;

  // q / out: (b, s, h, d) or head-major; varlen packs rows.
  Buffer q(total_q * h * d, t), out(total_q * h * dv, t, false);
  auto set_q_like = [&](Operand& op, void* data, int width) {
    op.data = data;
    if (c.varlen) {
      op.batch_stride = 0, op.row_stride = std::int64_t(h) * width, op.head_stride = width;
    } else if (c.head_major) {
      op.head_stride = std::int64_t(c.sq) * width, op.row_stride = width, op.batch_stride = std::int64_t(h) * c.sq * width;
    } else {
      op.head_stride = width, op.row_stride = std::int64_t(h) * width, op.batch_stride = std::int64_t(c.sq) * h * width;
    }
  };
  set_q_like(p.q, q.device, d);
  set_q_like(p.out, out.device, dv);

  // K/V: dense (b, sk, hk, d) [or head-major], varlen packed, paged blocks, or a KV cache.
  std::int64_t kv_rows_total;  // rows in the k buffer
  int num_blocks = 0, max_blocks = 0;
  std::vector<int> block_table;
  int b_cache = c.batch_idx ? b + 2 : b;
  int s_cache = 0;
  std::vector<int> cache_seqlens, batch_idx, leftpad;
  if (c.kvcache) {
    s_cache = max_k + c.s_new + 5;
    for (int i = 0; i < b; ++i) {
      cache_seqlens.push_back(k_lens[i]);
      batch_idx.push_back(c.batch_idx ? (b + 1 - i) : i);
      leftpad.push_back(c.leftpad ? std::min(3 * i, k_lens[i]) : 0);
    }
  }
  if (c.page_size > 0) {
    const int cap = c.kvcache ? s_cache : max_k;
    max_blocks = (cap + c.page_size - 1) / c.page_size;
    num_blocks = b * max_blocks + 3;
    std::vector<int> perm(num_blocks);
    for (int i = 0; i < num_blocks; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    block_table.assign(perm.begin(), perm.begin() + b * max_blocks);
    kv_rows_total = std::int64_t(num_blocks) * c.page_size;
  } else if (c.kvcache) {
    kv_rows_total = std::int64_t(b_cache) * s_cache;
  } else {
    kv_rows_total = c.varlen ? cu_k[b] : std::int64_t(b) * c.sk;
  }
  Buffer k(kv_rows_total * hk * d, t), v(kv_rows_total * hk * dv, t);
  auto set_kv = [&](Operand& op, void* data, int width) {
    op.data = data;
    op.head_stride = width, op.row_stride = std::int64_t(hk) * width;
    if (c.page_size > 0) op.batch_stride = std::int64_t(c.page_size) * hk * width;
    else if (c.kvcache) op.batch_stride = std::int64_t(s_cache) * hk * width;
    else if (c.varlen) op.batch_stride = 0;
    else if (c.head_major) op.head_stride = std::int64_t(c.sk) * width, op.row_stride = width, op.batch_stride = std::int64_t(hk) * c.sk * width;
    else op.batch_stride = std::int64_t(c.sk) * hk * width;
  };
  set_kv(p.k, k.device, d);
  set_kv(p.v, v.device, dv);

  DeviceArray<int> d_cu_q(cu_q), d_cu_k(cu_k), d_table(block_table.empty() ? std::vector<int>{0} : block_table);
  std::vector<int> used_k(b);
  for (int i = 0; i < b; ++i) used_k[i] = std::max(0, k_lens[i] - 7 * (i % 2));
  DeviceArray<int> d_used_k(used_k), d_cache_seqlens(cache_seqlens.empty() ? std::vector<int>{0} : cache_seqlens),
      d_batch_idx(batch_idx.empty() ? std::vector<int>{0} : batch_idx), d_leftpad(leftpad.empty() ? std::vector<int>{0} : leftpad);
  if (c.varlen) {
    p.cu_seqlens_q = d_cu_q.device;
    if (!c.kvcache) p.cu_seqlens_k = d_cu_k.device;
    if (c.seqused_k) p.seqused_k = d_used_k.device;
  }
  if (c.page_size > 0) {
    p.block_table = d_table.device, p.block_table_batch_stride = max_blocks, p.page_size = c.page_size;
  }
  std::unique_ptr<Buffer> k_new, v_new, rcos, rsin;
  if (c.kvcache) {
    p.is_kvcache = true;
    p.cache_seqlens = d_cache_seqlens.device;
    if (c.batch_idx) p.cache_batch_idx = d_batch_idx.device;
    if (c.leftpad) p.leftpad_k = d_leftpad.device;
    p.cache_capacity = c.page_size > 0 ? std::int64_t(max_blocks) * c.page_size : s_cache;
    p.seqlen_k = max_k + c.s_new;
    if (c.s_new > 0) {
      k_new = std::make_unique<Buffer>(std::size_t(b) * c.s_new * hk * d, t);
      v_new = std::make_unique<Buffer>(std::size_t(b) * c.s_new * hk * dv, t);
      p.k_new = Operand{k_new->device, std::int64_t(c.s_new) * hk * d, std::int64_t(hk) * d, d};
      p.v_new = Operand{v_new->device, std::int64_t(c.s_new) * hk * dv, std::int64_t(hk) * dv, dv};
      p.seqlen_new = c.s_new;
    }
    if (c.rotary_dim > 0) {
      const int rows = s_cache + c.sq + 4;
      rcos = std::make_unique<Buffer>(std::size_t(rows) * c.rotary_dim / 2, t);
      rsin = std::make_unique<Buffer>(std::size_t(rows) * c.rotary_dim / 2, t);
      p.rotary_cos = rcos->device, p.rotary_sin = rsin->device, p.rotary_dim = c.rotary_dim;
      p.rotary_cos_row_stride = p.rotary_sin_row_stride = c.rotary_dim / 2;
      p.rotary_interleaved = c.rotary_interleaved;
    }
    p.num_splits = c.num_splits;
  }
  std::vector<float> slopes(std::size_t(b) * h), sinks(h);
  for (auto& s : slopes) s = std::uniform_real_distribution<float>(0.01f, 0.5f)(rng);
  for (auto& s : sinks) s = std::uniform_real_distribution<float>(-2.f, 2.f)(rng);
  DeviceArray<float> d_slopes(slopes), d_sinks(sinks);
  if (c.alibi) p.alibi_slopes = d_slopes.device, p.alibi_batch_stride = h;
  if (c.sink) p.sink = d_sinks.device;
  // LSE: (b, h, sq) batched, (h, total_q) varlen.
  DeviceArray<float> d_lse(std::vector<float>(total_q * h, NAN));
  if (c.lse) {
    p.lse = d_lse.device;
    if (c.varlen) p.lse_batch_stride = 0, p.lse_head_stride = total_q, p.lse_row_stride = 1;
    else p.lse_batch_stride = std::int64_t(h) * c.sq, p.lse_head_stride = c.sq, p.lse_row_stride = 1;
  }

  if (const char* why = cuda_sm90::unsupported_reason(p)) {
    std::printf("%-44s UNSUPPORTED: %s\n", c.name.c_str(), why);
    return false;
  }
  const std::size_t ws_bytes = cuda_sm90::workspace_size(p, 0);
  void* ws = nullptr;
  if (ws_bytes) CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
  if (ws_bytes) CHECK_CUDA(cudaMemset(ws, 0xFF, ws_bytes));  // NaN poison
  ExecutionContext ctx;
  ctx.backend = Backend::cuda_sm90, ctx.workspace = ws, ctx.workspace_bytes = ws_bytes;

  // Reference on host copies: a params struct with host pointers, same strides.
  AttentionParams hp = p;
  hp.cu_seqlens_q = c.varlen ? cu_q.data() : nullptr;
  hp.cu_seqlens_k = (c.varlen && !c.kvcache) ? cu_k.data() : nullptr;
  hp.seqused_k = c.seqused_k ? used_k.data() : nullptr;
  hp.block_table = c.page_size > 0 ? block_table.data() : nullptr;
  hp.cache_seqlens = c.kvcache ? cache_seqlens.data() : nullptr;
  hp.cache_batch_idx = c.batch_idx ? batch_idx.data() : nullptr;
  hp.leftpad_k = c.leftpad ? leftpad.data() : nullptr;
  hp.alibi_slopes = c.alibi ? slopes.data() : nullptr;
  hp.sink = c.sink ? sinks.data() : nullptr;
  std::vector<std::uint16_t> kh = k.host, vh = v.host;  // cache after the append
  if (c.kvcache && c.s_new > 0) {
    for (int bi = 0; bi < b; ++bi) {
      const SequenceLengths s = sequence_lengths(hp, bi);
      for (int tt = 0; tt < c.s_new; ++tt)
        for (int hh = 0; hh < hk; ++hh) {
          const std::int64_t pos = s.cache_end + tt;
          const std::uint16_t* krow = k_new->host.data() + (std::int64_t(bi) * c.s_new + tt) * hk * d + hh * d;
          const std::uint16_t* vrow = v_new->host.data() + (std::int64_t(bi) * c.s_new + tt) * hk * dv + hh * dv;
          const std::int64_t ko = kv_offset(hp, hp.k, s, bi, pos, hh), vo = kv_offset(hp, hp.v, s, bi, pos, hh);
          for (int col = 0; col < d; ++col) {
            kh[ko + col] = c.rotary_dim > 0
                               ? from_f(t, float(rotate(c, t, krow, col, rcos->host.data() + pos * (c.rotary_dim / 2),
                                                        rsin->host.data() + pos * (c.rotary_dim / 2))))
                               : krow[col];
          }
          for (int col = 0; col < dv; ++col) vh[vo + col] = vrow[col];
        }
    }
  }

  CHECK_CUDA(cudaDeviceSynchronize());
  Status status = cuda_sm90::run(p, ctx);
  if (status.ok() && !c.kvcache) {
    // A second launch over re-poisoned outputs must give bit-identical results
    // (a moving result is a race).
    CHECK_CUDA(cudaDeviceSynchronize());
    out.download();
    first_out = out.host;
    std::vector<std::uint16_t> poison(out.host.size(), 0x7fff);
    CHECK_CUDA(cudaMemcpy(out.device, poison.data(), poison.size() * 2, cudaMemcpyHostToDevice));
    status = cuda_sm90::run(p, ctx);
  }
  if (!status.ok()) {
    std::printf("%-44s RUN FAILED: %s\n", c.name.c_str(), status.message());
    return false;
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  out.download();
  d_lse.download();
  if (c.kvcache && c.s_new > 0) {
    k.download(), v.download();
    if (k.host != kh || v.host != vh) {
      std::size_t diffs = 0;
      for (std::size_t i = 0; i < kh.size(); ++i) diffs += std::fabs(to_f(t, k.host[i]) - to_f(t, kh[i])) > 1e-2f;
      for (std::size_t i = 0; i < vh.size(); ++i) diffs += v.host[i] != vh[i];
      if (diffs) {
        std::printf("%-44s FAIL: cache after append differs in %zu elements\n", c.name.c_str(), diffs);
        return false;
      }
    }
  }

  double max_err = 0, max_ref = 0, max_lse_err = 0;
  std::size_t bad = 0;
  const std::uint32_t threshold = c.dropout > 0 ? dropout_threshold(c.dropout) : 0;
  std::vector<double> qrow(d), logits, o(dv);
  for (int bi = 0; bi < b; ++bi) {
    const SequenceLengths s = sequence_lengths(hp, bi);
    for (int hh = 0; hh < h; ++hh) {
      const std::int64_t kvh = kv_head_of(hp, hh);
      for (std::int64_t i = 0; i < s.q; ++i) {
        const std::uint16_t* qr = q.host.data() + query_offset(hp.q, s, bi, i, hh);
        for (int col = 0; col < d; ++col) {
          if (c.kvcache && c.rotary_dim > 0) {
            const std::int64_t pos = rotary_query_position(hp, s, i);
            qrow[col] = to_f(t, from_f(t, float(rotate(c, t, qr, col, rcos->host.data() + pos * (c.rotary_dim / 2),
                                                         rsin->host.data() + pos * (c.rotary_dim / 2)))));
          } else {
            qrow[col] = to_f(t, qr[col]);
          }
        }
        logits.assign(s.k, -INFINITY);
        double mx = -INFINITY;
        for (std::int64_t j = 0; j < s.k; ++j) {
          if (!key_visible(hp.mask, i, j, s.q, s.k)) continue;
          const std::uint16_t* kr = kh.data() + key_offset(hp, hp.k, s, bi, j, kvh);
          double x = 0;
          for (int col = 0; col < d; ++col) x += qrow[col] * to_f(t, kr[col]);
          x *= p.scale;
          if (c.softcap > 0) x = c.softcap * std::tanh(x / c.softcap);
          if (c.alibi) x += alibi_bias(slopes[bi * h + hh], i, j, s.q, s.k);
          logits[j] = x;
          mx = std::max(mx, x);
        }
        double sum = 0, lse;
        const double sink = c.sink ? sinks[hh] : -INFINITY;
        const double m2 = std::max(mx, sink);
        std::fill(o.begin(), o.end(), 0.0);
        if (m2 == -INFINITY) {
          lse = -INFINITY;
        } else {
          for (std::int64_t j = 0; j < s.k; ++j) sum += std::exp(logits[j] - m2);
          if (c.sink) sum += std::exp(sink - m2);
          lse = m2 + std::log(sum);
          for (std::int64_t j = 0; j < s.k; ++j) {
            if (logits[j] == -INFINITY) continue;
            double pj = std::exp(logits[j] - m2) / sum;
            if (threshold) {
              if (dropout_is_dropped(p.dropout_seed, p.dropout_offset, threshold, std::int64_t(bi) * h + hh, i, j)) continue;
              pj /= (1.0 - c.dropout);
            }
            const std::uint16_t* vr = vh.data() + key_offset(hp, hp.v, s, bi, j, kvh);
            for (int col = 0; col < dv; ++col) o[col] += pj * to_f(t, vr[col]);
          }
        }
        const std::uint16_t* orow = out.host.data() + query_offset(hp.out, s, bi, i, hh);
        for (int col = 0; col < dv; ++col) {
          const double got = to_f(t, orow[col]);
          const double err = std::fabs(got - o[col]);
          if (!(err <= 1e30)) ++bad;  // NaN / unwritten
          else max_err = std::max(max_err, err);
          max_ref = std::max(max_ref, std::fabs(o[col]));
        }
        if (c.lse) {
          const double got = d_lse.host[lse_offset(hp, s, bi, i, hh)];
          if (std::isinf(lse) ? !(std::isinf(got) && got < 0) : !(std::fabs(got - lse) <= 1e-3 * std::max(1.0, std::fabs(lse))))
            ++bad, max_lse_err = std::max(max_lse_err, std::fabs(got - lse));
        }
      }
    }
  }
  const double tol = (t == DType::float16 ? 2e-3 : 1.6e-2) * std::max(1.0, max_ref);
  const bool deterministic = first_out.empty() || first_out == out.host;
  if (!deterministic) ++bad;
  const bool ok = bad == 0 && max_err <= tol;
  std::printf("%-44s %s max_err %.2e (tol %.1e) max|ref| %.2f bad %zu lse_err %.1e splits %d\n", c.name.c_str(),
              ok ? "ok  " : "FAIL", max_err, tol, max_ref, bad, max_lse_err,
              c.kvcache ? p.num_splits : 1);
  if (ws) cudaFree(ws);
  return ok;
}


std::vector<Case> cases_for(DType t) {
  std::vector<Case> cases;
  const std::string tn = t == DType::float16 ? "fp16" : "bf16";
  auto add = [&](Case c, const std::string& name) {
    c.dtype = t;
    c.name = tn + " " + name;
    cases.push_back(c);
  };
  for (int d : {64, 128, 256}) {
    const std::string dn = "d" + std::to_string(d);
    Case c;
    c.d = c.dv = d, c.sq = 173, c.sk = 301, c.h = 4, c.hk = 2;
    add(c, dn + " gqa ragged");
    c.causal = true;
    add(c, dn + " gqa ragged causal");
    c = Case{};
    c.d = c.dv = d, c.b = 2, c.sq = 512, c.sk = 512, c.h = 3, c.hk = 3;
    add(c, dn + " 512 aligned");
    c.causal = true;
    add(c, dn + " 512 aligned causal");
    c = Case{};
    c.d = c.dv = d, c.b = 1, c.sq = 1, c.sk = 1000, c.h = 8, c.hk = 1;
    add(c, dn + " mqa decode-like sq=1");
    c = Case{};
    c.d = c.dv = d, c.b = 2, c.sq = 300, c.sk = 77, c.causal = true, c.sink = true, c.h = 2, c.hk = 2;
    add(c, dn + " sq>sk causal (empty rows) +sink");
    c = Case{};
    c.d = c.dv = d, c.b = 1, c.sq = 333, c.sk = 700, c.left = 100, c.right = 20, c.softcap = 15.f, c.h = 2, c.hk = 1;
    add(c, dn + " window(100,20) softcap");
    c = Case{};
    c.d = c.dv = d, c.b = 2, c.sq = 200, c.sk = 260, c.head_major = true, c.h = 4, c.hk = 4, c.causal = true;
    add(c, dn + " head-major causal");
  }
  Case c;
  c.d = c.dv = 128, c.b = 1, c.sq = 2048, c.sk = 2048, c.h = 2, c.hk = 2, c.causal = true;
  add(c, "d128 2048 causal (many tiles per CTA)");
  c = Case{};
  c.d = c.dv = 128, c.b = 3, c.sq = 64, c.sk = 0, c.h = 2, c.hk = 2;
  add(c, "d128 sk=0 (all rows empty)");
  c = Case{};
  c.d = c.dv = 128, c.b = 1, c.sq = 150, c.sk = 40, c.left = 0, c.right = 0, c.h = 2, c.hk = 2;
  add(c, "d128 window(0,0) sq>sk");
  return cases;
}

int check() {
  int failures = 0, total = 0;
  for (DType t : {DType::bfloat16, DType::float16})
    for (const Case& c : cases_for(t)) failures += !run_case(c), ++total;
  // Cases sm90 does not cover must be refused with a reason (the API then falls back to cuda_sm80).
  {
    AttentionParams p;
    p.dtype = DType::bfloat16, p.head_dim = p.head_dim_v = 96;
    const char* why = cuda_sm90::unsupported_reason(p);
    std::printf("%-44s %s\n", "refuses d96", why ? why : "NOT REFUSED");
    failures += why == nullptr, ++total;
  }
  std::printf("%d of %d cases failed\n", failures, total);
  return failures ? 1 : 0;
}

int small() {
  Case c;
  c.dtype = DType::bfloat16, c.name = "bf16 d128 small causal", c.d = c.dv = 128, c.b = 1, c.sq = 300, c.sk = 300;
  c.h = 2, c.hk = 1, c.causal = true;
  return run_case(c) ? 0 : 1;
}

int bench(int argc, char** argv) {
  const DType t = DType::bfloat16;
  std::vector<int> dims = {64, 128, 256};
  if (argc > 2) dims = {std::atoi(argv[2])};
  for (int d : dims)
    for (int causal = 0; causal < 2; ++causal)
      for (int s : {512, 1024, 2048, 4096, 8192, 16384}) {
        const int b = 16384 / s, h = 2048 / d;
        const std::size_t n = std::size_t(b) * s * h * d;
        void *q, *k, *v, *o;
        CHECK_CUDA(cudaMalloc(&q, n * 2));
        CHECK_CUDA(cudaMalloc(&k, n * 2));
        CHECK_CUDA(cudaMalloc(&v, n * 2));
        CHECK_CUDA(cudaMalloc(&o, n * 2));
        {
          Buffer init(n, t);
          CHECK_CUDA(cudaMemcpy(q, init.device, n * 2, cudaMemcpyDeviceToDevice));
          Buffer init_k(n, t);
          CHECK_CUDA(cudaMemcpy(k, init_k.device, n * 2, cudaMemcpyDeviceToDevice));
          Buffer init_v(n, t);
          CHECK_CUDA(cudaMemcpy(v, init_v.device, n * 2, cudaMemcpyDeviceToDevice));
        }
        AttentionParams p;
        p.dtype = t, p.batch = b, p.heads = p.heads_kv = h, p.head_dim = p.head_dim_v = d, p.seqlen_q = p.seqlen_k = s;
        p.scale = 1.f / std::sqrt(float(d));
        p.mask.window_right = causal ? 0 : -1;
        const Operand op{nullptr, std::int64_t(s) * h * d, std::int64_t(h) * d, d};
        p.q = p.k = p.v = p.out = op;
        p.q.data = q, p.k.data = k, p.v.data = v, p.out.data = o;
        ExecutionContext ctx;
        ctx.workspace_bytes = cuda_sm90::workspace_size(p, 0);
        CHECK_CUDA(cudaMalloc(&ctx.workspace, ctx.workspace_bytes));
        cudaEvent_t e0, e1;
        CHECK_CUDA(cudaEventCreate(&e0));
        CHECK_CUDA(cudaEventCreate(&e1));
        for (int w = 0; w < 5; ++w) {
          const Status st = cuda_sm90::run(p, ctx);
          if (!st.ok()) { std::printf("run failed: %s\n", st.message()); return 1; }
        }
        CHECK_CUDA(cudaDeviceSynchronize());
        std::vector<float> times;
        for (int r = 0; r < 30; ++r) {
          CHECK_CUDA(cudaEventRecord(e0));
          (void)cuda_sm90::run(p, ctx);
          CHECK_CUDA(cudaEventRecord(e1));
          CHECK_CUDA(cudaEventSynchronize(e1));
          float ms;
          CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
          times.push_back(ms);
        }
        CHECK_CUDA(cudaGetLastError());
        std::sort(times.begin(), times.end());
        const double flop = 4.0 * b * h * double(s) * s * d / (causal ? 2 : 1);
        std::printf("{\"hdim\": %d, \"causal\": %s, \"seqlen\": %d, \"sm90_fwd\": %.0f, \"ms\": %.4f}\n", d,
                    causal ? "true" : "false", s, flop / times[times.size() / 2] / 1e9, times[times.size() / 2]);
        std::fflush(stdout);
        cudaEventDestroy(e0), cudaEventDestroy(e1);
        cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o), cudaFree(ctx.workspace);
      }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0) return bench(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "small") == 0) return small();
  return check();
}
