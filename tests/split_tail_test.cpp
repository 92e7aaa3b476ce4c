// cuda_sm90's split tail (src/cuda/sm90/kernel_params.h SplitTail): under the static schedule (no mask, one
// length, dense K/V, no sink) the last units of work that would not fill a round of CTAs are cut along their
// key blocks and shared out; a unit two or three CTAs share is merged by the warp whose part arrives last,
// which then writes O and the LSE with direct stores. The cases are shaped for a 132-SM GPU (H100 / H200): at
// least two rounds of units and a last round that is not full, at least 16 key blocks per tile, so every
// kernel family that takes the split tail takes it here:
//  - d128 on K/V-multicast clusters (units are pairs of query blocks: an even number of 128-row blocks, >=
//  2048
//    keys) and without (an odd number of query blocks), with a ragged last key block and softcap;
//  - d96 (the d128 kernel with 96 of its 128 columns stored), d256 (80-key blocks, partial query block,
//  ALiBi),
//    d64 below 512 queries (the two-consumer kernel), (192, 128);
//  - contiguous and heads-major outputs (the merge's direct stores follow the caller's strides), fp16 and
//  bf16.
// On other GPUs they still run (and must pass) with whatever split the SM count gives. Against the float64
// reference with the suites' tolerance rule; the shapes are kept to ~35k query rows (the reference is CPU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

namespace flashattn::test {
namespace {

struct SplitCase {
  std::int64_t b, sq, sk, h, hk, d, dv;
  DType dtype;
  Layout layout = Layout::contiguous;
  float softcap = 0.f;
  bool alibi = false;

  std::string name() const {
    return std::to_string(sq) + "x" + std::to_string(sk) + "_b" + std::to_string(b) + "_" +
           heads_label(h, hk) + "_d" + std::to_string(d) + (dv != d ? "_dv" + std::to_string(dv) : "") + "_" +
           dtype_label(dtype) + "_" + layout_name(layout) + (softcap > 0.f ? "_softcap" : "") +
           (alibi ? "_alibi" : "");
  }
};

std::vector<SplitCase> split_cases() {
  const DType f16 = DType::float16, bf16 = DType::bfloat16;
  return {
      {1, 256, 2048, 133, 7, 128, 128, bf16},                            // 133 cluster units on 66 clusters
      {1, 384, 2100, 89, 89, 128, 128, f16, Layout::heads_major, 30.f},  // 267 tiles, 17 blocks (ragged)
      {1, 256, 2048, 133, 19, 96, 96, f16},                              // d96: 96 of 128 columns stored
      {1, 100, 1300, 265, 5, 256, 256, bf16, Layout::contiguous, 0.f, true},  // 265 tiles, rows past sq
      {1, 300, 2048, 90, 1, 64, 64, f16, Layout::heads_major},                // two-consumer d64, 270 tiles
      {1, 128, 1600, 265, 53, 192, 128, bf16},                                // (192, 128), 96-key blocks
  };
}

class SplitTailTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(SplitTailTest, MatchesReference) {
  const SplitCase& c = GetParam();
  const Backend backend = Backend::cuda_sm90;
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();

  HostTensor q(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout);
  HostTensor k(c.dtype, {c.b, c.sk, c.hk, c.d});
  HostTensor v(c.dtype, {c.b, c.sk, c.hk, c.dv});
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.dv}, c.layout);  // poisoned
  HostTensor lse(DType::float32, {c.b, c.h, c.sq});
  HostTensor slopes;
  if (c.alibi) {
    slopes = HostTensor(DType::float32, {c.h});
    slopes.fill_uniform(rng, 0.f, 0.05f);
  }

  auto build = [&](Binding& bind) {
    ForwardArgs a;
    a.q = bind.view(q);
    a.k = bind.view(k);
    a.v = bind.view(v);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.options.softcap = c.softcap;
    a.options.alibi_slopes = bind.view(slopes);
    return a;
  };

  DeviceBinding device(backend);
  const Status status = run_on(backend, build(device));
  if (status.code() == ErrorCode::unsupported)
    GTEST_SKIP() << status.message();  // dtype / head dim not built
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
  expect_inputs_unchanged(device, {{"q", &q}, {"k", &k}, {"v", &v}});

  const ReferenceBinding ref = reference(build);
  const ReferenceBinding lowp = reference_lowp(build, c.dtype);
  EXPECT_TRUE(expect_close("out", device.fetch(out), out, ref.result(out), lowp.result(out),
                           {2.0, output_atol(c.dtype)}));
  EXPECT_TRUE(
      expect_close("lse", device.fetch(lse), lse, ref.result(lse), lowp.result(lse), {2.0, kLseAtol}));
}

INSTANTIATE_TEST_SUITE_P(Sm90, SplitTailTest, ::testing::ValuesIn(split_cases()),
                         [](const ::testing::TestParamInfo<SplitCase>& info) {
                           return sanitize_name(std::to_string(info.index) + "_" + info.param.name());
                         });

}  // namespace
}  // namespace flashattn::test
