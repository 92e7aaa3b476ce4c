// Tests of the CPU reference backend, the oracle every other backend is compared with.
//
// The reference is checked against hand-computed values, against a second, deliberately naive
// evaluation of the documented formulas (naive_attention below: dense loops, no shared code
// with the backend beyond the types), against layout equivalences (paged == dense, varlen ==
// per-sequence), and its backward against central finite differences of its own forward.
// Inputs are fresh random numbers every run; each test prints its seed on failure.
#include "cpu/reference.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/numeric.h"
#include "common/params.h"
#include "common/philox.h"

namespace flashattn::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int kThreads = 2;

// ---------------------------------------------------------------------------------------------
// Test-local plumbing: host tensors, random numbers, params builders, workspace.

class Rng {
 public:
  Rng() : seed_(std::random_device{}()), gen_(seed_) {}
  std::string trace() const { return "random seed " + std::to_string(seed_); }
  float uniform(float lo = -1.f, float hi = 1.f) {
    return std::uniform_real_distribution<float>(lo, hi)(gen_);
  }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen_);
  }
  std::mt19937& engine() { return gen_; }

 private:
  unsigned seed_;
  std::mt19937 gen_;
};

std::size_t element_bytes(DType dtype) { return dtype == DType::float16 || dtype == DType::bfloat16 ? 2 : 4; }

// A row-major host tensor of any float dtype.
struct Tensor {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;

  Tensor() = default;
  Tensor(DType type, std::vector<std::int64_t> dims) : dtype(type), shape(std::move(dims)) {
    bytes.resize(static_cast<std::size_t>(numel()) * element_bytes(dtype));
  }
  std::int64_t numel() const {
    return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  }
  void* data() { return bytes.data(); }
  float get(std::int64_t i) const { return load_float(bytes.data(), dtype, i); }
  void set(std::int64_t i, float value) { store_float(bytes.data(), dtype, i, value); }
  void fill(float value) {
    for (std::int64_t i = 0; i < numel(); ++i) set(i, value);
  }
  void randomize(Rng& rng, float lo = -1.f, float hi = 1.f) {
    for (std::int64_t i = 0; i < numel(); ++i) set(i, rng.uniform(lo, hi));
  }
  // Element offset of (index...) in row-major order.
  std::int64_t at(std::initializer_list<std::int64_t> index) const {
    std::int64_t offset = 0, dim = 0;
    for (std::int64_t i : index) offset = offset * shape[dim++] + i;
    return offset;
  }
  // (batch-or-block, row, head, col) for rank 4, (row, head, col) with batch stride 0 for rank 3.
  Operand operand() {
    const std::int64_t r = static_cast<std::int64_t>(shape.size());
    Operand op;
    op.data = data();
    op.head_stride = shape[r - 1];
    op.row_stride = shape[r - 2] * shape[r - 1];
    op.batch_stride = r == 4 ? shape[1] * shape[2] * shape[3] : 0;
    return op;
  }
};

class Workspace {
 public:
  explicit Workspace(std::size_t bytes) : storage_(bytes + 256) {
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    base_ = storage_.data() + ((256 - address % 256) % 256);
    bytes_ = bytes;
  }
  ExecutionContext context(int threads = kThreads) const {
    ExecutionContext ctx;
    ctx.backend = Backend::cpu_reference;
    ctx.workspace = bytes_ ? base_ : nullptr;
    ctx.workspace_bytes = bytes_;
    ctx.num_threads = threads;
    return ctx;
  }

 private:
  std::vector<unsigned char> storage_;
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0;
};

template <typename Params>
void run_reference(const Params& p, int threads = kThreads) {
  ASSERT_EQ(cpu_reference::unsupported_reason(p), nullptr);
  Workspace workspace(cpu_reference::workspace_size(p, threads));
  const Status status = cpu_reference::run(p, workspace.context(threads));
  ASSERT_TRUE(status.ok()) << status.message();
}

template <typename Params>
void run_emulated(const Params& p, DType precision) {
  Workspace workspace(cpu_reference::workspace_size(p, kThreads));
  const Status status = cpu_reference::run_emulated(p, workspace.context(), precision);
  ASSERT_TRUE(status.ok()) << status.message();
}

// A batched problem: q (b, sq, h, d), k (b, sk, hk, d), v (b, sk, hk, dv), out, lse (b, h, sq).
struct Batched {
  std::int64_t b, sq, sk, h, hk, d, dv;
  DType dtype;
  Tensor q, k, v, out;
  std::vector<float> lse;

  Batched(std::int64_t batch, std::int64_t seqlen_q, std::int64_t seqlen_k, std::int64_t heads,
          std::int64_t heads_kv, std::int64_t head_dim, std::int64_t head_dim_v, DType type = DType::float32)
      : b(batch),
        sq(seqlen_q),
        sk(seqlen_k),
        h(heads),
        hk(heads_kv),
        d(head_dim),
        dv(head_dim_v),
        dtype(type),
        q(type, {b, sq, h, d}),
        k(type, {b, sk, hk, d}),
        v(type, {b, sk, hk, dv}),
        out(type, {b, sq, h, dv}),
        lse(static_cast<std::size_t>(b * h * sq), kNaN) {
    out.fill(kNaN);
  }
  void randomize(Rng& rng) {
    q.randomize(rng);
    k.randomize(rng);
    v.randomize(rng);
  }
  AttentionParams params() {
    AttentionParams p;
    p.dtype = dtype;
    p.batch = b, p.heads = h, p.heads_kv = hk, p.head_dim = d, p.head_dim_v = dv;
    p.seqlen_q = sq, p.seqlen_k = sk;
    p.q = q.operand(), p.k = k.operand(), p.v = v.operand(), p.out = out.operand();
    p.lse = lse.data();
    p.lse_batch_stride = h * sq, p.lse_head_stride = sq, p.lse_row_stride = 1;
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    return p;
  }
  double lse_at(std::int64_t bi, std::int64_t head, std::int64_t i) const {
    return lse[(bi * h + head) * sq + i];
  }
};

// ---------------------------------------------------------------------------------------------
// The naive oracle for the oracle: the formulas of attention.h evaluated literally.

using Getter = std::function<double(std::int64_t row, std::int64_t head, std::int64_t col)>;

struct NaiveProblem {
  std::int64_t sq = 0, sk = 0, h = 1, hk = 1, d = 1, dv = 1;
  Getter q, k, v;
  double scale = 1, softcap = 0;
  std::int64_t left = -1, right = -1;
  std::vector<double> slopes;  // per head; empty: no ALiBi
  std::vector<double> sink;    // per head; empty: no sink
};

struct NaiveResult {
  std::int64_t h = 0, dv = 0, sq = 0;
  std::vector<double> out;  // (sq, h, dv)
  std::vector<double> lse;  // (h, sq)
  double o(std::int64_t i, std::int64_t head, std::int64_t c) const { return out[(i * h + head) * dv + c]; }
  double l(std::int64_t head, std::int64_t i) const { return lse[head * sq + i]; }
};

bool naive_visible(const NaiveProblem& a, std::int64_t i, std::int64_t j) {
  const std::int64_t diagonal = i + a.sk - a.sq;
  return (a.left < 0 || j >= diagonal - a.left) && (a.right < 0 || j <= diagonal + a.right);
}

NaiveResult naive_attention(const NaiveProblem& a) {
  NaiveResult r{a.h, a.dv, a.sq, std::vector<double>(a.sq * a.h * a.dv, 0.0),
                std::vector<double>(a.h * a.sq)};
  for (std::int64_t head = 0; head < a.h; ++head) {
    const std::int64_t kv = head / (a.h / a.hk);
    for (std::int64_t i = 0; i < a.sq; ++i) {
      std::vector<double> logit(a.sk);
      double denominator = a.sink.empty() ? 0.0 : std::exp(a.sink[head]);
      bool any = !a.sink.empty();
      for (std::int64_t j = 0; j < a.sk; ++j) {
        if (!naive_visible(a, i, j)) continue;
        double s = 0;
        for (std::int64_t c = 0; c < a.d; ++c) s += a.q(i, head, c) * a.k(j, kv, c);
        s *= a.scale;
        if (a.softcap > 0) s = a.softcap * std::tanh(s / a.softcap);
        if (!a.slopes.empty()) s -= a.slopes[head] * std::abs(static_cast<double>(i + a.sk - a.sq - j));
        logit[j] = s;
        denominator += std::exp(s);
        any = true;
      }
      r.lse[head * a.sq + i] = any ? std::log(denominator) : -kInf;
      if (!any) continue;
      for (std::int64_t j = 0; j < a.sk; ++j) {
        if (!naive_visible(a, i, j)) continue;
        const double prob = std::exp(logit[j]) / denominator;
        for (std::int64_t c = 0; c < a.dv; ++c) r.out[(i * a.h + head) * a.dv + c] += prob * a.v(j, kv, c);
      }
    }
  }
  return r;
}

// Naive problem of sequence bi of a batched problem, with the params' options.
NaiveProblem naive_of(Batched& x, std::int64_t bi, const AttentionParams& p) {
  NaiveProblem a;
  a.sq = x.sq, a.sk = x.sk, a.h = x.h, a.hk = x.hk, a.d = x.d, a.dv = x.dv;
  a.q = [&x, bi](std::int64_t i, std::int64_t head, std::int64_t c) {
    return x.q.get(x.q.at({bi, i, head, c}));
  };
  a.k = [&x, bi](std::int64_t j, std::int64_t kv, std::int64_t c) { return x.k.get(x.k.at({bi, j, kv, c})); };
  a.v = [&x, bi](std::int64_t j, std::int64_t kv, std::int64_t c) { return x.v.get(x.v.at({bi, j, kv, c})); };
  a.scale = p.scale, a.softcap = p.softcap, a.left = p.mask.window_left, a.right = p.mask.window_right;
  for (std::int64_t head = 0; p.alibi_slopes && head < x.h; ++head) {
    a.slopes.push_back(p.alibi_slopes[bi * p.alibi_batch_stride + head]);
  }
  for (std::int64_t head = 0; p.sink && head < x.h; ++head) a.sink.push_back(p.sink[head]);
  return a;
}

// Expects the reference's batched out/lse to match the naive evaluation of every sequence.
void expect_matches_naive(Batched& x, const AttentionParams& p, double tolerance) {
  for (std::int64_t bi = 0; bi < x.b; ++bi) {
    const NaiveResult expected = naive_attention(naive_of(x, bi, p));
    for (std::int64_t head = 0; head < x.h; ++head) {
      for (std::int64_t i = 0; i < x.sq; ++i) {
        const double lse = x.lse_at(bi, head, i);
        if (std::isinf(expected.l(head, i))) {
          EXPECT_EQ(lse, expected.l(head, i)) << "b " << bi << " head " << head << " row " << i;
        } else {
          EXPECT_NEAR(lse, expected.l(head, i), tolerance) << "b " << bi << " head " << head << " row " << i;
        }
        for (std::int64_t c = 0; c < x.dv; ++c) {
          EXPECT_NEAR(x.out.get(x.out.at({bi, i, head, c})), expected.o(i, head, c), tolerance)
              << "b " << bi << " head " << head << " row " << i << " col " << c;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Forward: hand-computed cases.

TEST(ReferenceForward, OneQueryTwoKeysIsExactSoftmax) {
  Batched x(1, 1, 2, 1, 1, 2, 2);
  const float q[2] = {1.f, 0.5f}, k[4] = {1.f, 0.f, 0.f, 2.f}, v[4] = {1.f, 2.f, 3.f, -1.f};
  for (int c = 0; c < 2; ++c) x.q.set(c, q[c]);
  for (int c = 0; c < 4; ++c) x.k.set(c, k[c]), x.v.set(c, v[c]);
  AttentionParams p = x.params();
  p.scale = 1.f;
  run_reference(p);
  // S = (1, 1): equal weights.
  EXPECT_NEAR(x.out.get(0), 0.5 * 1 + 0.5 * 3, 1e-6);
  EXPECT_NEAR(x.out.get(1), 0.5 * 2 + 0.5 * -1, 1e-6);
  EXPECT_NEAR(x.lse[0], std::log(2 * std::exp(1.0)), 1e-6);

  x.q.set(1, 2.f);  // S = (1, 4)
  run_reference(p);
  const double e1 = std::exp(1.0), e4 = std::exp(4.0);
  EXPECT_NEAR(x.out.get(0), (e1 * 1 + e4 * 3) / (e1 + e4), 1e-6);
  EXPECT_NEAR(x.out.get(1), (e1 * 2 + e4 * -1) / (e1 + e4), 1e-6);
  EXPECT_NEAR(x.lse[0], std::log(e1 + e4), 1e-6);
}

// Visibility pattern of every row, read through one-hot values: with v_j = e_j, out_ij = P_ij,
// which is > 0 exactly for the visible keys.
std::vector<std::string> visible_pattern(Rng& rng, std::int64_t sq, std::int64_t sk, std::int64_t left,
                                         std::int64_t right, Batched* result = nullptr) {
  Batched x(1, sq, sk, 1, 1, 4, sk);
  x.q.randomize(rng);
  x.k.randomize(rng);
  for (std::int64_t j = 0; j < sk; ++j) x.v.set(x.v.at({0, j, 0, j}), 1.f);
  AttentionParams p = x.params();
  p.mask = MaskParams{left, right};
  run_reference(p);
  std::vector<std::string> rows;
  for (std::int64_t i = 0; i < sq; ++i) {
    std::string row;
    double sum = 0;
    for (std::int64_t j = 0; j < sk; ++j) {
      const float prob = x.out.get(x.out.at({0, i, 0, j}));
      row += prob > 0.f ? '1' : '0';
      sum += prob;
    }
    if (row.find('1') != std::string::npos) {
      EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << i;
    }
    rows.push_back(row);
  }
  if (result) *result = x;
  return rows;
}

TEST(ReferenceForward, CausalIsBottomRightAligned) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  EXPECT_EQ(visible_pattern(rng, 2, 5, -1, 0), (std::vector<std::string>{"11110", "11111"}));
  Batched masked(1, 1, 1, 1, 1, 1, 1);
  EXPECT_EQ(visible_pattern(rng, 5, 2, -1, 0, &masked),
            (std::vector<std::string>{"00", "00", "00", "10", "11"}));
  // The fully masked rows: output exactly 0 (not NaN), LSE -inf.
  for (std::int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(masked.lse_at(0, 0, i), -kInf);
    for (std::int64_t c = 0; c < 2; ++c) EXPECT_EQ(masked.out.get(masked.out.at({0, i, 0, c})), 0.f);
  }
}

TEST(ReferenceForward, SlidingWindowMatchesDefinition) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (auto [sq, sk, left, right] : std::vector<std::array<std::int64_t, 4>>{
           {7, 11, 2, 1}, {11, 7, 0, 0}, {6, 6, 3, -1}, {5, 9, -1, 2}, {9, 4, 1, 0}}) {
    const std::vector<std::string> rows = visible_pattern(rng, sq, sk, left, right);
    NaiveProblem a;
    a.sq = sq, a.sk = sk, a.left = left, a.right = right;
    for (std::int64_t i = 0; i < sq; ++i) {
      std::string expected;
      for (std::int64_t j = 0; j < sk; ++j) expected += naive_visible(a, i, j) ? '1' : '0';
      EXPECT_EQ(rows[i], expected) << "sq " << sq << " sk " << sk << " window (" << left << ", " << right
                                   << ") row " << i;
    }
  }
}

TEST(ReferenceForward, SinkJoinsTheDenominatorOnly) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Batched x(1, 1, 2, 1, 1, 1, 1);
  x.q.set(0, 1.f), x.k.set(0, 1.f), x.k.set(1, -1.f), x.v.set(0, 2.f), x.v.set(1, 5.f);
  std::vector<float> sink = {0.7f};
  AttentionParams p = x.params();
  p.scale = 1.f;
  p.sink = sink.data();
  run_reference(p);
  const double e0 = std::exp(1.0), e1 = std::exp(-1.0), es = std::exp(0.7);
  EXPECT_NEAR(x.out.get(0), (e0 * 2 + e1 * 5) / (e0 + e1 + es), 1e-6);
  EXPECT_NEAR(x.lse[0], std::log(e0 + e1 + es), 1e-6);

  // Random problem with GQA and a causal mask whose first rows see nothing: LSE = sink there.
  Batched y(2, 6, 3, 4, 2, 8, 5);
  y.randomize(rng);
  std::vector<float> sinks(4);
  for (float& s : sinks) s = rng.uniform(-2.f, 2.f);
  AttentionParams py = y.params();
  py.sink = sinks.data();
  py.mask = MaskParams{-1, 0};
  run_reference(py);
  expect_matches_naive(y, py, 1e-5);
  for (std::int64_t head = 0; head < 4; ++head) {
    EXPECT_FLOAT_EQ(y.lse_at(1, head, 0), sinks[head]);
    EXPECT_EQ(y.out.get(y.out.at({1, 0, head, 0})), 0.f);
  }
}

TEST(ReferenceForward, AlibiMatchesDefinition) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (bool per_batch : {false, true}) {
    for (bool causal : {false, true}) {
      Batched x(2, 5, 9, 3, 3, 8, 8);
      x.randomize(rng);
      std::vector<float> slopes(per_batch ? 6 : 3);
      for (float& s : slopes) s = rng.uniform(0.f, 0.5f);
      AttentionParams p = x.params();
      p.alibi_slopes = slopes.data();
      p.alibi_batch_stride = per_batch ? 3 : 0;
      if (causal) p.mask = MaskParams{-1, 0};
      run_reference(p);
      SCOPED_TRACE(std::string(per_batch ? "(b, h) slopes" : "(h) slopes") + (causal ? ", causal" : ""));
      expect_matches_naive(x, p, 1e-5);
    }
  }
}

TEST(ReferenceForward, SoftcapMatchesDefinition) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Batched x(2, 7, 6, 2, 1, 16, 8);
  x.randomize(rng);
  for (std::int64_t i = 0; i < x.q.numel(); ++i) x.q.set(i, 4.f * x.q.get(i));  // logits well past the cap
  AttentionParams p = x.params();
  p.softcap = 0.8f;
  p.mask = MaskParams{2, 1};
  run_reference(p);
  expect_matches_naive(x, p, 1e-5);
}

TEST(ReferenceForward, GroupedQueryHeadsReadTheirKvHead) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Batched x(2, 3, 4, 6, 2, 8, 3);
  x.q.randomize(rng);
  x.k.randomize(rng);
  // Every value of kv head g is g + 1, so query head h must output exactly h / 3 + 1.
  for (std::int64_t bi = 0; bi < 2; ++bi)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t g = 0; g < 2; ++g)
        for (std::int64_t c = 0; c < 3; ++c) x.v.set(x.v.at({bi, j, g, c}), static_cast<float>(g + 1));
  AttentionParams p = x.params();
  run_reference(p);
  for (std::int64_t bi = 0; bi < 2; ++bi)
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t head = 0; head < 6; ++head)
        EXPECT_NEAR(x.out.get(x.out.at({bi, i, head, 0})), head / 3 + 1, 1e-6) << "head " << head;
  x.v.randomize(rng);
  run_reference(p);
  expect_matches_naive(x, p, 1e-5);
}

TEST(ReferenceForward, Fp16OutputIsTheRoundedExactResult) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Batched x(1, 9, 13, 2, 2, 24, 16, DType::float16);
  x.randomize(rng);
  AttentionParams p = x.params();
  run_reference(p);
  const NaiveResult expected = naive_attention(naive_of(x, 0, p));
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t head = 0; head < 2; ++head)
      for (std::int64_t c = 0; c < 16; ++c) {
        const float exact = static_cast<float>(expected.o(i, head, c));
        const float got = x.out.get(x.out.at({0, i, head, c}));
        // Double rounding (double -> float -> fp16) can differ from direct rounding by one ulp only
        // at exact ties, never more.
        EXPECT_LE(std::abs(got - exact), std::abs(exact) * 0x1p-10f + 0x1p-24f);
      }
}

// ---------------------------------------------------------------------------------------------
// Forward: layouts.

// A varlen problem: q (total_q, h, d), k/v (total_k, hk, d|dv), lse (h, total_q).
struct Varlen {
  std::int64_t h, hk, d, dv;
  std::vector<std::int32_t> cu_q, cu_k;
  Tensor q, k, v, out;
  std::vector<float> lse;

  Varlen(std::vector<std::int32_t> seqlens_q, std::vector<std::int32_t> seqlens_k, std::int64_t heads,
         std::int64_t heads_kv, std::int64_t head_dim, std::int64_t head_dim_v)
      : h(heads), hk(heads_kv), d(head_dim), dv(head_dim_v), cu_q{0}, cu_k{0} {
    for (std::int32_t n : seqlens_q) cu_q.push_back(cu_q.back() + n);
    for (std::int32_t n : seqlens_k) cu_k.push_back(cu_k.back() + n);
    q = Tensor(DType::float32, {cu_q.back(), h, d});
    k = Tensor(DType::float32, {cu_k.back(), hk, d});
    v = Tensor(DType::float32, {cu_k.back(), hk, dv});
    out = Tensor(DType::float32, {cu_q.back(), h, dv});
    out.fill(kNaN);
    lse.assign(static_cast<std::size_t>(h * cu_q.back()), kNaN);
  }
  std::int64_t batch() const { return static_cast<std::int64_t>(cu_q.size()) - 1; }
  AttentionParams params() {
    AttentionParams p;
    p.batch = batch(), p.heads = h, p.heads_kv = hk, p.head_dim = d, p.head_dim_v = dv;
    for (std::int64_t bi = 0; bi < batch(); ++bi) {
      p.seqlen_q = std::max<std::int64_t>(p.seqlen_q, cu_q[bi + 1] - cu_q[bi]);
      p.seqlen_k = std::max<std::int64_t>(p.seqlen_k, cu_k[bi + 1] - cu_k[bi]);
    }
    p.q = q.operand(), p.k = k.operand(), p.v = v.operand(), p.out = out.operand();
    p.lse = lse.data();
    p.lse_head_stride = cu_q.back(), p.lse_row_stride = 1;
    p.cu_seqlens_q = cu_q.data(), p.cu_seqlens_k = cu_k.data();
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    return p;
  }
  // The naive problem of sequence bi, over its first used_q / used_k rows.
  NaiveProblem naive(std::int64_t bi, std::int64_t used_q, std::int64_t used_k, const AttentionParams& p) {
    NaiveProblem a;
    a.sq = used_q, a.sk = used_k, a.h = h, a.hk = hk, a.d = d, a.dv = dv;
    const std::int64_t q0 = cu_q[bi], k0 = cu_k[bi];
    a.q = [this, q0](std::int64_t i, std::int64_t head, std::int64_t c) {
      return q.get(q.at({q0 + i, head, c}));
    };
    a.k = [this, k0](std::int64_t j, std::int64_t kv, std::int64_t c) {
      return k.get(k.at({k0 + j, kv, c}));
    };
    a.v = [this, k0](std::int64_t j, std::int64_t kv, std::int64_t c) {
      return v.get(v.at({k0 + j, kv, c}));
    };
    a.scale = p.scale, a.softcap = p.softcap, a.left = p.mask.window_left, a.right = p.mask.window_right;
    return a;
  }
};

TEST(ReferenceForward, VarlenWithEmptySequencesAndSeqused) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  // Sequence 1 has no queries, sequence 2 no keys; seqused trims sequences 0 and 3.
  Varlen x({3, 0, 4, 5}, {4, 6, 0, 7}, 4, 2, 8, 6);
  x.q.randomize(rng), x.k.randomize(rng), x.v.randomize(rng);
  std::vector<std::int32_t> used_q = {2, 0, 4, 5}, used_k = {4, 6, 0, 3};
  AttentionParams p = x.params();
  p.seqused_q = used_q.data(), p.seqused_k = used_k.data();
  p.mask = MaskParams{-1, 0};
  run_reference(p);
  for (std::int64_t bi = 0; bi < x.batch(); ++bi) {
    const NaiveResult expected = naive_attention(x.naive(bi, used_q[bi], used_k[bi], p));
    for (std::int64_t i = 0; i < x.cu_q[bi + 1] - x.cu_q[bi]; ++i) {
      for (std::int64_t head = 0; head < x.h; ++head) {
        const std::int64_t row = x.cu_q[bi] + i;
        const float lse = x.lse[head * x.cu_q.back() + row];
        if (i >= used_q[bi]) {  // past seqused: untouched
          EXPECT_TRUE(std::isnan(lse));
          EXPECT_TRUE(std::isnan(x.out.get(x.out.at({row, head, 0}))));
          continue;
        }
        if (std::isinf(expected.l(head, i))) {
          EXPECT_EQ(lse, -kInf) << "sequence " << bi << " row " << i;
        } else {
          EXPECT_NEAR(lse, expected.l(head, i), 1e-5);
        }
        for (std::int64_t c = 0; c < x.dv; ++c) {
          EXPECT_NEAR(x.out.get(x.out.at({row, head, c})), expected.o(i, head, c), 1e-5)
              << "sequence " << bi << " row " << i << " head " << head;
        }
      }
    }
  }
}

// Copies dense varlen K/V rows into pages of page_size rows whose order is shuffled, and builds
// the block table that finds them again.
struct Paged {
  std::int64_t page_size, max_blocks;
  std::vector<std::int32_t> block_table;
  Tensor k, v;

  Paged(Varlen& dense, std::int64_t page, Rng& rng) : page_size(page), max_blocks(0) {
    const std::int64_t b = dense.batch();
    for (std::int64_t bi = 0; bi < b; ++bi) {
      max_blocks = std::max(max_blocks, (dense.cu_k[bi + 1] - dense.cu_k[bi] + page - 1) / page);
    }
    const std::int64_t blocks = b * max_blocks + 2;  // spare blocks the table never names
    std::vector<std::int32_t> order(static_cast<std::size_t>(blocks));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng.engine());
    block_table.assign(static_cast<std::size_t>(b * max_blocks), -1);
    k = Tensor(DType::float32, {blocks, page, dense.hk, dense.d});
    v = Tensor(DType::float32, {blocks, page, dense.hk, dense.dv});
    k.randomize(rng), v.randomize(rng);  // garbage outside the sequences' rows
    std::int64_t next = 0;
    for (std::int64_t bi = 0; bi < b; ++bi) {
      const std::int64_t len = dense.cu_k[bi + 1] - dense.cu_k[bi];
      for (std::int64_t blk = 0; blk * page < len; ++blk) block_table[bi * max_blocks + blk] = order[next++];
      for (std::int64_t j = 0; j < len; ++j) {
        const std::int64_t block = block_table[bi * max_blocks + j / page];
        for (std::int64_t g = 0; g < dense.hk; ++g) {
          for (std::int64_t c = 0; c < dense.d; ++c)
            k.set(k.at({block, j % page, g, c}), dense.k.get(dense.k.at({dense.cu_k[bi] + j, g, c})));
          for (std::int64_t c = 0; c < dense.dv; ++c)
            v.set(v.at({block, j % page, g, c}), dense.v.get(dense.v.at({dense.cu_k[bi] + j, g, c})));
        }
      }
    }
  }
};

TEST(ReferenceForward, PagedWithShuffledPagesOfThreeEqualsDense) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Varlen dense({4, 1, 6}, {7, 3, 10}, 4, 1, 8, 8);
  dense.q.randomize(rng), dense.k.randomize(rng), dense.v.randomize(rng);
  AttentionParams p = dense.params();
  p.mask = MaskParams{5, 0};
  run_reference(p);

  Paged paged(dense, 3, rng);
  Tensor out(DType::float32, dense.out.shape);
  out.fill(kNaN);
  std::vector<float> lse(dense.lse.size(), kNaN);
  AttentionParams pp = p;
  pp.k = paged.k.operand(), pp.v = paged.v.operand(), pp.out = out.operand(), pp.lse = lse.data();
  pp.block_table = paged.block_table.data();
  pp.block_table_batch_stride = paged.max_blocks;
  pp.page_size = paged.page_size;
  run_reference(pp);
  for (std::int64_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.get(i), dense.out.get(i)) << "element " << i;
  for (std::size_t i = 0; i < lse.size(); ++i) EXPECT_EQ(lse[i], dense.lse[i]) << "lse " << i;
}

// ---------------------------------------------------------------------------------------------
// Forward: KV cache.

// A dense or paged KV cache with new rows to append, in dtype `type`.
struct Cache {
  std::int64_t b, sq, h, hk, d, dv, capacity, s_new;
  DType dtype;
  Tensor q, k_cache, v_cache, k_new, v_new, out, cos, sin;
  std::vector<std::int32_t> seqlens, batch_idx, leftpad, block_table;
  std::int64_t page_size = 0, max_blocks = 0;
  std::vector<float> lse;

  Cache(std::int64_t batch, std::int64_t b_cache, std::int64_t seqlen_q, std::int64_t heads,
        std::int64_t heads_kv, std::int64_t head_dim, std::int64_t head_dim_v, std::int64_t cache_len,
        std::int64_t new_len, DType type)
      : b(batch),
        sq(seqlen_q),
        h(heads),
        hk(heads_kv),
        d(head_dim),
        dv(head_dim_v),
        capacity(cache_len),
        s_new(new_len),
        dtype(type),
        q(type, {b, sq, h, d}),
        k_cache(type, {b_cache, cache_len, hk, d}),
        v_cache(type, {b_cache, cache_len, hk, dv}),
        k_new(type, {b, new_len, hk, d}),
        v_new(type, {b, new_len, hk, dv}),
        out(type, {b, sq, h, dv}),
        lse(static_cast<std::size_t>(b * h * sq), kNaN) {
    out.fill(kNaN);
  }
  void randomize(Rng& rng) {
    q.randomize(rng), k_cache.randomize(rng), v_cache.randomize(rng), k_new.randomize(rng),
        v_new.randomize(rng);
  }
  // Rotary tables of rotary_dim / 2 columns for positions [0, capacity), in the cache dtype.
  void make_rotary(std::int64_t rotary_dim) {
    cos = Tensor(dtype, {capacity, rotary_dim / 2});
    sin = Tensor(dtype, {capacity, rotary_dim / 2});
    for (std::int64_t pos = 0; pos < capacity; ++pos) {
      for (std::int64_t m = 0; m < rotary_dim / 2; ++m) {
        const double angle = pos * std::pow(10000.0, -2.0 * m / static_cast<double>(rotary_dim));
        cos.set(cos.at({pos, m}), static_cast<float>(std::cos(angle)));
        sin.set(sin.at({pos, m}), static_cast<float>(std::sin(angle)));
      }
    }
  }
  AttentionParams params() {
    AttentionParams p;
    p.dtype = dtype;
    p.batch = b, p.heads = h, p.heads_kv = hk, p.head_dim = d, p.head_dim_v = dv;
    p.seqlen_q = sq, p.seqlen_k = capacity;
    p.q = q.operand(), p.k = k_cache.operand(), p.v = v_cache.operand(), p.out = out.operand();
    p.lse = lse.data();
    p.lse_batch_stride = h * sq, p.lse_head_stride = sq, p.lse_row_stride = 1;
    p.is_kvcache = true;
    p.cache_seqlens = seqlens.empty() ? nullptr : seqlens.data();
    p.cache_batch_idx = batch_idx.empty() ? nullptr : batch_idx.data();
    p.leftpad_k = leftpad.empty() ? nullptr : leftpad.data();
    p.cache_capacity = capacity;
    if (s_new > 0) p.k_new = k_new.operand(), p.v_new = v_new.operand(), p.seqlen_new = s_new;
    if (cos.numel() > 0 && !cos.shape.empty()) {
      p.rotary_cos = cos.data(), p.rotary_sin = sin.data();
      p.rotary_dim = 2 * cos.shape[1];
      p.rotary_cos_row_stride = p.rotary_sin_row_stride = cos.shape[1];
    }
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    return p;
  }
  std::int64_t cache_row(std::int64_t bi) const { return batch_idx.empty() ? bi : batch_idx[bi]; }
};

// Rotates pair (x0, x1) at (cos, sin) and rounds to dtype: the documented rotary formula.
std::pair<float, float> rotate(DType dtype, double x0, double x1, double cos, double sin) {
  return {round_to(dtype, static_cast<float>(x0 * cos - x1 * sin)),
          round_to(dtype, static_cast<float>(x0 * sin + x1 * cos))};
}

TEST(ReferenceKVCache, AppendWritesExactlyTheNewRowsAndAttendsOverThem) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Cache x(3, 4, 2, 4, 2, 8, 8, 12, 3, DType::bfloat16);
  x.randomize(rng);
  x.seqlens = {4, 9, 2};
  x.batch_idx = {2, 0, 3};  // cache row 1 belongs to nobody
  x.leftpad = {1, 0, 2};
  const Tensor k_before = x.k_cache, v_before = x.v_cache;
  AttentionParams p = x.params();
  p.mask = MaskParams{-1, 0};
  run_reference(p);

  for (std::int64_t row = 0; row < 4; ++row) {
    for (std::int64_t pos = 0; pos < x.capacity; ++pos) {
      std::int64_t owner = -1;
      for (std::int64_t bi = 0; bi < x.b; ++bi)
        if (x.cache_row(bi) == row && pos >= x.seqlens[bi] && pos < x.seqlens[bi] + x.s_new) owner = bi;
      for (std::int64_t g = 0; g < x.hk; ++g) {
        for (std::int64_t c = 0; c < x.d; ++c) {
          const std::int64_t at = x.k_cache.at({row, pos, g, c});
          const float expected =
              owner < 0 ? k_before.get(at) : x.k_new.get(x.k_new.at({owner, pos - x.seqlens[owner], g, c}));
          ASSERT_EQ(x.k_cache.get(at), expected) << "k cache row " << row << " position " << pos;
        }
        for (std::int64_t c = 0; c < x.dv; ++c) {
          const std::int64_t at = x.v_cache.at({row, pos, g, c});
          const float expected =
              owner < 0 ? v_before.get(at) : x.v_new.get(x.v_new.at({owner, pos - x.seqlens[owner], g, c}));
          ASSERT_EQ(x.v_cache.get(at), expected) << "v cache row " << row << " position " << pos;
        }
      }
    }
  }

  for (std::int64_t bi = 0; bi < x.b; ++bi) {
    const std::int64_t row = x.cache_row(bi), first = x.leftpad[bi];
    NaiveProblem a;
    a.sq = x.sq, a.sk = x.seqlens[bi] + x.s_new - first, a.h = x.h, a.hk = x.hk, a.d = x.d, a.dv = x.dv;
    a.q = [&x, bi](std::int64_t i, std::int64_t head, std::int64_t c) {
      return x.q.get(x.q.at({bi, i, head, c}));
    };
    a.k = [&x, row, first](std::int64_t j, std::int64_t g, std::int64_t c) {
      return x.k_cache.get(x.k_cache.at({row, first + j, g, c}));
    };
    a.v = [&x, row, first](std::int64_t j, std::int64_t g, std::int64_t c) {
      return x.v_cache.get(x.v_cache.at({row, first + j, g, c}));
    };
    a.scale = p.scale, a.right = 0;
    const NaiveResult expected = naive_attention(a);
    for (std::int64_t i = 0; i < x.sq; ++i)
      for (std::int64_t head = 0; head < x.h; ++head) {
        EXPECT_NEAR(x.lse[(bi * x.h + head) * x.sq + i], expected.l(head, i), 1e-5);
        for (std::int64_t c = 0; c < x.dv; ++c) {
          const double want = expected.o(i, head, c);
          EXPECT_NEAR(x.out.get(x.out.at({bi, i, head, c})), want, std::abs(want) * 0x1p-8 + 1e-6);
        }
      }
  }
}

TEST(ReferenceKVCache, RotaryBothLayoutsMatchTheFormula) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (bool interleaved : {true, false}) {
    for (std::int64_t rotary_dim : {4, 8}) {
      for (bool causal : {false, true}) {
        SCOPED_TRACE(std::string(interleaved ? "interleaved" : "neox") + " rotary_dim " +
                     std::to_string(rotary_dim) + (causal ? " causal" : ""));
        Cache x(2, 2, 3, 2, 1, 8, 4, 16, 3, DType::float16);
        x.randomize(rng);
        x.seqlens = {5, 11};
        x.make_rotary(rotary_dim);
        const Tensor k_before = x.k_cache;
        AttentionParams p = x.params();
        p.rotary_interleaved = interleaved;
        if (causal) p.mask = MaskParams{-1, 0};
        run_reference(p);

        const std::int64_t half = rotary_dim / 2;
        auto pair = [&](std::int64_t m) {
          return interleaved ? std::pair<std::int64_t, std::int64_t>{2 * m, 2 * m + 1}
                             : std::pair<std::int64_t, std::int64_t>{m, m + half};
        };
        // The cache rows: new k rotated at cache_end + t, columns >= rotary_dim copied.
        for (std::int64_t bi = 0; bi < 2; ++bi) {
          for (std::int64_t t = 0; t < x.s_new; ++t) {
            const std::int64_t pos = x.seqlens[bi] + t;
            std::vector<float> expected(x.d);
            for (std::int64_t c = 0; c < x.d; ++c) expected[c] = x.k_new.get(x.k_new.at({bi, t, 0, c}));
            for (std::int64_t m = 0; m < half; ++m) {
              const auto [c0, c1] = pair(m);
              std::tie(expected[c0], expected[c1]) =
                  rotate(x.dtype, expected[c0], expected[c1], x.cos.get(x.cos.at({pos, m})),
                         x.sin.get(x.sin.at({pos, m})));
            }
            for (std::int64_t c = 0; c < x.d; ++c)
              EXPECT_EQ(x.k_cache.get(x.k_cache.at({bi, pos, 0, c})), expected[c])
                  << "t " << t << " col " << c;
          }
          EXPECT_EQ(x.k_cache.get(x.k_cache.at({bi, x.seqlens[bi] + x.s_new, 0, 0})),
                    k_before.get(k_before.at({bi, x.seqlens[bi] + x.s_new, 0, 0})));
        }
        // The output: q row i rotated at cache_end + i (causal) or cache_end, over the new cache.
        for (std::int64_t bi = 0; bi < 2; ++bi) {
          std::vector<float> q_rot(static_cast<std::size_t>(x.sq * x.h * x.d));
          for (std::int64_t i = 0; i < x.sq; ++i)
            for (std::int64_t head = 0; head < x.h; ++head) {
              float* row = &q_rot[(i * x.h + head) * x.d];
              for (std::int64_t c = 0; c < x.d; ++c) row[c] = x.q.get(x.q.at({bi, i, head, c}));
              const std::int64_t pos = x.seqlens[bi] + (causal ? i : 0);
              for (std::int64_t m = 0; m < half; ++m) {
                const auto [c0, c1] = pair(m);
                std::tie(row[c0], row[c1]) = rotate(x.dtype, row[c0], row[c1], x.cos.get(x.cos.at({pos, m})),
                                                    x.sin.get(x.sin.at({pos, m})));
              }
            }
          NaiveProblem a;
          a.sq = x.sq, a.sk = x.seqlens[bi] + x.s_new, a.h = x.h, a.hk = x.hk, a.d = x.d, a.dv = x.dv;
          a.q = [&](std::int64_t i, std::int64_t head, std::int64_t c) {
            return q_rot[(i * x.h + head) * x.d + c];
          };
          a.k = [&x, bi](std::int64_t j, std::int64_t g, std::int64_t c) {
            return x.k_cache.get(x.k_cache.at({bi, j, g, c}));
          };
          a.v = [&x, bi](std::int64_t j, std::int64_t g, std::int64_t c) {
            return x.v_cache.get(x.v_cache.at({bi, j, g, c}));
          };
          a.scale = p.scale, a.right = causal ? 0 : -1;
          const NaiveResult expected = naive_attention(a);
          for (std::int64_t i = 0; i < x.sq; ++i)
            for (std::int64_t head = 0; head < x.h; ++head) {
              EXPECT_NEAR(x.lse[(bi * x.h + head) * x.sq + i], expected.l(head, i), 1e-5);
              for (std::int64_t c = 0; c < x.dv; ++c) {
                const double want = expected.o(i, head, c);
                EXPECT_NEAR(x.out.get(x.out.at({bi, i, head, c})), want, std::abs(want) * 0x1p-10 + 1e-6);
              }
            }
        }
      }
    }
  }
}

TEST(ReferenceKVCache, PagedCacheEqualsDenseCache) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Cache dense(2, 2, 2, 4, 2, 8, 8, 10, 2, DType::float32);  // sq = s_new: q positions stay in the tables
  dense.randomize(rng);
  dense.seqlens = {3, 8};
  dense.leftpad = {1, 0};
  dense.make_rotary(4);
  // The paged copy: pages of 3 rows, shuffled; block row bi holds cache row bi.
  const std::int64_t page = 3, max_blocks = (dense.capacity + page - 1) / page, blocks = 2 * max_blocks + 1;
  std::vector<std::int32_t> order(static_cast<std::size_t>(blocks));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng.engine());
  std::vector<std::int32_t> table(order.begin(), order.begin() + 2 * max_blocks);
  Tensor k_paged(DType::float32, {blocks, page, 2, 8}), v_paged(DType::float32, {blocks, page, 2, 8});
  k_paged.randomize(rng), v_paged.randomize(rng);
  for (std::int64_t bi = 0; bi < 2; ++bi)
    for (std::int64_t pos = 0; pos < dense.capacity; ++pos)
      for (std::int64_t g = 0; g < 2; ++g)
        for (std::int64_t c = 0; c < 8; ++c) {
          const std::int64_t block = table[bi * max_blocks + pos / page];
          k_paged.set(k_paged.at({block, pos % page, g, c}),
                      dense.k_cache.get(dense.k_cache.at({bi, pos, g, c})));
          v_paged.set(v_paged.at({block, pos % page, g, c}),
                      dense.v_cache.get(dense.v_cache.at({bi, pos, g, c})));
        }
  Tensor out(DType::float32, dense.out.shape);
  std::vector<float> lse(dense.lse.size());
  AttentionParams p = dense.params();
  p.mask = MaskParams{4, 0};
  AttentionParams pp = p;
  pp.k = k_paged.operand(), pp.v = v_paged.operand(), pp.out = out.operand(), pp.lse = lse.data();
  pp.block_table = table.data(), pp.block_table_batch_stride = max_blocks, pp.page_size = page;
  pp.cache_capacity = max_blocks * page;
  run_reference(p);
  run_reference(pp);
  for (std::int64_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.get(i), dense.out.get(i)) << "element " << i;
  for (std::size_t i = 0; i < lse.size(); ++i) EXPECT_EQ(lse[i], dense.lse[i]);
  for (std::int64_t bi = 0; bi < 2; ++bi)
    for (std::int64_t pos = 0; pos < dense.capacity; ++pos) {
      const std::int64_t block = table[bi * max_blocks + pos / page];
      for (std::int64_t c = 0; c < 8; ++c)
        EXPECT_EQ(k_paged.get(k_paged.at({block, pos % page, 1, c})),
                  dense.k_cache.get(dense.k_cache.at({bi, pos, 1, c})));
    }
}

// ---------------------------------------------------------------------------------------------
// Forward: dropout.

// The key schedule the Hopper forward reads as constants (dropout_keys) gives the same draws as the per-call
// schedule of dropout_draws, for seeds and offsets of all 64 bits.
TEST(ReferenceForward, DropoutKeySchedulePreservesTheDraws) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int trial = 0; trial < 200; ++trial) {
    auto bits64 = [&] {
      return (static_cast<std::uint64_t>(rng.engine()()) << 32) | static_cast<std::uint64_t>(rng.engine()());
    };
    const std::uint64_t seed = bits64(), offset = bits64() >> rng.integer(0, 63);
    const PhiloxKeys keys = dropout_keys(seed, offset);
    const std::int64_t batch_head = rng.integer(0, 1 << 20), i = rng.integer(0, 1 << 24);
    const std::int64_t j = rng.integer(0, 1 << 24);
    const Philox4 expected = dropout_draws(seed, offset, batch_head, i, j);
    const Philox4 keyed = dropout_draws_keyed(keys, offset, batch_head, i, j);
    EXPECT_EQ(keyed.x, expected.x);
    EXPECT_EQ(keyed.y, expected.y);
    EXPECT_EQ(keyed.z, expected.z);
    EXPECT_EQ(keyed.w, expected.w);
  }
}

// The Hopper forward's two-at-once comparison of a Philox word's draws with the threshold
// (dropout_draws_below): bits 15 and 31 against the plain comparisons, for random words and thresholds and
// every edge (0, 1, either side of 0x8000, 0xffff, each draw itself and its neighbours).
TEST(ReferenceForward, DropoutDrawsBelowMatchesTheComparisons) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  auto check = [](std::uint32_t word, std::uint32_t t) {
    const std::uint32_t below = dropout_draws_below(word, t * 0x10001u, (t & 0x7fffu) * 0x10001u);
    EXPECT_EQ((below >> 15) & 1u, (word & 0xffffu) < t ? 1u : 0u) << std::hex << word << " t " << t;
    EXPECT_EQ(below >> 31, (word >> 16) < t ? 1u : 0u) << std::hex << word << " t " << t;
  };
  for (int trial = 0; trial < 20000; ++trial) {
    const auto word = static_cast<std::uint32_t>(rng.engine()());
    const std::uint32_t lo = word & 0xffffu, hi = word >> 16;
    for (const std::uint32_t t :
         {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, lo, hi, std::min(lo + 1, 0xffffu),
          std::min(hi + 1, 0xffffu), static_cast<std::uint32_t>(rng.integer(0, 0xffff))}) {
      check(word, t);
    }
  }
  for (const float p : {1e-4f, 0.1f, 0.17f, 0.5f, 0.9f}) check(0x80007fffu, dropout_threshold(p));
}

TEST(ReferenceForward, DropoutDropsThePhiloxElementsAndKeepsTheDenominator) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const std::int64_t sq = 32, sk = 256, h = 2;
  Batched x(2, sq, sk, h, 1, 8, sk);
  x.q.randomize(rng), x.k.randomize(rng);
  for (std::int64_t bi = 0; bi < 2; ++bi)
    for (std::int64_t j = 0; j < sk; ++j) x.v.set(x.v.at({bi, j, 0, j}), 1.f);  // out_ij = P~_ij
  AttentionParams p = x.params();
  run_reference(p);
  const Tensor undropped = x.out;
  const std::vector<float> undropped_lse = x.lse;

  p.dropout_p = 0.17f;
  p.dropout_seed = (static_cast<std::uint64_t>(rng.integer(0, 1 << 30)) << 32) | 12345u;
  p.dropout_offset = static_cast<std::uint64_t>(rng.integer(0, 1 << 30));
  run_reference(p);
  std::int64_t dropped = 0, total = 0;
  for (std::int64_t bi = 0; bi < 2; ++bi)
    for (std::int64_t head = 0; head < h; ++head)
      for (std::int64_t i = 0; i < sq; ++i)
        for (std::int64_t j = 0; j < sk; ++j) {
          const std::int64_t at = x.out.at({bi, i, head, j});
          const bool expect_dropped = dropout_is_dropped(p.dropout_seed, p.dropout_offset,
                                                         dropout_threshold(p.dropout_p), bi * h + head, i, j);
          const float expected =
              expect_dropped ? 0.f : static_cast<float>(undropped.get(at) / (1.0 - p.dropout_p));
          ASSERT_NEAR(x.out.get(at), expected, 1e-6)
              << "b " << bi << " head " << head << " i " << i << " j " << j;
          dropped += x.out.get(at) == 0.f;
          ++total;
        }
  EXPECT_NEAR(static_cast<double>(dropped) / total, p.dropout_p, 0.01);
  EXPECT_EQ(x.lse, undropped_lse);  // the denominator does not see dropout
}

// ---------------------------------------------------------------------------------------------
// Combine.

TEST(ReferenceCombine, MatchesLogSumExpAndHandlesEmptySplits) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const std::int64_t splits = 5, b = 2, sq = 3, h = 2, dv = 4;
  std::vector<float> out_partial(static_cast<std::size_t>(splits * b * sq * h * dv));
  std::vector<float> lse_partial(static_cast<std::size_t>(splits * b * sq * h));
  for (float& x : out_partial) x = rng.uniform();
  for (float& x : lse_partial) x = rng.uniform(-5.f, 5.f);
  // Split 3 saw no key for any row of batch 0; row (b 1, r 2, h 1) saw none in any split.
  for (std::int64_t r = 0; r < sq; ++r)
    for (std::int64_t head = 0; head < h; ++head) lse_partial[((3 * b + 0) * sq + r) * h + head] = -INFINITY;
  for (std::int64_t s = 0; s < splits; ++s) lse_partial[((s * b + 1) * sq + 2) * h + 1] = -INFINITY;
  for (std::int64_t s = 0; s < splits; ++s)
    for (std::int64_t i = 0; i < b * sq * h; ++i)
      if (std::isinf(lse_partial[s * b * sq * h + i]))
        for (std::int64_t c = 0; c < dv; ++c) out_partial[(s * b * sq * h + i) * dv + c] = kNaN;

  for (DType dtype : {DType::float32, DType::bfloat16}) {
    Tensor out(dtype, {b, sq, h, dv});
    out.fill(kNaN);
    std::vector<float> lse(static_cast<std::size_t>(b * sq * h), kNaN);
    CombineParams p;
    p.splits = splits, p.batch = b, p.seqlen = sq, p.heads = h, p.head_dim_v = dv;
    p.out_partial = out_partial.data();
    p.op_split_stride = b * sq * h * dv, p.op_batch_stride = sq * h * dv, p.op_row_stride = h * dv,
    p.op_head_stride = dv;
    p.lse_partial = lse_partial.data();
    p.lp_split_stride = b * sq * h, p.lp_batch_stride = sq * h, p.lp_row_stride = h, p.lp_head_stride = 1;
    p.out_dtype = dtype;
    p.out = out.operand();
    p.lse = lse.data();
    p.lse_batch_stride = sq * h, p.lse_row_stride = h, p.lse_head_stride = 1;
    run_reference(p);
    for (std::int64_t row = 0; row < b * sq * h; ++row) {
      double sum = 0;
      for (std::int64_t s = 0; s < splits; ++s) sum += std::exp(double{lse_partial[s * b * sq * h + row]});
      const double want_lse = std::log(sum);
      if (sum == 0) {
        EXPECT_EQ(lse[row], -kInf);
      } else {
        EXPECT_NEAR(lse[row], want_lse, 1e-5);
      }
      for (std::int64_t c = 0; c < dv; ++c) {
        double want = 0;
        for (std::int64_t s = 0; s < splits; ++s) {
          const double l = lse_partial[s * b * sq * h + row];
          if (!std::isinf(l)) want += std::exp(l - want_lse) * out_partial[(s * b * sq * h + row) * dv + c];
        }
        EXPECT_NEAR(out.get(row * dv + c), round_to(dtype, static_cast<float>(want)), 1e-6) << "row " << row;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Backward against central finite differences of the scalar loss L = sum(dO * O).

struct BackwardCase {
  const char* name;
  std::int64_t hk = 2;
  MaskParams mask{};
  float softcap = 0.f;
  bool alibi = false, sink = false;
  float dropout = 0.f;
};

// L = sum(dO * out) after a reference forward (out rows the forward does not write stay 0).
double loss(const AttentionParams& p, Tensor& out, const Tensor& dout) {
  out.fill(0.f);
  run_reference(p, 1);
  double sum = 0;
  for (std::int64_t i = 0; i < out.numel(); ++i) sum += static_cast<double>(dout.get(i)) * out.get(i);
  return sum;
}

// dL/dx for every element of `input` by central differences, dividing by the stored step.
std::vector<double> numeric_gradient(const AttentionParams& p, Tensor& input, Tensor& out,
                                     const Tensor& dout) {
  std::vector<double> grad(static_cast<std::size_t>(input.numel()));
  for (std::int64_t i = 0; i < input.numel(); ++i) {
    const float x = input.get(i);
    input.set(i, x + 4e-3f);
    const float hi = input.get(i);
    const double up = loss(p, out, dout);
    input.set(i, x - 4e-3f);
    const float lo = input.get(i);
    const double down = loss(p, out, dout);
    input.set(i, x);
    grad[i] = (up - down) / (static_cast<double>(hi) - lo);
  }
  return grad;
}

void expect_gradient(const char* what, const Tensor& analytic, const std::vector<double>& numeric) {
  for (std::int64_t i = 0; i < analytic.numel(); ++i) {
    EXPECT_NEAR(analytic.get(i), numeric[i], 2e-3 + 2e-3 * std::abs(numeric[i])) << what << " element " << i;
  }
}

BackwardParams backward_params(const AttentionParams& p, Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) {
  BackwardParams bp;
  static_cast<AttentionParams&>(bp) = p;
  // Without the forward's LSE and output the reference recomputes both in double, so the
  // gradients are those of the exact attention function, which finite differences measure.
  bp.lse = nullptr;
  bp.out = Operand{};
  bp.dout = dout.operand(), bp.dq = dq.operand(), bp.dk = dk.operand(), bp.dv = dv.operand();
  return bp;
}

TEST(ReferenceBackward, MatchesFiniteDifferences) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const std::vector<BackwardCase> cases = {
      {"plain"},
      {"mha", 4},
      {"causal", 2, {-1, 0}},
      {"window", 2, {1, 1}},
      {"softcap", 2, {}, 0.6f},
      {"alibi causal", 2, {-1, 0}, 0.f, true},
      {"sink causal", 2, {-1, 0}, 0.f, false, true},
      {"dropout", 2, {}, 0.f, false, false, 0.3f},
      {"everything", 1, {2, 0}, 1.2f, true, true, 0.2f},
  };
  for (const BackwardCase& c : cases) {
    SCOPED_TRACE(c.name);
    Batched x(2, 3, 5, 4, c.hk, 4, 3);
    x.randomize(rng);
    Tensor dout(DType::float32, x.out.shape), dq(DType::float32, x.q.shape), dk(DType::float32, x.k.shape),
        dv(DType::float32, x.v.shape);
    dout.randomize(rng);
    dq.fill(kNaN), dk.fill(kNaN), dv.fill(kNaN);
    std::vector<float> slopes(8), sink(4), dsink(4, kNaN);
    for (float& s : slopes) s = rng.uniform(0.f, 0.5f);
    for (float& s : sink) s = rng.uniform(-1.f, 1.f);
    AttentionParams p = x.params();
    p.mask = c.mask;
    p.softcap = c.softcap;
    if (c.softcap > 0) {
      for (std::int64_t i = 0; i < x.q.numel(); ++i) x.q.set(i, 2.f * x.q.get(i));
    }
    if (c.alibi) p.alibi_slopes = slopes.data(), p.alibi_batch_stride = 4;
    if (c.sink) p.sink = sink.data();
    p.dropout_p = c.dropout;
    p.dropout_seed = 0x1234abcd5678ull, p.dropout_offset = 77;
    BackwardParams bp = backward_params(p, dout, dq, dk, dv);
    bp.dsink = dsink.data();
    run_reference(bp);

    expect_gradient("dq", dq, numeric_gradient(p, x.q, x.out, dout));
    expect_gradient("dk", dk, numeric_gradient(p, x.k, x.out, dout));
    expect_gradient("dv", dv, numeric_gradient(p, x.v, x.out, dout));
    if (c.sink) {
      for (std::int64_t head = 0; head < 4; ++head) {
        const float s = sink[head];
        sink[head] = s + 4e-3f;
        const double up = loss(p, x.out, dout);
        sink[head] = s - 4e-3f;
        const double down = loss(p, x.out, dout);
        const double step = static_cast<double>(s + 4e-3f) - (s - 4e-3f);
        sink[head] = s;
        EXPECT_NEAR(dsink[head], (up - down) / step, 2e-3) << "dsink head " << head;
      }
    }
  }
}

TEST(ReferenceBackward, VarlenZeroesUnusedRowsAndMatchesFiniteDifferences) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  Varlen x({3, 2, 2}, {4, 5, 0}, 2, 1, 3, 2);
  x.q.randomize(rng), x.k.randomize(rng), x.v.randomize(rng);
  std::vector<std::int32_t> used_q = {2, 2, 1}, used_k = {3, 5, 0};
  Tensor dout(DType::float32, x.out.shape), dq(DType::float32, x.q.shape), dk(DType::float32, x.k.shape),
      dv(DType::float32, x.v.shape);
  dout.randomize(rng);
  dq.fill(kNaN), dk.fill(kNaN), dv.fill(kNaN);
  AttentionParams p = x.params();
  p.seqused_q = used_q.data(), p.seqused_k = used_k.data();
  p.mask = MaskParams{-1, 0};
  BackwardParams bp = backward_params(p, dout, dq, dk, dv);
  run_reference(bp);
  // Unused rows get zero gradients, and so do the finite differences: they never reach out.
  expect_gradient("dq", dq, numeric_gradient(p, x.q, x.out, dout));
  expect_gradient("dk", dk, numeric_gradient(p, x.k, x.out, dout));
  expect_gradient("dv", dv, numeric_gradient(p, x.v, x.out, dout));
  EXPECT_EQ(dq.get(dq.at({2, 1, 2})), 0.f);  // sequence 0, row 2 > seqused 2
  EXPECT_EQ(dk.get(dk.at({3, 0, 1})), 0.f);  // sequence 0, key 3 > seqused 3
  EXPECT_EQ(dq.get(dq.at({6, 0, 0})), 0.f);  // sequence 2 has no keys: dq exactly 0
}

// ---------------------------------------------------------------------------------------------
// Precision emulation and the workspace contract.

TEST(ReferenceEmulation, Float32IsCloseAndFp16IsLowPrecision) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
    SCOPED_TRACE(std::string("dtype ") + std::to_string(static_cast<int>(dtype)));
    Batched x(2, 17, 33, 4, 2, 32, 16, dtype);
    x.randomize(rng);
    Tensor dout(dtype, x.out.shape), dq(dtype, x.q.shape), dk(dtype, x.k.shape), dv(dtype, x.v.shape);
    dout.randomize(rng);
    AttentionParams p = x.params();
    p.mask = MaskParams{-1, 0};
    p.softcap = 5.f;
    BackwardParams bp = backward_params(p, dout, dq, dk, dv);

    run_reference(p);
    run_reference(bp);
    const Tensor out = x.out, grad_q = dq, grad_k = dk, grad_v = dv;
    run_emulated(p, dtype);
    run_emulated(bp, dtype);
    auto max_diff = [](const Tensor& a, const Tensor& b) {
      double m = 0;
      for (std::int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(double{a.get(i)} - b.get(i)));
      return m;
    };
    const double out_err = max_diff(out, x.out);
    const double grad_err = std::max({max_diff(grad_q, dq), max_diff(grad_k, dk), max_diff(grad_v, dv)});
    if (dtype == DType::float32) {
      EXPECT_LT(out_err, 1e-5);
      EXPECT_LT(grad_err, 1e-4);
    } else {
      // Rounding S, P and O to 16 bits costs accuracy, but stays within a few of the format's ulps.
      EXPECT_GT(out_err, 0.0);
      EXPECT_LT(out_err, dtype == DType::float16 ? 5e-3 : 4e-2);
      EXPECT_GT(grad_err, 0.0);
      EXPECT_LT(grad_err, dtype == DType::float16 ? 2e-2 : 1.5e-1);
    }
  }
}

TEST(ReferenceWorkspace, DependsOnShapesOnlyAndShortWorkspaceIsAnError) {
  Batched x(2, 5, 7, 2, 1, 8, 8);
  AttentionParams p = x.params();
  EXPECT_GT(cpu_reference::workspace_size(p, 1), 0u);
  EXPECT_EQ(cpu_reference::workspace_size(p, 4), 4 * cpu_reference::workspace_size(p, 1));
  // A workspace for one thread runs with one thread even when more are asked for.
  Rng rng;
  x.randomize(rng);
  Workspace one(cpu_reference::workspace_size(p, 1));
  EXPECT_TRUE(cpu_reference::run(p, one.context(8)).ok());
  Workspace none(0);
  const Status status = cpu_reference::run(p, none.context(1));
  EXPECT_EQ(status.code(), ErrorCode::internal);
  EXPECT_NE(std::string(status.message()).find("workspace"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace flashattn::detail
