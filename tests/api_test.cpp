// Small end-to-end checks through the public API only: workspace query, run on
// each CPU backend, and agreement between operations that must compute the same
// thing (batched vs varlen vs KV cache, split + combine vs whole, backward vs
// finite differences). Exhaustive numerics live in the per-operation suites.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "flashattn/flashattn.h"

namespace flashattn {
namespace {

using i64 = std::int64_t;

std::vector<float> random_vector(i64 n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& e : x) e = dist(rng);
  return x;
}

TensorView view(std::vector<float>& x, std::initializer_list<i64> shape) {
  return TensorView::contiguous(x.data(), DType::float32, shape);
}
TensorView view(std::vector<std::int32_t>& x, std::initializer_list<i64> shape) {
  return TensorView::contiguous(x.data(), DType::int32, shape);
}

void poison(std::vector<float>& x) { std::fill(x.begin(), x.end(), std::numeric_limits<float>::quiet_NaN()); }

// Caller-owned scratch, 256-byte aligned, sized by workspace_size.
struct Workspace {
  std::vector<std::uint8_t> storage;
  template <class Args>
  Status prepare(const Args& args, ExecutionContext* ctx) {
    std::size_t bytes = 0;
    Status status = workspace_size(args, *ctx, &bytes);
    if (!status.ok()) return status;
    storage.assign(bytes + 256, 0);
    const auto base = reinterpret_cast<std::uintptr_t>(storage.data());
    ctx->workspace = bytes ? storage.data() + ((256 - base % 256) % 256) : nullptr;
    ctx->workspace_bytes = bytes;
    return status;
  }
};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0.f;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const float d = std::fabs(a[i] - b[i]);
    if (!(d <= m)) m = d;  // NaN propagates as NaN
  }
  return m;
}

constexpr Backend kCpuBackends[] = {Backend::cpu_reference, Backend::cpu_tiled};

// Plain double-precision attention over contiguous (b, s, h, d) fp32 tensors.
void naive_forward(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                   i64 b, i64 sq, i64 sk, i64 h, i64 hk, i64 d, i64 dv, bool causal, std::vector<float>* out,
                   std::vector<float>* lse) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  out->assign(b * sq * h * dv, 0.f);
  lse->assign(b * h * sq, 0.f);
  for (i64 bi = 0; bi < b; ++bi)
    for (i64 hi = 0; hi < h; ++hi)
      for (i64 i = 0; i < sq; ++i) {
        const i64 kh = hi / (h / hk);
        std::vector<double> s(sk, -INFINITY);
        double m = -INFINITY;
        for (i64 j = 0; j < sk; ++j) {
          if (causal && j > i + sk - sq) continue;
          double dot = 0;
          for (i64 x = 0; x < d; ++x)
            dot += double(q[((bi * sq + i) * h + hi) * d + x]) * k[((bi * sk + j) * hk + kh) * d + x];
          s[j] = dot * scale;
          m = std::max(m, s[j]);
        }
        double sum = 0;
        for (i64 j = 0; j < sk; ++j) sum += std::isinf(s[j]) ? 0 : std::exp(s[j] - m);
        for (i64 x = 0; x < dv; ++x) {
          double o = 0;
          for (i64 j = 0; j < sk; ++j)
            if (!std::isinf(s[j])) o += std::exp(s[j] - m) / sum * v[((bi * sk + j) * hk + kh) * dv + x];
          (*out)[((bi * sq + i) * h + hi) * dv + x] = static_cast<float>(sum > 0 ? o : 0);
        }
        (*lse)[(bi * h + hi) * sq + i] = sum > 0 ? static_cast<float>(m + std::log(sum)) : -INFINITY;
      }
}

struct Batched {
  i64 b = 2, sq = 6, sk = 9, h = 4, hk = 2, d = 16, dv = 12;
  std::vector<float> q, k, v, out, lse;
  ForwardArgs args;
  explicit Batched(bool causal, unsigned seed = 7) {
    q = random_vector(b * sq * h * d, seed);
    k = random_vector(b * sk * hk * d, seed + 1);
    v = random_vector(b * sk * hk * dv, seed + 2);
    out.resize(b * sq * h * dv);
    lse.resize(b * h * sq);
    poison(out);
    poison(lse);
    args.q = view(q, {b, sq, h, d});
    args.k = view(k, {b, sk, hk, d});
    args.v = view(v, {b, sk, hk, dv});
    args.out = view(out, {b, sq, h, dv});
    args.lse = view(lse, {b, h, sq});
    args.options.causal = causal;
  }
};

TEST(Api, ForwardMatchesNaiveAttention) {
  for (Backend backend : kCpuBackends) {
    for (bool causal : {false, true}) {
      Batched p(causal);
      ExecutionContext ctx;
      ctx.backend = backend;
      Workspace ws;
      ASSERT_TRUE(ws.prepare(p.args, &ctx).ok());
      const Status status = forward(p.args, ctx);
      ASSERT_TRUE(status.ok()) << status.message();
      std::vector<float> out, lse;
      naive_forward(p.q, p.k, p.v, p.b, p.sq, p.sk, p.h, p.hk, p.d, p.dv, causal, &out, &lse);
      EXPECT_LT(max_abs_diff(p.out, out), 1e-5f) << backend_name(backend) << " causal " << causal;
      EXPECT_LT(max_abs_diff(p.lse, lse), 1e-5f) << backend_name(backend) << " causal " << causal;
    }
  }
}

TEST(Api, VarlenMatchesBatched) {
  for (Backend backend : kCpuBackends) {
    Batched p(/*causal=*/true);
    ExecutionContext ctx;
    ctx.backend = backend;
    Workspace ws;
    ASSERT_TRUE(ws.prepare(p.args, &ctx).ok());
    ASSERT_TRUE(forward(p.args, ctx).ok());
    // The same two sequences packed: (b, s, h, d) contiguous is (b*s, h, d) contiguous.
    std::vector<std::int32_t> cu_q = {0, int(p.sq), int(2 * p.sq)}, cu_k = {0, int(p.sk), int(2 * p.sk)};
    std::vector<float> out(p.out.size()), lse(p.lse.size());
    poison(out);
    VarlenForwardArgs a;
    a.q = view(p.q, {p.b * p.sq, p.h, p.d});
    a.k = view(p.k, {p.b * p.sk, p.hk, p.d});
    a.v = view(p.v, {p.b * p.sk, p.hk, p.dv});
    a.cu_seqlens_q = view(cu_q, {3});
    a.cu_seqlens_k = view(cu_k, {3});
    a.max_seqlen_q = p.sq;
    a.max_seqlen_k = p.sk;
    a.out = view(out, {p.b * p.sq, p.h, p.dv});
    a.lse = view(lse, {p.h, p.b * p.sq});
    a.options.causal = true;
    ASSERT_TRUE(ws.prepare(a, &ctx).ok());
    const Status status = forward_varlen(a, ctx);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LT(max_abs_diff(out, p.out), 1e-5f) << backend_name(backend);
    for (i64 b = 0; b < p.b; ++b)  // lse (h, total_q) vs (b, h, sq)
      for (i64 h = 0; h < p.h; ++h)
        for (i64 i = 0; i < p.sq; ++i)
          EXPECT_NEAR(lse[h * p.b * p.sq + b * p.sq + i], p.lse[(b * p.h + h) * p.sq + i], 1e-5f);
  }
}

TEST(Api, KVCacheAppendMatchesBatched) {
  for (Backend backend : kCpuBackends) {
    for (bool paged : {false, true}) {
      // Keys 0..6 of a 9-key batched problem sit in the cache; keys 7, 8 arrive as k_new.
      Batched p(/*causal=*/true);
      const i64 cached = p.sk - 2, s_new = 2, capacity = 12, page = 3;
      p.sq = 2;  // decoding two tokens
      p.q.resize(p.b * p.sq * p.h * p.d);
      p.out.resize(p.b * p.sq * p.h * p.dv);
      p.lse.resize(p.b * p.h * p.sq);
      p.args.q = view(p.q, {p.b, p.sq, p.h, p.d});
      p.args.out = view(p.out, {p.b, p.sq, p.h, p.dv});
      p.args.lse = view(p.lse, {p.b, p.h, p.sq});
      ExecutionContext ctx;
      ctx.backend = backend;
      Workspace ws;
      ASSERT_TRUE(ws.prepare(p.args, &ctx).ok());
      ASSERT_TRUE(forward(p.args, ctx).ok());

      // Dense cache (b, capacity, hk, d); paged: 8 blocks of 3 rows, sequence s uses blocks
      // table[s] in a shuffled order.
      const i64 rows = paged ? 8 * page : p.b * capacity;
      std::vector<float> kc = random_vector(rows * p.hk * p.d, 99),
                         vc = random_vector(rows * p.hk * p.dv, 98);
      std::vector<std::int32_t> table = {7, 2, 5, 0, 1, 6, 3, 4};
      auto cache_row = [&](i64 b, i64 pos) {
        return paged ? table[b * 4 + pos / page] * page + pos % page : b * capacity + pos;
      };
      for (i64 b = 0; b < p.b; ++b)
        for (i64 j = 0; j < cached; ++j) {
          std::memcpy(&kc[cache_row(b, j) * p.hk * p.d], &p.k[(b * p.sk + j) * p.hk * p.d], p.hk * p.d * 4);
          std::memcpy(&vc[cache_row(b, j) * p.hk * p.dv], &p.v[(b * p.sk + j) * p.hk * p.dv],
                      p.hk * p.dv * 4);
        }
      std::vector<float> kn(p.b * s_new * p.hk * p.d), vn(p.b * s_new * p.hk * p.dv);
      for (i64 b = 0; b < p.b; ++b) {
        std::memcpy(&kn[b * s_new * p.hk * p.d], &p.k[(b * p.sk + cached) * p.hk * p.d],
                    s_new * p.hk * p.d * 4);
        std::memcpy(&vn[b * s_new * p.hk * p.dv], &p.v[(b * p.sk + cached) * p.hk * p.dv],
                    s_new * p.hk * p.dv * 4);
      }
      std::vector<std::int32_t> seqlens = {int(cached), int(cached)};
      std::vector<float> out(p.out.size()), lse(p.lse.size());
      poison(out);
      KVCacheForwardArgs a;
      a.q = p.args.q;
      if (paged) {
        a.k_cache = view(kc, {8, page, p.hk, p.d});
        a.v_cache = view(vc, {8, page, p.hk, p.dv});
        a.block_table = view(table, {p.b, 4});
      } else {
        a.k_cache = view(kc, {p.b, capacity, p.hk, p.d});
        a.v_cache = view(vc, {p.b, capacity, p.hk, p.dv});
      }
      a.cache_seqlens = view(seqlens, {p.b});
      a.k_new = view(kn, {p.b, s_new, p.hk, p.d});
      a.v_new = view(vn, {p.b, s_new, p.hk, p.dv});
      a.out = view(out, {p.b, p.sq, p.h, p.dv});
      a.lse = view(lse, {p.b, p.h, p.sq});
      a.options.causal = true;
      ASSERT_TRUE(ws.prepare(a, &ctx).ok());
      const Status status = forward_kvcache(a, ctx);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_LT(max_abs_diff(out, p.out), 1e-5f) << backend_name(backend) << " paged " << paged;
      EXPECT_LT(max_abs_diff(lse, p.lse), 1e-5f) << backend_name(backend) << " paged " << paged;
      for (i64 b = 0; b < p.b; ++b)  // the new keys were written into the cache
        for (i64 t = 0; t < s_new; ++t)
          EXPECT_EQ(0, std::memcmp(&kc[cache_row(b, cached + t) * p.hk * p.d],
                                   &kn[(b * s_new + t) * p.hk * p.d], p.hk * p.d * 4));
    }
  }
}

TEST(Api, SplitAndCombineMatchesWhole) {
  for (Backend backend : kCpuBackends) {
    Batched whole(/*causal=*/false);
    ExecutionContext ctx;
    ctx.backend = backend;
    Workspace ws;
    ASSERT_TRUE(ws.prepare(whole.args, &ctx).ok());
    ASSERT_TRUE(forward(whole.args, ctx).ok());

    // Keys [0, 4) and [4, 9) as strided views of the same k/v; partials in (splits, b, sq, h, ...).
    const i64 b = whole.b, sq = whole.sq, h = whole.h, hk = whole.hk, d = whole.d, dv = whole.dv,
              sk = whole.sk;
    const i64 split_at[3] = {0, 4, sk};
    std::vector<float> op(2 * b * sq * h * dv), lp(2 * b * sq * h), lse_tmp(b * h * sq);
    for (int s = 0; s < 2; ++s) {
      const i64 keys = split_at[s + 1] - split_at[s];
      ForwardArgs a = whole.args;
      a.k = TensorView::strided(&whole.k[split_at[s] * hk * d], DType::float32, {b, keys, hk, d},
                                {sk * hk * d, hk * d, d, 1});
      a.v = TensorView::strided(&whole.v[split_at[s] * hk * dv], DType::float32, {b, keys, hk, dv},
                                {sk * hk * dv, hk * dv, dv, 1});
      a.out = TensorView::contiguous(&op[s * b * sq * h * dv], DType::float32, {b, sq, h, dv});
      a.lse = view(lse_tmp, {b, h, sq});
      ASSERT_TRUE(ws.prepare(a, &ctx).ok());
      const Status status = forward(a, ctx);
      ASSERT_TRUE(status.ok()) << status.message();
      for (i64 bi = 0; bi < b; ++bi)
        for (i64 hi = 0; hi < h; ++hi)
          for (i64 i = 0; i < sq; ++i) lp[((s * b + bi) * sq + i) * h + hi] = lse_tmp[(bi * h + hi) * sq + i];
    }
    std::vector<float> out(whole.out.size()), lse(b * sq * h);
    poison(out);
    CombineArgs c;
    c.out_partial = view(op, {2, b, sq, h, dv});
    c.lse_partial = view(lp, {2, b, sq, h});
    c.out = view(out, {b, sq, h, dv});
    c.lse = view(lse, {b, sq, h});
    ASSERT_TRUE(ws.prepare(c, &ctx).ok());
    const Status status = combine(c, ctx);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LT(max_abs_diff(out, whole.out), 1e-5f) << backend_name(backend);
    for (i64 bi = 0; bi < b; ++bi)
      for (i64 hi = 0; hi < h; ++hi)
        for (i64 i = 0; i < sq; ++i)
          EXPECT_NEAR(lse[(bi * sq + i) * h + hi], whole.lse[(bi * h + hi) * sq + i], 1e-5f);
  }
}

// L = sum(out * dout); backward's dq/dk/dv must match central differences of L.
TEST(Api, BackwardMatchesFiniteDifferences) {
  for (Backend backend : kCpuBackends) {
    Batched p(/*causal=*/true, 21);
    std::vector<float> dout = random_vector(p.out.size(), 5);
    ExecutionContext ctx;
    ctx.backend = backend;
    Workspace ws;
    auto loss = [&]() {
      EXPECT_TRUE(ws.prepare(p.args, &ctx).ok());
      EXPECT_TRUE(forward(p.args, ctx).ok());
      double l = 0;
      for (std::size_t i = 0; i < dout.size(); ++i) l += double(p.out[i]) * dout[i];
      return l;
    };
    loss();
    std::vector<float> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
    poison(dq);
    poison(dk);
    poison(dv);
    BackwardArgs a;
    a.dout = view(dout, {p.b, p.sq, p.h, p.dv});
    a.q = p.args.q;
    a.k = p.args.k;
    a.v = p.args.v;
    a.out = p.args.out;
    a.lse = p.args.lse;
    a.dq = view(dq, {p.b, p.sq, p.h, p.d});
    a.dk = view(dk, {p.b, p.sk, p.hk, p.d});
    a.dv = view(dv, {p.b, p.sk, p.hk, p.dv});
    a.options.causal = true;
    Status status = ws.prepare(a, &ctx);
    if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
    ASSERT_TRUE(status.ok()) << status.message();
    status = backward(a, ctx);
    ASSERT_TRUE(status.ok()) << backend_name(backend) << ": " << status.message();
    for (float x : dq) ASSERT_TRUE(std::isfinite(x));
    for (float x : dk) ASSERT_TRUE(std::isfinite(x));
    for (float x : dv) ASSERT_TRUE(std::isfinite(x));
    struct Probe {
      std::vector<float>* input;
      const std::vector<float>* grad;
    };
    std::mt19937 rng(3);
    for (Probe probe : {Probe{&p.q, &dq}, Probe{&p.k, &dk}, Probe{&p.v, &dv}}) {
      for (int n = 0; n < 6; ++n) {
        const std::size_t i = rng() % probe.input->size();
        const float saved = (*probe.input)[i];
        const float eps = 1e-2f;
        (*probe.input)[i] = saved + eps;
        const double up = loss();
        (*probe.input)[i] = saved - eps;
        const double down = loss();
        (*probe.input)[i] = saved;
        const double numeric = (up - down) / (2 * eps);
        EXPECT_NEAR((*probe.grad)[i], numeric, 2e-3 + 1e-2 * std::fabs(numeric)) << backend_name(backend);
      }
    }
  }
}

TEST(Api, VarlenBackwardMatchesBatched) {
  for (Backend backend : kCpuBackends) {
    Batched p(/*causal=*/false, 33);
    std::vector<float> dout = random_vector(p.out.size(), 6);
    ExecutionContext ctx;
    ctx.backend = backend;
    Workspace ws;
    ASSERT_TRUE(ws.prepare(p.args, &ctx).ok());
    ASSERT_TRUE(forward(p.args, ctx).ok());
    std::vector<float> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
    BackwardArgs a;
    a.dout = view(dout, {p.b, p.sq, p.h, p.dv});
    a.q = p.args.q;
    a.k = p.args.k;
    a.v = p.args.v;
    a.out = p.args.out;
    a.lse = p.args.lse;
    a.dq = view(dq, {p.b, p.sq, p.h, p.d});
    a.dk = view(dk, {p.b, p.sk, p.hk, p.d});
    a.dv = view(dv, {p.b, p.sk, p.hk, p.dv});
    Status status = ws.prepare(a, &ctx);
    if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
    ASSERT_TRUE(backward(a, ctx).ok());

    // The lse in (h, total_q) layout.
    std::vector<float> lse_ht(p.lse.size());
    for (i64 b = 0; b < p.b; ++b)
      for (i64 h = 0; h < p.h; ++h)
        for (i64 i = 0; i < p.sq; ++i)
          lse_ht[h * p.b * p.sq + b * p.sq + i] = p.lse[(b * p.h + h) * p.sq + i];
    std::vector<std::int32_t> cu_q = {0, int(p.sq), int(2 * p.sq)}, cu_k = {0, int(p.sk), int(2 * p.sk)};
    std::vector<float> vdq(dq.size()), vdk(dk.size()), vdv(dv.size());
    poison(vdq);
    VarlenBackwardArgs va;
    va.dout = view(dout, {p.b * p.sq, p.h, p.dv});
    va.q = view(p.q, {p.b * p.sq, p.h, p.d});
    va.k = view(p.k, {p.b * p.sk, p.hk, p.d});
    va.v = view(p.v, {p.b * p.sk, p.hk, p.dv});
    va.out = view(p.out, {p.b * p.sq, p.h, p.dv});
    va.lse = view(lse_ht, {p.h, p.b * p.sq});
    va.cu_seqlens_q = view(cu_q, {3});
    va.cu_seqlens_k = view(cu_k, {3});
    va.max_seqlen_q = p.sq;
    va.max_seqlen_k = p.sk;
    va.dq = view(vdq, {p.b * p.sq, p.h, p.d});
    va.dk = view(vdk, {p.b * p.sk, p.hk, p.d});
    va.dv = view(vdv, {p.b * p.sk, p.hk, p.dv});
    status = ws.prepare(va, &ctx);
    if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
    status = backward_varlen(va, ctx);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_LT(max_abs_diff(vdq, dq), 1e-5f) << backend_name(backend);
    EXPECT_LT(max_abs_diff(vdk, dk), 1e-5f) << backend_name(backend);
    EXPECT_LT(max_abs_diff(vdv, dv), 1e-5f) << backend_name(backend);
  }
}

TEST(Api, SelectKernelNamesBackendOperationAndDtype) {
  Batched p(false);
  KernelChoice choice;
  ExecutionContext ctx;  // automatic
  Status status = select_kernel(p.args, ctx, &choice);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(choice.backend, Backend::cpu_tiled);
  EXPECT_STREQ(choice.kernel, "cpu_tiled/forward/fp32/d16v12");
  EXPECT_NE(std::string(choice.reason).find("automatic"), std::string::npos) << choice.reason;

  ctx.backend = Backend::cpu_reference;
  ASSERT_TRUE(select_kernel(p.args, ctx, &choice).ok());
  EXPECT_EQ(choice.backend, Backend::cpu_reference);
  EXPECT_STREQ(choice.kernel, "cpu_reference/forward/fp32/d16v12");
  EXPECT_NE(std::string(choice.reason).find("requested"), std::string::npos) << choice.reason;

  // select_kernel looks at shapes only: null data is fine, and nothing is written.
  ForwardArgs shapes_only = p.args;
  shapes_only.q.data = shapes_only.k.data = shapes_only.v.data = shapes_only.out.data = shapes_only.lse.data =
      nullptr;
  shapes_only.q.dtype = shapes_only.k.dtype = shapes_only.v.dtype = shapes_only.out.dtype = DType::bfloat16;
  shapes_only.v.shape[3] = shapes_only.out.shape[3] = 16;
  ctx.backend = Backend::automatic;
  ASSERT_TRUE(select_kernel(shapes_only, ctx, &choice).ok());
  EXPECT_STREQ(choice.kernel, "cpu_tiled/forward/bf16/d16");

  // A failed selection repeats its message in reason.
  shapes_only.k.shape[3] = 8;
  status = select_kernel(shapes_only, ctx, &choice);
  EXPECT_EQ(status.code(), ErrorCode::invalid_argument);
  EXPECT_STREQ(choice.reason, status.message());

  std::vector<float> op(2 * 2 * 3 * 4 * 8), lp(2 * 2 * 3 * 4), out(2 * 3 * 4 * 8);
  CombineArgs c;
  c.out_partial = view(op, {2, 2, 3, 4, 8});
  c.lse_partial = view(lp, {2, 2, 3, 4});
  c.out = view(out, {2, 3, 4, 8});
  ASSERT_TRUE(select_kernel(c, ctx, &choice).ok());
  EXPECT_STREQ(choice.kernel, "cpu_tiled/combine/fp32/dv8");
}

// Why a Hopper routing test cannot judge this build's choice, or "" when it can: a build without the
// problem's head dim has no backend for it (the selection fails, naming the missing kernels), or one without
// cuda_sm90's kernel for it falls back, saying so.
std::string sm90_not_compiled(const Status& status, const KernelChoice& choice) {
  if (!status.ok()) {
    const bool missing = status.code() == ErrorCode::unsupported &&
                         std::string(status.message()).find("not compiled") != std::string::npos;
    return missing ? status.message() : "";
  }
  const bool fell_back = choice.backend != Backend::cuda_sm90 &&
                         std::string(choice.reason).find("not compiled") != std::string::npos;
  return fell_back ? choice.reason : "";
}

// The automatic choice of a forward with dropout on a Hopper GPU: cuda_sm90's dropout instances (causal or
// not, few query rows included, which would otherwise run its decode kernel). Shapes only.
TEST(Api, Sm90ForwardDropoutRouting) {
  CudaDeviceInfo info;
  if (cuda_device_count() == 0 || !cuda_device_info(0, &info).ok() || info.compute_capability != 90)
    GTEST_SKIP() << "needs a Hopper GPU (compute capability 9.0) as device 0";
  const Device gpu{DeviceType::cuda, 0};
  for (const std::int64_t sq : {1, 1024}) {
    ForwardArgs a;
    a.q = a.out = TensorView::contiguous(nullptr, DType::bfloat16, {2, sq, 4, 128}, gpu);
    a.k = a.v = TensorView::contiguous(nullptr, DType::bfloat16, {2, 1024, 2, 128}, gpu);
    a.options.causal = sq > 1;
    a.options.dropout.p = 0.1f;
    ExecutionContext ctx;
    KernelChoice choice;
    const Status status = select_kernel(a, ctx, &choice);
    if (const std::string why = sm90_not_compiled(status, choice); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(choice.backend, Backend::cuda_sm90) << "sq " << sq << ": " << choice.reason;
  }
}

// The automatic choice of a forward on a Hopper GPU by head dims: cuda_sm90 for every pair of multiples of 8
// up to 256, on the kernel that holds them where they have none of their own (forward_config.h
// kernel_head_dims), dv != d included; asked for by name, it refuses others with its reason. The backward's
// routing of padded head dims likewise. Shapes only.
TEST(Api, Sm90PaddedHeadDimRouting) {
  CudaDeviceInfo info;
  if (cuda_device_count() == 0 || !cuda_device_info(0, &info).ok() || info.compute_capability != 90)
    GTEST_SKIP() << "needs a Hopper GPU (compute capability 9.0) as device 0";
  const Device gpu{DeviceType::cuda, 0};
  auto args = [&](std::int64_t d, std::int64_t dv) {
    ForwardArgs a;
    a.q = TensorView::contiguous(nullptr, DType::bfloat16, {2, 256, 4, d}, gpu);
    a.out = TensorView::contiguous(nullptr, DType::bfloat16, {2, 256, 4, dv}, gpu);
    a.k = TensorView::contiguous(nullptr, DType::bfloat16, {2, 512, 2, d}, gpu);
    a.v = TensorView::contiguous(nullptr, DType::bfloat16, {2, 512, 2, dv}, gpu);
    return a;
  };
  const std::pair<std::int64_t, std::int64_t> padded[] = {
      {8, 8}, {32, 32}, {40, 40}, {72, 72}, {80, 64}, {112, 112}, {160, 160}, {224, 224}, {48, 136}};
  for (const auto& [d, dv] : padded) {
    ExecutionContext ctx;
    KernelChoice choice;
    const Status status = select_kernel(args(d, dv), ctx, &choice);
    if (const std::string why = sm90_not_compiled(status, choice); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(status.ok()) << "d " << d << " dv " << dv << ": " << status.message();
    EXPECT_EQ(choice.backend, Backend::cuda_sm90) << "d " << d << " dv " << dv << ": " << choice.reason;
  }
  for (const auto& [d, dv] : {std::pair<std::int64_t, std::int64_t>{68, 68}, {64, 264}}) {
    ExecutionContext ctx;
    ctx.backend = Backend::cuda_sm90;
    KernelChoice choice;
    const Status refused = select_kernel(args(d, dv), ctx, &choice);
    EXPECT_EQ(refused.code(), ErrorCode::unsupported)
        << "d " << d << " dv " << dv << ": " << refused.message();
    EXPECT_NE(std::string(refused.message()).find("multiples of 8 up to 256"), std::string::npos)
        << refused.message();
  }
  // The backward likewise (its d = dv = 64, 128, 192, 256 kernels; none for (64, 256)), where built.
  for (const auto& [d, dv] :
       {std::pair<std::int64_t, std::int64_t>{80, 80}, {40, 40}, {160, 128}, {224, 224}}) {
    BackwardArgs b;
    b.q = b.dq = TensorView::contiguous(nullptr, DType::bfloat16, {1, 256, 2, d}, gpu);
    b.k = b.dk = TensorView::contiguous(nullptr, DType::bfloat16, {1, 256, 2, d}, gpu);
    b.v = b.dv = TensorView::contiguous(nullptr, DType::bfloat16, {1, 256, 2, dv}, gpu);
    b.out = b.dout = TensorView::contiguous(nullptr, DType::bfloat16, {1, 256, 2, dv}, gpu);
    b.lse = TensorView::contiguous(nullptr, DType::float32, {1, 2, 256}, gpu);
    ExecutionContext ctx;
    KernelChoice choice;
    const Status status = select_kernel(b, ctx, &choice);
    if (!status.ok() || std::string(choice.reason).find("not compiled") != std::string::npos) continue;
    EXPECT_EQ(choice.backend, Backend::cuda_sm90)
        << "backward d " << d << " dv " << dv << ": " << choice.reason;
  }
}

// The automatic choice of a backward on a Hopper GPU: cuda_sm90's kernel for d = dv = 128 with every option
// (deterministic mode, softcap, ALiBi and dropout included); cuda_sm90 at d = 256 in both modes. Shapes
// only.
TEST(Api, Sm90BackwardRouting) {
  CudaDeviceInfo info;
  if (cuda_device_count() == 0 || !cuda_device_info(0, &info).ok() || info.compute_capability != 90)
    GTEST_SKIP() << "needs a Hopper GPU (compute capability 9.0) as device 0";
  const Device gpu{DeviceType::cuda, 0};
  auto shape = [&](DType dtype, std::initializer_list<std::int64_t> dims) {
    return TensorView::contiguous(nullptr, dtype, dims, gpu);
  };
  BackwardArgs a;
  a.q = a.dq = a.out = a.dout = shape(DType::bfloat16, {1, 256, 2, 128});
  a.k = a.v = a.dk = a.dv = shape(DType::bfloat16, {1, 256, 2, 128});
  a.lse = shape(DType::float32, {1, 2, 256});
  a.options.causal = true;
  ExecutionContext ctx;
  KernelChoice choice;
  const Status status = select_kernel(a, ctx, &choice);
  if (const std::string why = sm90_not_compiled(status, choice); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(choice.backend, Backend::cuda_sm90) << choice.reason;
  EXPECT_STREQ(choice.kernel, "cuda_sm90/backward/bf16/d128");
  BackwardArgs deterministic = a;
  deterministic.deterministic = true;
  ASSERT_TRUE(select_kernel(deterministic, ctx, &choice).ok()) << choice.reason;
  EXPECT_EQ(choice.backend, Backend::cuda_sm90) << choice.reason;
  BackwardArgs softcap = deterministic;
  softcap.options.softcap = 30.f;
  ASSERT_TRUE(select_kernel(softcap, ctx, &choice).ok()) << choice.reason;
  EXPECT_EQ(choice.backend, Backend::cuda_sm90) << choice.reason;
  BackwardArgs dropout = a;
  dropout.options.dropout.p = 0.1f;
  ASSERT_TRUE(select_kernel(dropout, ctx, &choice).ok()) << choice.reason;
  EXPECT_EQ(choice.backend, Backend::cuda_sm90) << choice.reason;
  // d = 256: cuda_sm90 in both modes (where built; its dQ pass has a fixed order), and its workspace holds
  // LSE and D only (no dQ accumulator): less than cuda_sm80's.
  BackwardArgs d256 = a;
  d256.q = d256.dq = d256.out = d256.dout = shape(DType::bfloat16, {1, 256, 2, 256});
  d256.k = d256.v = d256.dk = d256.dv = shape(DType::bfloat16, {1, 256, 2, 256});
  // (A build without head dim 256 has no backend for it: the selection fails, naming the missing kernels.)
  const Status d256_status = select_kernel(d256, ctx, &choice);
  if (!d256_status.ok()) {
    EXPECT_EQ(d256_status.code(), ErrorCode::unsupported) << d256_status.message();
    EXPECT_NE(std::string(d256_status.message()).find("not compiled"), std::string::npos)
        << d256_status.message();
  } else if (std::string(choice.reason).find("not compiled") == std::string::npos) {
    EXPECT_EQ(choice.backend, Backend::cuda_sm90) << choice.reason;
    d256.deterministic = true;
    ASSERT_TRUE(select_kernel(d256, ctx, &choice).ok()) << choice.reason;
    EXPECT_EQ(choice.backend, Backend::cuda_sm90) << choice.reason;
    std::size_t sm90_bytes = 0, sm80_bytes = 0;
    ASSERT_TRUE(workspace_size(d256, ctx, &sm90_bytes).ok());
    ExecutionContext on_sm80 = ctx;
    on_sm80.backend = Backend::cuda_sm80;
    ASSERT_TRUE(workspace_size(d256, on_sm80, &sm80_bytes).ok());
    EXPECT_LT(sm90_bytes, sm80_bytes);
    EXPECT_GE(sm90_bytes, 2 * 2 * 256 * sizeof(float));  // LSE and D of 2 heads x 256 rows
  }
}

// Tensors on a CUDA device other than the calling thread's current one are refused by name before any backend
// sees them (the kernels would run on the current device and reach the tensors through unified addressing).
// Index cuda_device_count() is never the current device; the pointers are never dereferenced.
TEST(Api, CudaTensorsOfAnotherDeviceRefused) {
  const int devices = cuda_device_count();
  if (devices == 0) GTEST_SKIP() << "needs a CUDA device (the current device is compared)";
  const Device other{DeviceType::cuda, devices};
  auto on_other = [&](int slot) {  // disjoint addresses, 1 MiB apart
    return TensorView::contiguous(reinterpret_cast<void*>(std::uintptr_t(slot + 1) << 20), DType::bfloat16,
                                  {1, 8, 2, 64}, other);
  };
  ForwardArgs a;
  a.q = on_other(0);
  a.k = on_other(1);
  a.v = on_other(2);
  a.out = on_other(3);
  ExecutionContext ctx;
  std::size_t bytes = 0;
  for (const Status& status : {workspace_size(a, ctx, &bytes), forward(a, ctx)}) {
    EXPECT_EQ(status.code(), ErrorCode::invalid_argument);
    const std::string expected = "q: on cuda:" + std::to_string(devices) + " but the current CUDA device is ";
    EXPECT_NE(std::string(status.message()).find(expected), std::string::npos) << status.message();
  }
}

TEST(Api, Info) {
  EXPECT_GT(std::strlen(version()), 4u);
  EXPECT_TRUE(backend_compiled(Backend::cpu_reference));
  EXPECT_TRUE(backend_compiled(Backend::cpu_tiled));
  EXPECT_STREQ(backend_name(Backend::cpu_tiled), "cpu_tiled");
  EXPECT_STREQ(backend_name(Backend::cuda_sm90), "cuda_sm90");
  EXPECT_STREQ(dtype_name(DType::bfloat16), "bf16");
  EXPECT_EQ(dtype_size(DType::float16), 2u);
  CudaDeviceInfo info;
  if (!backend_compiled(Backend::cuda_sm80)) {
    EXPECT_EQ(cuda_device_count(), 0);
    EXPECT_EQ(cuda_device_info(0, &info).code(), ErrorCode::unsupported);
  } else {
    EXPECT_EQ(cuda_device_info(-1, &info).code(), ErrorCode::invalid_argument);
  }
  // Views with more dims than a TensorView holds are marked invalid rather than truncated.
  TensorView too_many = TensorView::contiguous(nullptr, DType::float32, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(too_many.rank, -1);
  TensorView t = TensorView::contiguous(nullptr, DType::float32, {2, 3, 4});
  EXPECT_EQ(t.stride[0], 12);
  EXPECT_EQ(t.stride[1], 4);
  EXPECT_EQ(t.stride[2], 1);
}

}  // namespace
}  // namespace flashattn
