// options.bias: additive score biases (fp32 or the inputs' dtype) and bool masks, forward and backward, on
// every backend that takes them, against the float64 reference with the FlashAttention rule. The bias
// tensors are drawn afresh each run: normal values with -inf holes, masks with a random share hidden, a
// key-padding mask, and rows whose every key is hidden (output 0, LSE -inf, no gradient). Broadcast shapes
// (leading dims left out, dims of size 1) and a padded row stride reach each backend's indexing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "flashattn/flashattn.h"
#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

namespace flashattn::test {
namespace {

constexpr double kGradientAtol = 1e-4;

// Which dims of (B, H, SQ, sk) the bias has: full (b, h, sq, sk); per head (h, sq, sk), shared by the batch;
// one matrix (sq, sk); a key-padding mask (b, 1, 1, sk); per head and key (1, h, 1, sk).
enum class BiasShape { full, heads, matrix, key_padding, head_keys };
enum class BiasValues { additive_fp32, additive_input_dtype, mask };

struct BiasCase {
  std::int64_t b, sq, sk, h, hk, d;
  DType dtype;
  BiasShape shape;
  BiasValues values;
  Features features;
  Layout layout = Layout::contiguous;  // of the bias too: padded strides every dim but the last
  bool deterministic = false;          // the backward's deterministic mode

  std::string name() const {
    static const char* shapes[] = {"full", "heads", "matrix", "keypad", "headkeys"};
    static const char* kinds[] = {"fp32", "dtype", "mask"};
    return std::to_string(sq) + "x" + std::to_string(sk) + "_b" + std::to_string(b) + "_" +
           heads_label(h, hk) + "_d" + std::to_string(d) + "_" + dtype_label(dtype) + "_" +
           shapes[static_cast<int>(shape)] + "_" + kinds[static_cast<int>(values)] + "_" +
           features_label(features) + "_" + layout_name(layout) + (deterministic ? "_det" : "");
  }

  std::vector<std::int64_t> bias_shape() const {
    switch (shape) {
      case BiasShape::full:
        return {b, h, sq, sk};
      case BiasShape::heads:
        return {h, sq, sk};
      case BiasShape::matrix:
        return {sq, sk};
      case BiasShape::key_padding:
        return {b, 1, 1, sk};
      case BiasShape::head_keys:
        return {1, h, 1, sk};
    }
    return {};
  }
};

// The bias's values: additive ones normal (stddev 2, so that they move the softmax) with 10% -inf; masks
// 75% true. Then hidden rows where the shape has query rows: the middle query row of every bias row block
// hides all of its keys (none when there is one query row). A key-padding mask hides each sequence's keys
// past a drawn length (at least one kept), and its last sequence's every key when there are two or more.
HostTensor draw_bias(const BiasCase& c, Rng& rng) {
  const DType dtype = c.values == BiasValues::mask            ? DType::boolean
                      : c.values == BiasValues::additive_fp32 ? DType::float32
                                                              : c.dtype;
  HostTensor bias(dtype, c.bias_shape(),
                  c.layout == Layout::contiguous ? Layout::contiguous : Layout::padded);
  const float hidden = c.values == BiasValues::mask ? 0.f : -std::numeric_limits<float>::infinity();
  const bool per_row =
      c.shape == BiasShape::full || c.shape == BiasShape::heads || c.shape == BiasShape::matrix;
  const int rank = bias.rank();
  std::vector<std::int64_t> kept_keys(static_cast<std::size_t>(c.b), c.sk);
  if (c.shape == BiasShape::key_padding) {
    for (std::int64_t s = 0; s < c.b; ++s) kept_keys[s] = rng.integer(1, c.sk);
    if (c.b >= 2) kept_keys[c.b - 1] = 0;
  }
  bias.for_each_index([&](const std::int64_t* index) {
    const std::int64_t key = index[rank - 1];
    float value;
    if (c.shape == BiasShape::key_padding) {
      value = key < kept_keys[index[0]] ? (c.values == BiasValues::mask ? 1.f : rng.normal() * 2.f) : hidden;
    } else if (per_row && c.sq > 1 && index[rank - 2] == c.sq / 2) {
      value = hidden;
    } else if (c.values == BiasValues::mask) {
      value = rng.coin(0.75) ? 1.f : 0.f;
    } else {
      value = rng.coin(0.1) ? hidden : rng.normal() * 2.f;
    }
    bias.set(index, value);
  });
  return bias;
}

using BiasParam = std::tuple<Backend, BiasCase>;

std::string bias_param_name(const ::testing::TestParamInfo<BiasParam>& info) {
  return sanitize_name(std::string(backend_name(std::get<0>(info.param))) + "_" + std::to_string(info.index) +
                       "_" + std::get<1>(info.param).name());
}

// Backends that take a bias: the CPU tiled one and cuda_sm80 (cuda_sm90 refuses it: BiasRouting below).
std::vector<Backend> bias_backends() { return {Backend::cpu_tiled, Backend::cuda_sm80}; }

std::vector<BiasCase> bias_cases() {
  using F = Features;
  const DType bf16 = DType::bfloat16, fp16 = DType::float16;
  return {
      // Every shape and value kind, with and without a mask, GQA, partial key and query tiles.
      {2, 113, 203, 4, 2, 64, bf16, BiasShape::full, BiasValues::additive_fp32, F{MaskKind::none}},
      {2, 128, 217, 4, 4, 128, fp16, BiasShape::full, BiasValues::mask, F{MaskKind::causal}},
      {2, 217, 128, 6, 2, 64, fp16, BiasShape::heads, BiasValues::additive_input_dtype, F{MaskKind::local}},
      {1, 239, 300, 2, 1, 96, bf16, BiasShape::matrix, BiasValues::mask, F{MaskKind::none}},
      {3, 64, 333, 4, 2, 128, bf16, BiasShape::key_padding, BiasValues::mask, F{MaskKind::none}},
      {3, 100, 177, 2, 2, 64, fp16, BiasShape::key_padding, BiasValues::additive_fp32, F{MaskKind::causal}},
      {2, 77, 190, 4, 1, 256, bf16, BiasShape::head_keys, BiasValues::additive_input_dtype,
       F{MaskKind::none}},
      // Beside the other score modifiers: softcap, ALiBi, a sink, a custom scale.
      {2, 150, 150, 4, 2, 64, bf16, BiasShape::full, BiasValues::additive_fp32,
       F{MaskKind::causal, 1.5f, AlibiKind::per_head, 0.f, true}},
      {1, 200, 260, 2, 2, 128, fp16, BiasShape::matrix, BiasValues::mask,
       F{MaskKind::right_only, 0.f, AlibiKind::per_batch_head, 0.f, false, true}},
      {2, 96, 96, 2, 1, 192, bf16, BiasShape::heads, BiasValues::additive_fp32, F{MaskKind::causal, 30.f}},
      // Padded strides (the bias's too), one query row, more queries than keys.
      {2, 130, 140, 4, 2, 64, bf16, BiasShape::full, BiasValues::additive_input_dtype, F{MaskKind::none},
       Layout::padded},
      {2, 1, 500, 8, 2, 128, bf16, BiasShape::full, BiasValues::mask, F{MaskKind::none}, Layout::padded},
      {1, 300, 40, 2, 2, 64, fp16, BiasShape::heads, BiasValues::mask, F{MaskKind::causal}, Layout::padded},
      // The backward's deterministic mode (ordered dQ reductions) with a bias.
      {2, 200, 333, 4, 2, 128, fp16, BiasShape::full, BiasValues::mask, F{MaskKind::causal},
       Layout::contiguous, true},
      {3, 150, 170, 2, 1, 64, bf16, BiasShape::key_padding, BiasValues::additive_fp32, F{MaskKind::none},
       Layout::padded, true},
  };
}

std::vector<BiasParam> bias_params() {
  std::vector<BiasParam> params;
  for (Backend backend : bias_backends())
    for (const BiasCase& c : bias_cases()) params.emplace_back(backend, c);
  return params;
}

struct BiasProblem {
  HostTensor q, k, v, bias;
  OptionTensors opts;

  BiasProblem(const BiasCase& c, Rng& rng)
      : q(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout),
        k(c.dtype, {c.b, c.sk, c.hk, c.d}, c.layout),
        v(c.dtype, {c.b, c.sk, c.hk, c.d}, c.layout) {
    q.fill_normal(rng);
    k.fill_normal(rng);
    v.fill_normal(rng);
    bias = draw_bias(c, rng);
    opts = draw_options(c.features, rng, c.b, c.h, c.d, c.sk);
  }

  AttentionOptions options(Binding& bind) const {
    AttentionOptions o = opts.bind(bind);
    o.bias = bind.view(bias);
    return o;
  }
  void expect_unchanged(const DeviceBinding& device) const {
    expect_inputs_unchanged(device, {{"q", &q},
                                     {"k", &k},
                                     {"v", &v},
                                     {"bias", &bias},
                                     {"alibi_slopes", &opts.alibi},
                                     {"sink", &opts.sink}});
  }
};

// The call `build` binds, on `backend` (a CUDA backend that reports it unsupported, a head dim or dtype this
// build did not compile, skips the test), then the problem's inputs as they were. The caller returns when the
// test was skipped or failed here.
template <class Build>
void run_checked(Backend backend, DeviceBinding& device, Build&& build, const BiasProblem& problem) {
  const Status status = run_on(backend, build(device));
  if (status.code() == ErrorCode::unsupported && is_cuda(backend)) GTEST_SKIP() << status.message();
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
  problem.expect_unchanged(device);
}

class BiasForwardTest : public ::testing::TestWithParam<BiasParam> {};

TEST_P(BiasForwardTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  const BiasProblem problem(c, rng);
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout);  // poisoned
  HostTensor lse(DType::float32, {c.b, c.h, c.sq});
  auto build = [&](Binding& bind) {
    ForwardArgs a;
    a.q = bind.view(problem.q);
    a.k = bind.view(problem.k);
    a.v = bind.view(problem.v);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.options = problem.options(bind);
    return a;
  };
  DeviceBinding device(backend);
  run_checked(backend, device, build, problem);
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  const ReferenceBinding ref = reference(build);
  const ReferenceBinding lowp = reference_lowp(build, c.dtype);
  EXPECT_TRUE(expect_close("out", device.fetch(out), out, ref.result(out), lowp.result(out),
                           {2.0, output_atol(c.dtype)}));
  EXPECT_TRUE(
      expect_close("lse", device.fetch(lse), lse, ref.result(lse), lowp.result(lse), {2.0, kLseAtol}));
  // The drawn bias hides every key of some rows (hidden rows, an empty key-padding sequence): the rule's
  // edge case must hold there, not only within the tolerance.
  const HostTensor got_lse = device.fetch(lse), ref_lse = ref.result(lse);
  std::int64_t empty_rows = 0;
  got_lse.for_each_index([&](const std::int64_t* index) {
    if (std::isinf(ref_lse.get(index)) && ref_lse.get(index) < 0) {
      ++empty_rows;
      EXPECT_EQ(got_lse.get(index), ref_lse.get(index)) << "a row whose every key is hidden";
    }
  });
  if (!c.features.sink && c.shape != BiasShape::head_keys &&
      (c.sq > 1 || c.shape == BiasShape::key_padding)) {
    EXPECT_GT(empty_rows, 0) << "the case draws rows whose every key is hidden";
  }
}

INSTANTIATE_TEST_SUITE_P(Bias, BiasForwardTest, ::testing::ValuesIn(bias_params()), bias_param_name);

class BiasBackwardTest : public ::testing::TestWithParam<BiasParam> {};

TEST_P(BiasBackwardTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  const BiasProblem problem(c, rng);
  HostTensor dout(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout);
  dout.fill_normal(rng);

  // The forward's outputs by the reference, rounded as a low-precision forward hands them over.
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout);
  HostTensor lse(DType::float32, {c.b, c.h, c.sq});
  {
    HostTensor fwd_out(c.dtype, {c.b, c.sq, c.h, c.d}), fwd_lse(DType::float32, {c.b, c.h, c.sq});
    const ReferenceBinding fwd = reference([&](Binding& bind) {
      ForwardArgs a;
      a.q = bind.view(problem.q);
      a.k = bind.view(problem.k);
      a.v = bind.view(problem.v);
      a.out = bind.view(fwd_out);
      a.lse = bind.view(fwd_lse);
      a.options = problem.options(bind);
      return a;
    });
    fwd.result(fwd_out).for_each_index(
        [&](const std::int64_t* i) { out.set(i, fwd.result(fwd_out).get(i)); });
    fwd.result(fwd_lse).for_each_index(
        [&](const std::int64_t* i) { lse.set(i, fwd.result(fwd_lse).get(i)); });
  }

  HostTensor dq(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout);
  HostTensor dk(c.dtype, {c.b, c.sk, c.hk, c.d}, c.layout);
  HostTensor dv(c.dtype, {c.b, c.sk, c.hk, c.d}, c.layout);
  HostTensor dsink = c.features.sink ? HostTensor(DType::float32, {c.h}) : HostTensor();
  auto build = [&](Binding& bind) {
    BackwardArgs a;
    a.dout = bind.view(dout);
    a.q = bind.view(problem.q);
    a.k = bind.view(problem.k);
    a.v = bind.view(problem.v);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.dq = bind.view(dq);
    a.dk = bind.view(dk);
    a.dv = bind.view(dv);
    a.dsink = bind.view(dsink);
    a.options = problem.options(bind);
    a.deterministic = c.deterministic;
    return a;
  };
  DeviceBinding device(backend);
  run_checked(backend, device, build, problem);
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  expect_inputs_unchanged(device, {{"dout", &dout}, {"out", &out}, {"lse", &lse}});
  const ReferenceBinding ref = reference(build);
  const ReferenceBinding lowp = reference_lowp(build, c.dtype);
  // The backward suite's rule (backward_test.cpp): 2x, 3x for d >= 192 or softcap, half an output ulp.
  const Tolerance tol{(c.d >= 192 || c.features.softcap > 0.f) ? 3.0 : 2.0, kGradientAtol, 0.5};
  EXPECT_TRUE(expect_close("dq", device.fetch(dq), dq, ref.result(dq), lowp.result(dq), tol));
  EXPECT_TRUE(expect_close("dk", device.fetch(dk), dk, ref.result(dk), lowp.result(dk), tol));
  EXPECT_TRUE(expect_close("dv", device.fetch(dv), dv, ref.result(dv), lowp.result(dv), tol));
  if (dsink.defined()) {
    EXPECT_TRUE(
        expect_close("dsink", device.fetch(dsink), dsink, ref.result(dsink), lowp.result(dsink), tol));
  }
}

INSTANTIATE_TEST_SUITE_P(Bias, BiasBackwardTest, ::testing::ValuesIn(bias_params()), bias_param_name);

// cuda_sm90 has no bias in its kernels: asked by name it refuses with a reason that names the bias and the
// backend that runs it, and the automatic choice on the same GPU runs the call (on cuda_sm80).
TEST(BiasRouting, Sm90RefusesAndAutomaticRuns) {
  FLASHATTN_SKIP_IF_UNAVAILABLE(Backend::cuda_sm90);
  const BiasCase c{1, 64, 96, 2, 2, 64, DType::bfloat16, BiasShape::matrix, BiasValues::mask, Features{}};
  Rng rng = Rng::for_current_test();
  const BiasProblem problem(c, rng);
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.d});
  auto build = [&](Binding& bind) {
    ForwardArgs a;
    a.q = bind.view(problem.q);
    a.k = bind.view(problem.k);
    a.v = bind.view(problem.v);
    a.out = bind.view(out);
    a.options = problem.options(bind);
    return a;
  };
  DeviceBinding device(Backend::cuda_sm90);
  const Status refused = run_on(Backend::cuda_sm90, build(device));
  EXPECT_EQ(refused.code(), ErrorCode::unsupported);
  EXPECT_NE(std::string(refused.message()).find("options.bias"), std::string::npos) << refused.message();
  EXPECT_NE(std::string(refused.message()).find("cuda_sm80"), std::string::npos) << refused.message();

  // Backend::automatic on the same tensors: the capability query names cuda_sm80 and why cuda_sm90 was passed
  // over, and the call runs (run_on's workspace and stream follow the backend named, so they are made here).
  ExecutionContext ctx;
  ctx.backend = Backend::automatic;
  Stream stream(Backend::cuda_sm80);
  ctx.stream = stream.get();
  const ForwardArgs args = build(device);
  KernelChoice choice;
  ASSERT_TRUE(select_kernel(args, ctx, &choice).ok()) << choice.reason;
  EXPECT_EQ(choice.backend, Backend::cuda_sm80) << choice.reason;
  EXPECT_NE(std::string(choice.reason).find("options.bias"), std::string::npos) << choice.reason;
  std::size_t bytes = 0;
  ASSERT_TRUE(workspace_size(args, ctx, &bytes).ok());
  DeviceMemory workspace;
  if (bytes > 0) {
    workspace = DeviceMemory(Backend::cuda_sm80, bytes);
    ctx.workspace = workspace.data();
    ctx.workspace_bytes = bytes;
  }
  const Status ran = forward(args, ctx);
  stream.synchronize();
  ASSERT_TRUE(ran.ok()) << ran.message();
  const ReferenceBinding ref = reference(build);
  const ReferenceBinding lowp = reference_lowp(build, c.dtype);
  EXPECT_TRUE(expect_close("out", device.fetch(out), out, ref.result(out), lowp.result(out),
                           {2.0, output_atol(c.dtype)}));
}

}  // namespace
}  // namespace flashattn::test
