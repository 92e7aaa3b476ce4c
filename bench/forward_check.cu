// Stand-alone correctness check and benchmark of one CUDA forward backend, driving
// its internal entry points (detail::cuda_sm80 / detail::cuda_sm90, src/backend.h)
// with hand-built AttentionParams, below the public API, so a kernel change can be
// checked and timed without the test suite. The oracle is the project's own:
// cpu_reference::run (float64 math, results rounded once to fp32) on float32 host
// copies of exactly the data the device saw, as tests/support/oracle.h does. The
// harness holds no second copy of the attention semantics.
//
// Every case runs twice over NaN-poisoned outputs, LSE and workspace; the two
// results must be bit-identical (a moving result is a race). Every CUDA call is
// checked.
//
//   forward_check --backend cuda_sm80|cuda_sm90 [check]  # all cases, exit 1 on any failure
//   forward_check --backend B bench [d]                  # TFLOP/s on the standard grid (bf16), JSON rows
//   forward_check --backend B small                      # one small case (for compute-sanitizer)
//
// The cases are those of the former per-backend harnesses (bench/sm80_forward_check.cu,
// bench/sm90_forward_check.cu). Each names the backends it was written for: when one of
// them refuses it, that is a failure (lost coverage, or a build without that kernel);
// a case that only the other backend covers is reported as refused, with the reason.
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
#include "common/numeric.h"
#include "common/params.h"

using namespace flashattn;
using namespace flashattn::detail;

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

namespace {

// ---------------------------------------------------------------------------
// The backend under test: its three forward entry points behind one table, so
// the harness is written once for both.

constexpr unsigned kSm80 = 1, kSm90 = 2;

struct ForwardBackend {
  const char* name;
  Backend id;
  unsigned bit;           // which cases were written for it (Case::expect)
  const char* bench_key;  // JSON key of the TFLOP/s in bench rows (bench/compare_fa2.py reads "ours_fwd")
  const char* (*unsupported_reason)(const AttentionParams&) noexcept;
  std::size_t (*workspace_size)(const AttentionParams&, int) noexcept;
  Status (*run)(const AttentionParams&, const ExecutionContext&) noexcept;
};

const ForwardBackend* find_backend(const std::string& name) {
  static const ForwardBackend backends[] = {
    {"cuda_sm80", Backend::cuda_sm80, kSm80, "ours_fwd", cuda_sm80::unsupported_reason,
     cuda_sm80::workspace_size, cuda_sm80::run},
#if FLASHATTN_WITH_SM90
    {"cuda_sm90", Backend::cuda_sm90, kSm90, "sm90_fwd", cuda_sm90::unsupported_reason,
     cuda_sm90::workspace_size, cuda_sm90::run},
#endif
  };
  for (const ForwardBackend& b : backends)
    if (name == b.name) return &b;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Buffers.

std::mt19937_64 rng(12345);

float to_f(DType t, std::uint16_t x) { return t == DType::float16 ? fp16_to_float(x) : bf16_to_float(x); }

// A host buffer of 16-bit elements mirrored on the device: random in (-amplitude, amplitude),
// or NaN (poison) when random is false.
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
    CHECK_CUDA(cudaMemcpy(device, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  // The device contents (the host copy keeps what was uploaded).
  std::vector<std::uint16_t> download() const {
    std::vector<std::uint16_t> x(host.size());
    CHECK_CUDA(cudaMemcpy(x.data(), device, x.size() * 2, cudaMemcpyDeviceToHost));
    return x;
  }
  // 0xffff is a NaN in fp16 and bf16 alike.
  void poison() const { CHECK_CUDA(cudaMemset(device, 0xFF, host.size() * 2)); }
  // The host copy widened to fp32 (exact for fp16/bf16), for the reference.
  std::vector<float> widened(DType dtype) const {
    std::vector<float> x(host.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = to_f(dtype, host[i]);
    return x;
  }
  ~Buffer() { CHECK_CUDA(cudaFree(device)); }
};

template <typename T>
struct DeviceArray {
  std::vector<T> host;
  T* device = nullptr;
  explicit DeviceArray(std::vector<T> values) : host(std::move(values)) {
    CHECK_CUDA(cudaMalloc(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
    CHECK_CUDA(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::vector<T> download() const {
    std::vector<T> x(host.size());
    CHECK_CUDA(cudaMemcpy(x.data(), device, x.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return x;
  }
  void poison() const { CHECK_CUDA(cudaMemset(device, 0xFF, host.size() * sizeof(T))); }  // NaN for float
  ~DeviceArray() { CHECK_CUDA(cudaFree(device)); }
};

// ---------------------------------------------------------------------------
// Cases.

struct Case {
  std::string name;
  unsigned expect = 0;  // backends (kSm80 | kSm90) that must run it: a refusal by one of them fails
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
  int page_size = 0;        // > 0: paged K/V
  bool head_major = false;  // q/k/v/out stored (b, h, s, d) instead of (b, s, h, d)
  // KV cache
  bool kvcache = false;
  int s_new = 0, rotary_dim = 0;
  bool rotary_interleaved = true, batch_idx = false, leftpad = false;
  int num_splits = 1;
  float scale = 0.f;  // 0: 1/sqrt(d)
};

enum class Outcome { passed, failed, refused };

Outcome run_case(const ForwardBackend& backend, const Case& c) {
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
      op.head_stride = std::int64_t(c.sq) * width, op.row_stride = width,
      op.batch_stride = std::int64_t(h) * c.sq * width;
    } else {
      op.head_stride = width, op.row_stride = std::int64_t(h) * width,
      op.batch_stride = std::int64_t(c.sq) * h * width;
    }
  };
  set_q_like(p.q, q.device, d);
  set_q_like(p.out, out.device, dv);
  if (c.varlen) p.q_rows = total_q;

  // K/V: dense (b, sk, hk, d) [or head-major], varlen packed, paged blocks, or a KV cache.
  std::int64_t kv_rows_total;  // rows in the k buffer
  int num_blocks = 0, max_blocks = 0;
  std::vector<int> block_table;
  const int b_cache = c.batch_idx ? b + 2 : b;
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
    if (c.page_size > 0)
      op.batch_stride = std::int64_t(c.page_size) * hk * width;
    else if (c.kvcache)
      op.batch_stride = std::int64_t(s_cache) * hk * width;
    else if (c.varlen)
      op.batch_stride = 0;
    else if (c.head_major)
      op.head_stride = std::int64_t(c.sk) * width, op.row_stride = width,
      op.batch_stride = std::int64_t(hk) * c.sk * width;
    else
      op.batch_stride = std::int64_t(c.sk) * hk * width;
  };
  set_kv(p.k, k.device, d);
  set_kv(p.v, v.device, dv);

  DeviceArray<int> d_cu_q(cu_q), d_cu_k(cu_k),
      d_table(block_table.empty() ? std::vector<int>{0} : block_table);
  std::vector<int> used_k(b);
  for (int i = 0; i < b; ++i) used_k[i] = std::max(0, k_lens[i] - 7 * (i % 2));
  DeviceArray<int> d_used_k(used_k),
      d_cache_seqlens(cache_seqlens.empty() ? std::vector<int>{0} : cache_seqlens),
      d_batch_idx(batch_idx.empty() ? std::vector<int>{0} : batch_idx),
      d_leftpad(leftpad.empty() ? std::vector<int>{0} : leftpad);
  if (c.varlen) {
    p.cu_seqlens_q = d_cu_q.device;
    if (!c.kvcache) p.cu_seqlens_k = d_cu_k.device;
    if (c.seqused_k) p.seqused_k = d_used_k.device;
    if (!c.kvcache && c.page_size == 0) p.k_rows = kv_rows_total;
  }
  if (c.page_size > 0) {
    p.block_table = d_table.device, p.block_table_batch_stride = max_blocks, p.page_size = c.page_size;
    p.kv_blocks = num_blocks, p.table_cols = max_blocks;
  }
  std::unique_ptr<Buffer> k_new, v_new, rcos, rsin;
  if (c.kvcache) {
    p.is_kvcache = true;
    p.cache_seqlens = d_cache_seqlens.device;
    if (c.batch_idx) p.cache_batch_idx = d_batch_idx.device;
    if (c.leftpad) p.leftpad_k = d_leftpad.device;
    p.cache_capacity = c.page_size > 0 ? std::int64_t(max_blocks) * c.page_size : s_cache;
    if (c.page_size == 0) p.kv_blocks = b_cache;
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
      p.rotary_rows = rows;
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
    if (c.varlen)
      p.lse_batch_stride = 0, p.lse_head_stride = total_q, p.lse_row_stride = 1;
    else
      p.lse_batch_stride = std::int64_t(h) * c.sq, p.lse_head_stride = c.sq, p.lse_row_stride = 1;
  }

  if (const char* why = backend.unsupported_reason(p)) {
    const bool expected = (c.expect & backend.bit) != 0;
    std::printf("%-44s %s: %s\n", c.name.c_str(),
                expected ? "REFUSED (a case written for it: FAIL)" : "refused", why);
    return expected ? Outcome::failed : Outcome::refused;
  }
  const std::size_t ws_bytes = backend.workspace_size(p, 0);
  void* ws = nullptr;
  if (ws_bytes) CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
  ExecutionContext ctx;
  ctx.backend = backend.id, ctx.workspace = ws, ctx.workspace_bytes = ws_bytes;

  // Two launches, each over NaN-poisoned out, LSE and workspace. With a KV-cache append the
  // second launch writes the same rows at the same positions again (cache_seqlens is the
  // caller's to advance), so it must reproduce the first too.
  std::vector<std::uint16_t> out_dev[2];
  std::vector<float> lse_dev[2];
  for (int launch = 0; launch < 2; ++launch) {
    out.poison();
    d_lse.poison();
    if (ws_bytes) CHECK_CUDA(cudaMemset(ws, 0xFF, ws_bytes));
    CHECK_CUDA(cudaDeviceSynchronize());
    const Status status = backend.run(p, ctx);
    if (!status.ok()) {
      std::printf("%-44s RUN FAILED (launch %d): %s\n", c.name.c_str(), launch + 1, status.message());
      if (ws) CHECK_CUDA(cudaFree(ws));
      return Outcome::failed;
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    out_dev[launch] = out.download();
    lse_dev[launch] = d_lse.download();
  }
  if (ws) CHECK_CUDA(cudaFree(ws));
  const bool deterministic =
      out_dev[0] == out_dev[1] &&
      (!c.lse || std::memcmp(lse_dev[0].data(), lse_dev[1].data(), lse_dev[0].size() * sizeof(float)) == 0);

  // The oracle: cpu_reference::run on fp32 copies of the inputs the device saw (the same
  // strides, host index arrays). Its KV-cache append lands in its own copy of the cache.
  AttentionParams hp = p;
  hp.dtype = DType::float32;
  std::vector<float> ref_q = q.widened(t), ref_k = k.widened(t), ref_v = v.widened(t);
  std::vector<float> ref_out(out.host.size(), NAN), ref_lse(d_lse.host.size(), NAN);
  std::vector<float> ref_k_new, ref_v_new, ref_cos, ref_sin;
  hp.q.data = ref_q.data(), hp.k.data = ref_k.data(), hp.v.data = ref_v.data(), hp.out.data = ref_out.data();
  hp.lse = c.lse ? ref_lse.data() : nullptr;
  if (k_new) {
    ref_k_new = k_new->widened(t), ref_v_new = v_new->widened(t);
    hp.k_new.data = ref_k_new.data(), hp.v_new.data = ref_v_new.data();
  }
  if (rcos) {
    ref_cos = rcos->widened(t), ref_sin = rsin->widened(t);
    hp.rotary_cos = ref_cos.data(), hp.rotary_sin = ref_sin.data();
  }
  hp.cu_seqlens_q = p.cu_seqlens_q ? cu_q.data() : nullptr;
  hp.cu_seqlens_k = p.cu_seqlens_k ? cu_k.data() : nullptr;
  hp.seqused_k = p.seqused_k ? used_k.data() : nullptr;
  hp.block_table = p.block_table ? block_table.data() : nullptr;
  hp.cache_seqlens = p.cache_seqlens ? cache_seqlens.data() : nullptr;
  hp.cache_batch_idx = p.cache_batch_idx ? batch_idx.data() : nullptr;
  hp.leftpad_k = p.leftpad_k ? leftpad.data() : nullptr;
  hp.alibi_slopes = p.alibi_slopes ? slopes.data() : nullptr;
  hp.sink = p.sink ? sinks.data() : nullptr;
  if (const char* why = cpu_reference::unsupported_reason(hp)) {
    std::printf("%-44s FAIL: the reference refuses the case: %s\n", c.name.c_str(), why);
    return Outcome::failed;
  }
  ExecutionContext ref_ctx;
  ref_ctx.backend = Backend::cpu_reference;
  const std::size_t ref_ws_bytes = cpu_reference::workspace_size(hp, cpu_threads(ref_ctx));
  std::vector<double> ref_ws(ref_ws_bytes / sizeof(double) + 1);
  ref_ctx.workspace = ref_ws.data(), ref_ctx.workspace_bytes = ref_ws_bytes;
  if (const Status status = cpu_reference::run(hp, ref_ctx); !status.ok()) {
    std::printf("%-44s FAIL: the reference failed: %s\n", c.name.c_str(), status.message());
    return Outcome::failed;
  }

  // K/V after the launches: untouched, except the appended rows, which must match the
  // reference's append (exactly; k within 1e-2 with rotary, which the reference evaluates in
  // double and rounds to fp32, the kernel in float and rounds to the dtype).
  {
    const std::vector<std::uint16_t> k_dev = k.download(), v_dev = v.download();
    const double k_tol = c.rotary_dim > 0 ? 1e-2 : 0.0;
    std::size_t diffs = 0;
    for (std::size_t i = 0; i < k_dev.size(); ++i)
      diffs += !(std::fabs(to_f(t, k_dev[i]) - ref_k[i]) <= k_tol);
    for (std::size_t i = 0; i < v_dev.size(); ++i) diffs += !(to_f(t, v_dev[i]) == ref_v[i]);
    if (q.download() != q.host) ++diffs;
    if (diffs) {
      std::printf("%-44s FAIL: q/k/v after the launch differ from the reference's in %zu elements\n",
                  c.name.c_str(), diffs);
      return Outcome::failed;
    }
  }

  double max_err = 0, max_ref = 0, max_lse_err = 0;
  std::size_t bad = 0;
  const std::vector<std::uint16_t>& got_out = out_dev[1];
  const std::vector<float>& got_lse = lse_dev[1];
  for (int bi = 0; bi < b; ++bi) {
    const SequenceLengths s = sequence_lengths(hp, bi);
    for (int hh = 0; hh < h; ++hh) {
      for (std::int64_t i = 0; i < s.q; ++i) {
        const std::int64_t row = query_offset(hp.out, s, bi, i, hh);
        for (int col = 0; col < dv; ++col) {
          const double want = ref_out[row + col];
          const double err = std::fabs(to_f(t, got_out[row + col]) - want);
          if (!(err <= 1e30))
            ++bad;  // NaN / unwritten
          else
            max_err = std::max(max_err, err);
          max_ref = std::max(max_ref, std::fabs(want));
        }
        if (c.lse) {
          const std::int64_t at = lse_offset(hp, s, bi, i, hh);
          const double got = got_lse[at], want = ref_lse[at];
          if (std::isinf(want) ? !(std::isinf(got) && got < 0)
                               : !(std::fabs(got - want) <= 1e-3 * std::max(1.0, std::fabs(want))))
            ++bad, max_lse_err = std::max(max_lse_err, std::fabs(got - want));
        }
      }
    }
  }
  const double tol = (t == DType::float16 ? 2e-3 : 1.6e-2) * std::max(1.0, max_ref);
  if (!deterministic) ++bad;
  const bool ok = bad == 0 && max_err <= tol;
  std::printf("%-44s %s max_err %.2e (tol %.1e) max|ref| %.2f bad %zu lse_err %.1e splits %d%s\n",
              c.name.c_str(), ok ? "ok  " : "FAIL", max_err, tol, max_ref, bad, max_lse_err,
              c.kvcache ? p.num_splits : 1, deterministic ? "" : " (second launch differs)");
  return ok ? Outcome::passed : Outcome::failed;
}

// The cases the cuda_sm80 harness had (all written for sm80; the d 64/128/256 "gqa ragged"
// pairs were the sm90 harness's too).
void add_sm80_cases(DType t, std::vector<Case>& cases) {
  const std::string tn = t == DType::float16 ? "fp16" : "bf16";
  auto add = [&](Case c) {
    c.dtype = t;
    c.expect |= kSm80;
    cases.push_back(c);
  };
  for (int d : {32, 64, 96, 128, 160, 192, 224, 256}) {
    Case c;
    c.d = c.dv = d, c.sq = 173, c.sk = 301, c.h = 4, c.hk = 2;
    c.expect = d == 64 || d == 128 || d == 256 ? kSm90 : 0;
    c.name = tn + " d" + std::to_string(d) + " gqa ragged";
    add(c);
    c.causal = true, c.name += " causal";
    add(c);
  }
  Case c;
  c.name = tn + " d40 dv24 window softcap alibi sink";
  c.d = 40, c.dv = 24, c.sq = 200, c.sk = 150, c.left = 37, c.right = 5, c.softcap = 8.f, c.alibi = true,
  c.sink = true;
  add(c);
  c = Case{};
  c.name = tn + " d80 dropout causal", c.d = c.dv = 80, c.sq = 150, c.sk = 190, c.causal = true,
  c.dropout = 0.17f;
  add(c);
  c = Case{};
  c.name = tn + " d64 dv128", c.d = 64, c.dv = 128, c.sq = 64, c.sk = 640;
  add(c);
  c = Case{};
  c.name = tn + " d8 mqa head-major", c.d = c.dv = 8, c.h = 6, c.hk = 1, c.sq = 33, c.sk = 1000,
  c.head_major = true;
  add(c);
  c = Case{};
  c.name = tn + " fully masked rows (sq>sk causal) +sink", c.sq = 300, c.sk = 100, c.causal = true,
  c.sink = true;
  add(c);
  c = Case{};
  c.name = tn + " fully masked rows window(0,0) sq>sk", c.sq = 150, c.sk = 40, c.left = 0, c.right = 0;
  add(c);
  c = Case{};
  c.name = tn + " varlen seqused_k d128 causal", c.varlen = true, c.b = 4, c.d = c.dv = 128;
  c.q_lens = {1, 130, 257, 0}, c.k_lens = {5, 300, 257, 9}, c.seqused_k = true, c.causal = true, c.h = 3,
  c.hk = 1;
  add(c);
  for (int page : {1, 3, 16, 256}) {
    c = Case{};
    c.name = tn + " varlen paged page " + std::to_string(page), c.varlen = true, c.b = 3, c.page_size = page;
    c.q_lens = {17, 129, 64}, c.k_lens = {300, 129, 511};
    add(c);
  }
  for (int splits : {1, 3, 0}) {
    c = Case{};
    c.kvcache = true, c.b = 3, c.h = 8, c.hk = 2, c.d = c.dv = 128;
    c.k_lens = {700, 33, 1200}, c.s_new = 1, c.num_splits = splits, c.sink = splits == 3;
    c.name = tn + " kvcache decode splits " + std::to_string(splits);
    c.sq = 1;  // q is batched (b, 1); k_lens are the cache lengths
    add(c);
  }
  c = Case{};
  c.kvcache = true, c.b = 2, c.sq = 4, c.sk = 100, c.s_new = 4, c.rotary_dim = 32, c.causal = true;
  c.batch_idx = true, c.leftpad = true, c.name = tn + " kvcache append rotary(gpt-j) causal leftpad idx";
  add(c);
  c.rotary_interleaved = false, c.page_size = 7, c.batch_idx = false, c.rotary_dim = 64, c.num_splits = 2;
  c.name = tn + " kvcache paged7 append rotary(neox) split2";
  add(c);
  c = Case{};
  c.name = tn + " b*h > 65535", c.b = 1100, c.h = 64, c.hk = 64, c.sq = 3, c.sk = 20, c.d = c.dv = 32;
  add(c);
}

// The cases the cuda_sm90 harness had beyond those (written for sm90; sm80 covers them too).
void add_sm90_cases(DType t, std::vector<Case>& cases) {
  const std::string tn = t == DType::float16 ? "fp16" : "bf16";
  auto add = [&](Case c, const std::string& name) {
    c.dtype = t;
    c.expect = kSm80 | kSm90;
    c.name = tn + " " + name;
    cases.push_back(c);
  };
  for (int d : {64, 128, 256}) {
    const std::string dn = "d" + std::to_string(d);
    Case c;
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
    c.d = c.dv = d, c.b = 1, c.sq = 333, c.sk = 700, c.left = 100, c.right = 20, c.softcap = 15.f, c.h = 2,
    c.hk = 1;
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
}

int check(const ForwardBackend& backend) {
  std::vector<Case> cases;
  for (DType t : {DType::float16, DType::bfloat16}) add_sm80_cases(t, cases), add_sm90_cases(t, cases);
  int failed = 0, refused = 0, total = 0;
  for (const Case& c : cases) {
    const Outcome outcome = run_case(backend, c);
    failed += outcome == Outcome::failed, refused += outcome == Outcome::refused, ++total;
  }
  if (backend.id == Backend::cuda_sm90) {
    // What sm90 does not cover must be refused with a reason (the API then falls back to cuda_sm80).
    AttentionParams p;
    p.dtype = DType::bfloat16, p.head_dim = p.head_dim_v = 96;
    const char* why = backend.unsupported_reason(p);
    std::printf("%-44s %s\n", "refuses d96", why ? why : "NOT REFUSED");
    failed += why == nullptr, ++total;
  }
  std::printf("%s: %d of %d cases failed; %d refused (written only for the other backend, not counted)\n",
              backend.name, failed, total, refused);
  return failed ? 1 : 0;
}

int small(const ForwardBackend& backend) {
  Case c;
  c.dtype = DType::bfloat16, c.name = "bf16 d128 small causal", c.d = c.dv = 128, c.b = 1, c.sq = 300,
  c.sk = 300;
  c.h = 2, c.hk = 1, c.causal = true, c.expect = kSm80 | kSm90;
  return run_case(backend, c) == Outcome::passed ? 0 : 1;
}

// The standard grid: 16k tokens per batch (b = 16384 / s), hidden 2048 (h = 2048 / d), bf16;
// the median of 30 launches after 5 warm-ups, timed with CUDA events. One JSON row per point.
int bench(const ForwardBackend& backend, const std::vector<int>& dims) {
  const DType t = DType::bfloat16;
  const std::size_t n = std::size_t(16384) * 2048;  // elements of q, k, v, out at every grid point
  const Buffer q(n, t), k(n, t), v(n, t), o(n, t, false);
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  int rc = 0;
  for (int d : dims)
    for (int causal = 0; causal < 2; ++causal)
      for (int s : {512, 1024, 2048, 4096, 8192, 16384}) {
        const int b = 16384 / s, h = 2048 / d;
        AttentionParams p;
        p.dtype = t, p.batch = b, p.heads = p.heads_kv = h, p.head_dim = p.head_dim_v = d,
        p.seqlen_q = p.seqlen_k = s;
        p.scale = 1.f / std::sqrt(float(d));
        p.mask.window_right = causal ? 0 : -1;
        const Operand op{nullptr, std::int64_t(s) * h * d, std::int64_t(h) * d, d};
        p.q = p.k = p.v = p.out = op;
        p.q.data = q.device, p.k.data = k.device, p.v.data = v.device, p.out.data = o.device;
        if (const char* why = backend.unsupported_reason(p)) {
          std::fprintf(stderr, "%s refuses hdim %d causal %d seqlen %d: %s\n", backend.name, d, causal, s,
                       why);
          rc = 1;
          continue;
        }
        ExecutionContext ctx;
        ctx.backend = backend.id;
        ctx.workspace_bytes = backend.workspace_size(p, 0);
        if (ctx.workspace_bytes) CHECK_CUDA(cudaMalloc(&ctx.workspace, ctx.workspace_bytes));
        auto launch = [&] {
          const Status st = backend.run(p, ctx);
          if (!st.ok()) {
            std::fprintf(stderr, "%s: run failed: %s\n", backend.name, st.message());
            std::exit(1);
          }
        };
        for (int w = 0; w < 5; ++w) launch();
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaDeviceSynchronize());
        std::vector<float> times;
        for (int r = 0; r < 30; ++r) {
          CHECK_CUDA(cudaEventRecord(e0));
          launch();
          CHECK_CUDA(cudaEventRecord(e1));
          CHECK_CUDA(cudaEventSynchronize(e1));
          float ms;
          CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
          times.push_back(ms);
        }
        CHECK_CUDA(cudaGetLastError());
        std::sort(times.begin(), times.end());
        const double median = times[times.size() / 2];
        const double flop = 4.0 * b * h * double(s) * s * d / (causal ? 2 : 1);
        std::printf("{\"hdim\": %d, \"causal\": %s, \"seqlen\": %d, \"%s\": %.0f, \"ms\": %.4f}\n", d,
                    causal ? "true" : "false", s, backend.bench_key, flop / median / 1e9, median);
        std::fflush(stdout);
        if (ctx.workspace) CHECK_CUDA(cudaFree(ctx.workspace));
      }
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  return rc;
}

int usage(const char* why) {
  std::fprintf(
      stderr,
      "%s\nusage: flashattn_forward_check --backend cuda_sm80|cuda_sm90 [check | bench [head_dim] | small]\n",
      why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--backend" && i + 1 < argc)
      backend_name = argv[++i];
    else if (arg.rfind("--backend=", 0) == 0)
      backend_name = arg.substr(10);
    else
      args.push_back(arg);
  }
  if (backend_name.empty()) return usage("--backend is required");
  const ForwardBackend* backend = find_backend(backend_name);
  if (!backend) {
    if (backend_name == "cuda_sm90")
      return usage("cuda_sm90 is not compiled into this build (FLASHATTN_CUDA_ARCHS must name 90a)");
    return usage(("unknown backend '" + backend_name + "'").c_str());
  }
  int device = 0;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  // On stderr: bench mode's stdout is JSON rows only.
  std::fprintf(stderr, "%s on %s (compute capability %d.%d)\n", backend->name, prop.name, prop.major,
               prop.minor);
  if (args.empty() || (args[0] == "check" && args.size() == 1)) return check(*backend);
  if (args[0] == "small" && args.size() == 1) return small(*backend);
  if (args[0] == "bench" && args.size() <= 2) {
    std::vector<int> dims = {64, 128, 256};
    if (args.size() == 2) {
      char* end = nullptr;
      const long d = std::strtol(args[1].c_str(), &end, 10);
      if (*end != '\0' || d < 8 || d > 256) return usage("bench: head_dim must be a number in [8, 256]");
      dims = {int(d)};
    }
    return bench(*backend, dims);
  }
  return usage(("unknown arguments after --backend " + backend_name).c_str());
}
