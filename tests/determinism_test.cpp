// Run-to-run reproducibility: the same call on the same inputs gives bitwise the
// same results.
//
//   * backward with deterministic = true, 10 runs: dq, dk, dv, dsink bit-equal
//     (GQA so several q heads accumulate into one dk/dv, dropout, sink; batched and
//     varlen);
//   * forward and KV-cache forward (split-KV + combine), 3 runs: out and LSE
//     bit-equal (the forward has no accumulation-order freedom to excuse);
//   * forward with num_splits = 1: a sequence's out and LSE bit-equal alone and in a batch.
// Correctness itself is the other suites' business (they run the same paths).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

namespace flashattn::test {
namespace {

constexpr int kBackwardRuns = 10;
constexpr int kForwardRuns = 3;

class DeterminismTest : public ::testing::TestWithParam<Backend> {};

struct BackwardProblem {
  bool varlen;
  std::int64_t b, sq, sk, h, hk, d;
  DType dtype;
  Features features;
};

void check_backward_deterministic(Backend backend, const BackwardProblem& p) {
  Rng rng = Rng::for_current_test();
  PackedSequences seq;
  std::vector<std::int64_t> q_shape, k_shape, lse_shape;
  if (p.varlen) {
    seq = draw_sequences(rng, p.b, p.sq, p.sk, true, true);
    q_shape = {seq.total_q, p.h, p.d};
    k_shape = {seq.total_k, p.hk, p.d};
    lse_shape = {p.h, seq.total_q};
  } else {
    q_shape = {p.b, p.sq, p.h, p.d};
    k_shape = {p.b, p.sk, p.hk, p.d};
    lse_shape = {p.b, p.h, p.sq};
  }
  HostTensor q(p.dtype, q_shape), k(p.dtype, k_shape), v(p.dtype, k_shape), dout(p.dtype, q_shape);
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  dout.fill_normal(rng);
  const OptionTensors opts = draw_options(p.features, rng, p.b, p.h, p.d, p.sk);
  HostTensor out(p.dtype, q_shape), lse(DType::float32, lse_shape);
  HostTensor dq(p.dtype, q_shape), dk(p.dtype, k_shape), dv(p.dtype, k_shape);
  HostTensor dsink = p.features.sink ? HostTensor(DType::float32, {p.h}) : HostTensor();

  // The forward's outputs, from the backend itself (any consistent out/lse will do here).
  {
    DeviceBinding device(backend);
    Status status;
    if (p.varlen) {
      VarlenForwardArgs a;
      a.q = device.view(q);
      a.k = device.view(k);
      a.v = device.view(v);
      a.cu_seqlens_q = device.view(seq.cu_q);
      a.cu_seqlens_k = device.view(seq.cu_k);
      a.max_seqlen_q = p.sq;
      a.max_seqlen_k = p.sk;
      a.seqused_q = device.view(seq.seqused_q);
      a.seqused_k = device.view(seq.seqused_k);
      a.out = device.view(out);
      a.lse = device.view(lse);
      a.options = opts.bind(device);
      status = run_on(backend, a);
    } else {
      ForwardArgs a;
      a.q = device.view(q);
      a.k = device.view(k);
      a.v = device.view(v);
      a.out = device.view(out);
      a.lse = device.view(lse);
      a.options = opts.bind(device);
      status = run_on(backend, a);
    }
    if (status.code() == ErrorCode::unsupported && is_cuda(backend)) {
      GTEST_SKIP() << status.message();
    }
    ASSERT_TRUE(status.ok()) << status.message();
    out = device.fetch(out);
    lse = device.fetch(lse);
  }

  std::vector<HostTensor> first;
  for (int run = 0; run < kBackwardRuns; ++run) {
    DeviceBinding device(backend);
    Status status;
    if (p.varlen) {
      VarlenBackwardArgs a;
      a.dout = device.view(dout);
      a.q = device.view(q);
      a.k = device.view(k);
      a.v = device.view(v);
      a.out = device.view(out);
      a.lse = device.view(lse);
      a.cu_seqlens_q = device.view(seq.cu_q);
      a.cu_seqlens_k = device.view(seq.cu_k);
      a.max_seqlen_q = p.sq;
      a.max_seqlen_k = p.sk;
      a.seqused_q = device.view(seq.seqused_q);
      a.seqused_k = device.view(seq.seqused_k);
      a.dq = device.view(dq);
      a.dk = device.view(dk);
      a.dv = device.view(dv);
      a.dsink = device.view(dsink);
      a.options = opts.bind(device);
      a.deterministic = true;
      status = run_on(backend, a);
    } else {
      BackwardArgs a;
      a.dout = device.view(dout);
      a.q = device.view(q);
      a.k = device.view(k);
      a.v = device.view(v);
      a.out = device.view(out);
      a.lse = device.view(lse);
      a.dq = device.view(dq);
      a.dk = device.view(dk);
      a.dv = device.view(dv);
      a.dsink = device.view(dsink);
      a.options = opts.bind(device);
      a.deterministic = true;
      status = run_on(backend, a);
    }
    if (status.code() == ErrorCode::unsupported && is_cuda(backend)) {
      GTEST_SKIP() << status.message();
    }
    ASSERT_TRUE(status.ok()) << status.message();
    std::vector<HostTensor> results = {device.fetch(dq), device.fetch(dk), device.fetch(dv)};
    if (dsink.defined()) results.push_back(device.fetch(dsink));
    if (run == 0) {
      first = std::move(results);
      continue;
    }
    const char* names[] = {"dq", "dk", "dv", "dsink"};
    for (std::size_t i = 0; i < results.size(); ++i) {
      ASSERT_TRUE(expect_identical(std::string(names[i]) + " of run " + std::to_string(run) + " vs run 0",
                                   first[i], results[i]));
    }
  }
}

TEST_P(DeterminismTest, BackwardBatchedGqa) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {false, 2, 113, 203, 6, 2, 64, DType::float16, {MaskKind::causal, 0.f, AlibiKind::none, 0.17f, true}});
}

TEST_P(DeterminismTest, BackwardBatchedMqaLong) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {false, 1, 512, 700, 4, 1, 128, DType::bfloat16, {MaskKind::local, 1.5f, AlibiKind::per_batch_head}});
}

// The same varlen GQA problem in bf16, so the CUDA backends (fp16 / bf16 only) run a varlen
// deterministic backward too (causal here, with a sink).
TEST_P(DeterminismTest, BackwardVarlenGqaBf16) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {true, 4, 239, 217, 4, 2, 96, DType::bfloat16, {MaskKind::causal, 0.f, AlibiKind::none, 0.f, true}});
}

TEST_P(DeterminismTest, BackwardVarlenGqa) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {true, 4, 239, 217, 4, 2, 96, DType::float32, {MaskKind::none, 0.f, AlibiKind::per_head, 0.f, true}});
}

// The CUDA backends run fp16/bf16 only: a varlen case they run too (ragged lengths, causal:
// the deterministic dQ order depends on each sequence's own key-tile count and shift).
TEST_P(DeterminismTest, BackwardVarlenCausalBf16) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {true, 4, 301, 433, 4, 2, 64, DType::bfloat16, {MaskKind::causal, 0.f, AlibiKind::none, 0.f, false}});
}

// Problems cuda_sm90's backward takes (d = dv = 64 / 128): its dQ turns over many key blocks (GQA, a sink, a
// window with sq > sk), varlen per sequence, and its general kernel's (softcap / ALiBi, dropout).
TEST_P(DeterminismTest, BackwardBatchedWindowD128) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {false, 2, 900, 640, 4, 2, 128, DType::bfloat16, {MaskKind::local, 0.f, AlibiKind::none, 0.f, true}});
}

TEST_P(DeterminismTest, BackwardVarlenD64Long) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(backend, {true, 3, 1500, 2300, 2, 1, 64, DType::float16, {MaskKind::none}});
}

TEST_P(DeterminismTest, BackwardSoftcapAlibiD128) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {false, 2, 700, 900, 4, 2, 128, DType::bfloat16, {MaskKind::causal, 30.f, AlibiKind::per_head}});
}

TEST_P(DeterminismTest, BackwardDropoutD64) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {true, 3, 500, 700, 4, 2, 64, DType::float16, {MaskKind::causal, 0.f, AlibiKind::none, 0.17f}});
}

// d = 256: cuda_sm90's dQ pass writes dQ once per query block (no accumulator), so its default kernels serve
// deterministic mode too: varlen GQA with a sink and a window, then softcap / ALiBi under a causal mask.
TEST_P(DeterminismTest, BackwardVarlenD256) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {true, 3, 400, 530, 4, 2, 256, DType::bfloat16, {MaskKind::local, 0.f, AlibiKind::none, 0.f, true}});
}

// d = 192 (the same kernels, the columns split by chunks of unequal counts): causal varlen with seqused.
TEST_P(DeterminismTest, BackwardVarlenD192) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(backend, {true, 3, 530, 400, 4, 1, 192, DType::float16, {MaskKind::causal}});
}

TEST_P(DeterminismTest, BackwardSoftcapAlibiD256) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_backward_deterministic(
      backend,
      {false, 2, 300, 450, 2, 1, 256, DType::float16, {MaskKind::causal, 30.f, AlibiKind::per_head}});
}

// One forward call on fresh device bindings: its status and its outputs (out, lse) fetched.
struct ForwardRun {
  Status status;
  std::vector<HostTensor> outputs;
};

// `a` (its inputs bound on `device`) with out, lse and the options bound too, run on `backend`.
template <class Args>
ForwardRun run_forward_once(Backend backend, Args a, DeviceBinding& device, HostTensor& out, HostTensor& lse,
                            const OptionTensors& opts) {
  a.out = device.view(out);
  a.lse = device.view(lse);
  a.options = opts.bind(device);
  const Status status = run_on(backend, a);
  return ForwardRun{status, status.ok() ? std::vector<HostTensor>{device.fetch(out), device.fetch(lse)}
                                        : std::vector<HostTensor>{}};
}

// kForwardRuns calls of `run`, each one's out and LSE bitwise the first's (`tag` names the variant in the
// messages). A CUDA backend that reports the problem unsupported skips the test (the caller returns when
// IsSkipped()).
template <class Run>
void expect_forward_repeatable(Backend backend, Run run, const std::string& tag) {
  std::vector<HostTensor> first;
  for (int repeat = 0; repeat < kForwardRuns; ++repeat) {
    ForwardRun result = run();
    if (result.status.code() == ErrorCode::unsupported && is_cuda(backend)) {
      GTEST_SKIP() << result.status.message();
    }
    ASSERT_TRUE(result.status.ok()) << result.status.message();
    if (repeat == 0) {
      first = std::move(result.outputs);
      continue;
    }
    const std::string at = " (" + tag + "run " + std::to_string(repeat) + ")";
    ASSERT_TRUE(expect_identical("out" + at, first[0], result.outputs[0]));
    ASSERT_TRUE(expect_identical("lse" + at, first[1], result.outputs[1]));
  }
}

TEST_P(DeterminismTest, ForwardAndSplitKvRepeat) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  const std::int64_t b = 2, sq = 3, s_cache = 1000, h = 8, hk = 2, d = 128;
  HostTensor q(DType::bfloat16, {b, sq, h, d}), k(DType::bfloat16, {b, s_cache, hk, d}),
      v(DType::bfloat16, {b, s_cache, hk, d});
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  HostTensor seqlens(DType::int32, {b});
  seqlens.set_int({0}, 1000);
  seqlens.set_int({1}, 517);
  const OptionTensors opts =
      draw_options({MaskKind::causal, 0.f, AlibiKind::none, 0.f, true}, rng, b, h, d, s_cache);
  for (int splits : {0, 1, 7}) {
    auto run = [&] {
      HostTensor out(DType::bfloat16, {b, sq, h, d}), lse(DType::float32, {b, h, sq});
      DeviceBinding device(backend);
      KVCacheForwardArgs a;
      a.q = device.view(q);
      a.k_cache = device.view(k);
      a.v_cache = device.view(v);
      a.cache_seqlens = device.view(seqlens);
      a.num_splits = splits;
      return run_forward_once(backend, a, device, out, lse, opts);
    };
    expect_forward_repeatable(backend, run, "num_splits " + std::to_string(splits) + ", ");
    if (HasFatalFailure() || IsSkipped()) return;
  }
}

// cuda_sm90's split tail (split_tail.h): the pieces of a unit are combined by whichever finishes last, in a
// fixed order, so the result must not depend on which one that was. 100 units on 66 clusters, a tail of 34
// (from 4096 keys; forward_test.cpp ForwardTailTest checks the values). CUDA backends only: a host backend's
// schedule has no such freedom, and this shape would cost minutes there.
TEST_P(DeterminismTest, ForwardManyUnitsRepeat) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  if (!is_cuda(backend)) GTEST_SKIP() << "a CUDA schedule's shape (cuda_sm90's split tail)";
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  const std::int64_t b = 2, sq = 512, sk = 4096, h = 25, d = 128;
  HostTensor q(DType::bfloat16, {b, sq, h, d}), k(DType::bfloat16, {b, sk, h, d}),
      v(DType::bfloat16, {b, sk, h, d});
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  const OptionTensors opts =
      draw_options({MaskKind::none, 0.f, AlibiKind::none, 0.f, true}, rng, b, h, d, sk);
  auto run = [&] {
    HostTensor out(DType::bfloat16, {b, sq, h, d}), lse(DType::float32, {b, h, sq});
    DeviceBinding device(backend);
    ForwardArgs a;
    a.q = device.view(q);
    a.k = device.view(k);
    a.v = device.view(v);
    return run_forward_once(backend, a, device, out, lse, opts);
  };
  expect_forward_repeatable(backend, run, "");
}

// Sequence 0 of `t` (dimension 0 the batch) as a batch of one, its values exactly.
HostTensor first_sequence(const HostTensor& t) {
  std::vector<std::int64_t> shape = t.shape();
  shape[0] = 1;
  HostTensor one(t.dtype(), shape);
  one.for_each_index([&](const std::int64_t* index) { one.set(index, t.get(index)); });
  return one;
}

// num_splits = 1: a sequence's result does not depend on how many sequences run beside it (batch-invariant
// decoding), bitwise: no key split, whose count the batch decides (cuda_sm90's decode kernels and cpu_tiled
// split few tiles' keys, cuda_sm90's split tail splits a batch's last tiles). Sequence 0 alone and in a
// batch: a GQA decode step (8 sequences), and on CUDA backends a prefill shape with a tail (4 sequences; the
// split tail's shape of ForwardManyUnitsRepeat). The library's default (num_splits 0) may split the two
// differently.
TEST_P(DeterminismTest, ForwardBatchInvariantWithoutSplits) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  struct Shape {
    std::int64_t b, sq, sk, h, hk;
  };
  std::vector<Shape> shapes = {{8, 1, 2048, 32, 8}};
  if (is_cuda(backend)) shapes.push_back({4, 512, 4096, 25, 25});
  constexpr std::int64_t d = 128;
  for (const Shape& s : shapes) {
    HostTensor q(DType::bfloat16, {s.b, s.sq, s.h, d}), k(DType::bfloat16, {s.b, s.sk, s.hk, d}),
        v(DType::bfloat16, {s.b, s.sk, s.hk, d});
    q.fill_normal(rng);
    k.fill_normal(rng);
    v.fill_normal(rng);
    const OptionTensors opts = draw_options({MaskKind::none}, rng, s.b, s.h, d, s.sk);
    auto run = [&](const HostTensor& qq, const HostTensor& kk, const HostTensor& vv) {
      const std::int64_t b = qq.size(0);
      HostTensor out(DType::bfloat16, {b, s.sq, s.h, d}), lse(DType::float32, {b, s.h, s.sq});
      DeviceBinding device(backend);
      ForwardArgs a;
      a.q = device.view(qq);
      a.k = device.view(kk);
      a.v = device.view(vv);
      a.num_splits = 1;
      return run_forward_once(backend, a, device, out, lse, opts);
    };
    const ForwardRun batch = run(q, k, v);
    if (batch.status.code() == ErrorCode::unsupported && is_cuda(backend))
      GTEST_SKIP() << batch.status.message();
    ASSERT_TRUE(batch.status.ok()) << batch.status.message();
    const ForwardRun alone = run(first_sequence(q), first_sequence(k), first_sequence(v));
    ASSERT_TRUE(alone.status.ok()) << alone.status.message();
    const std::string at = " (sequence 0 of " + std::to_string(s.b) + ", " + std::to_string(s.sk) + " keys)";
    ASSERT_TRUE(expect_identical("out" + at, alone.outputs[0], first_sequence(batch.outputs[0])));
    ASSERT_TRUE(expect_identical("lse" + at, alone.outputs[1], first_sequence(batch.outputs[1])));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DeterminismTest, ::testing::ValuesIn(backends_under_test()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(backend_name(info.param));
                         });

}  // namespace
}  // namespace flashattn::test
