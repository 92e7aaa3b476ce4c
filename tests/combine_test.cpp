// Combine of split-KV partial results, every backend against the float64 reference.
//
// Partial rows are random with a fraction of splits at LSE -inf (a split whose keys
// were all masked) and some rows -inf in every split (output 0, LSE -inf). The
// reference is cpu_reference's combine with an fp32 output; ref_lowp is that result
// rounded to the output dtype (the only rounding a combine makes beyond fp32).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "common/numeric.h"
#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

namespace flashattn::test {
namespace {

struct CombineCase {
  std::int64_t splits, b, sq, h, dv;
  DType dtype;
  Layout layout = Layout::contiguous;
  bool with_lse = true;

  std::string name() const {
    return std::to_string(splits) + "splits_b" + std::to_string(b) + "_s" + std::to_string(sq) + "_h" +
           std::to_string(h) + "_dv" + std::to_string(dv) + "_" + dtype_label(dtype) + "_" +
           layout_name(layout) + (with_lse ? "" : "_nolse");
  }
};

std::vector<CombineCase> combine_cases() {
  AxisCycle<std::int64_t> splits({1, 2, 3, 5, 17, 55, 133}, 81);
  AxisCycle<std::int64_t> seqlens({1, 3, 113, 640}, 82);
  AxisCycle<std::int64_t> dims({8, 40, 64, 72, 96, 128, 192, 256}, 83);
  AxisCycle<DType> dtypes({DType::float32, DType::float16, DType::bfloat16}, 84);
  AxisCycle<Layout> layouts({Layout::contiguous, Layout::padded, Layout::heads_major}, 85);
  AxisCycle<bool> lses({true, true, false}, 86);
  std::vector<CombineCase> cases;
  for (int i = 0; i < 14; ++i) {
    CombineCase c{};
    c.splits = splits.next();
    c.b = 1 + i % 2;
    c.sq = seqlens.next();
    c.h = i % 3 == 0 ? 1 : 3;
    c.dv = dims.next();
    c.dtype = dtypes.next();
    c.layout = layouts.next();
    c.with_lse = lses.next();
    // Keep the biggest products cheap: 133 splits over 640 rows of d256 would be 100 MB.
    if (c.splits * c.sq * c.dv > 4'000'000) c.sq = 113;
    cases.push_back(c);
  }
  return cases;
}

using CombineParam = std::tuple<Backend, CombineCase>;
class CombineTest : public ::testing::TestWithParam<CombineParam> {};

TEST_P(CombineTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();

  // The partial layouts get padding too: only their last dim must be contiguous.
  const Layout partial_layout = c.layout == Layout::contiguous ? Layout::contiguous : Layout::padded;
  HostTensor out_partial(DType::float32, {c.splits, c.b, c.sq, c.h, c.dv}, partial_layout);
  HostTensor lse_partial(DType::float32, {c.splits, c.b, c.sq, c.h}, partial_layout);
  out_partial.fill_normal(rng);
  lse_partial.fill_normal(rng, 3.f);
  // Splits that saw no key: LSE -inf (their out_partial is garbage the combine must ignore).
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (std::int64_t bb = 0; bb < c.b; ++bb) {
    for (std::int64_t i = 0; i < c.sq; ++i) {
      for (std::int64_t hh = 0; hh < c.h; ++hh) {
        const bool whole_row = rng.coin(0.05);
        for (std::int64_t s = 0; s < c.splits; ++s) {
          if (whole_row || rng.coin(0.3)) {
            lse_partial.set({s, bb, i, hh}, kMinusInf);
            for (std::int64_t e = 0; e < c.dv; ++e) out_partial.set({s, bb, i, hh, e}, rng.normal() * 1e3f);
          }
        }
      }
    }
  }
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.dv}, c.layout);
  HostTensor lse = c.with_lse ? HostTensor(DType::float32, {c.b, c.sq, c.h}, partial_layout) : HostTensor();

  auto build = [&](Binding& bind) {
    CombineArgs a;
    a.out_partial = bind.view(out_partial);
    a.lse_partial = bind.view(lse_partial);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    return a;
  };
  DeviceBinding device(backend);
  const Status status = run_on(backend, build(device));
  if (status.code() == ErrorCode::unsupported && is_cuda(backend)) {
    GTEST_SKIP() << status.message();
  }
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
  expect_inputs_unchanged(device, {{"out_partial", &out_partial}, {"lse_partial", &lse_partial}});

  const ReferenceBinding ref = reference(build);
  HostTensor out_lowp = ref.result(out);  // fp32 -> rounded to the output dtype, kept in fp32
  out_lowp.for_each_index(
      [&](const std::int64_t* i) { out_lowp.set(i, detail::round_to(c.dtype, out_lowp.get(i))); });
  EXPECT_TRUE(
      expect_close("out", device.fetch(out), out, ref.result(out), out_lowp, {2.0, output_atol(c.dtype)}));
  if (c.with_lse) {
    EXPECT_TRUE(
        expect_close("lse", device.fetch(lse), lse, ref.result(lse), ref.result(lse), {2.0, kLseAtol}));
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, CombineTest,
                         ::testing::Combine(::testing::ValuesIn(backends_under_test()),
                                            ::testing::ValuesIn(combine_cases())),
                         [](const ::testing::TestParamInfo<CombineParam>& info) {
                           return sanitize_name(std::string(backend_name(std::get<0>(info.param))) + "_" +
                                                std::to_string(info.index) + "_" +
                                                std::get<1>(info.param).name());
                         });

}  // namespace
}  // namespace flashattn::test
