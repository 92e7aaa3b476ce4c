// cuda_sm90's per-consumer key ranges (src/cuda/sm90/consumer.h kConsumerKeyRange): each of a tile's
// consumer warpgroups (two at d256; four in the masked d64 kernel for 512 <= sq < 16384) visits only the
// key blocks its own 64 query rows see, and for the tile's other blocks only releases their K / V stages
// and takes an empty issue turn. The grid suites draw their windows at
// random; these cases fix them where the skip happens at each end of a tile's range:
//  - causal with 80-key (masked d256 > 1024 keys) and 64-key blocks (masked d256 <= 1024 keys): the first
//    consumer skips the top block(s);
//  - a left window narrower than a tile: the second consumer's rows start later, so it skips the bottom
//    block(s) (a right window too: both ends at once);
//  - sq != sk both ways (bottom-right alignment; sq > sk: whole consumers whose rows see no key, which keep
//    the tile's range), packed GQA (consumer rows = packed rows >> log2 group), sink and ALiBi.
// Against the float64 reference with the suites' tolerance rule.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

namespace flashattn::test {
namespace {

struct RangeCase {
  std::int64_t b, sq, sk, h, hk, d;
  DType dtype;
  bool causal;
  std::int64_t left, right;  // window, -1 = unbounded
  bool sink = false;
  bool alibi = false;

  std::string name() const {
    return std::to_string(sq) + "x" + std::to_string(sk) + "_b" + std::to_string(b) + "_" +
           heads_label(h, hk) + "_d" + std::to_string(d) + "_" + dtype_label(dtype) +
           (causal ? "_causal" : "") + "_w" + (left < 0 ? std::string("inf") : std::to_string(left)) + "_" +
           (right < 0 ? std::string("inf") : std::to_string(right)) + (sink ? "_sink" : "") +
           (alibi ? "_alibi" : "");
  }
};

std::vector<RangeCase> range_cases() {
  const DType f16 = DType::float16, bf16 = DType::bfloat16;
  return {
      // d256, 64-key blocks (masked, <= 1024 keys): the first consumer skips one block in every tile.
      {2, 512, 512, 2, 2, 256, bf16, true, -1, -1},
      {2, 300, 512, 2, 1, 256, f16, true, -1, -1, true},
      {2, 500, 400, 2, 2, 256, bf16, true, -1, -1},  // sq > sk: the first 100 rows see nothing
      {1, 480, 510, 2, 2, 256, f16, false, 40, 0},   // sliding window: skips at both ends
      {2, 40, 300, 8, 2, 256, bf16, true, -1, -1},   // packed GQA (4 heads per kv head)
      // The same up to 1024 keys with a ragged last block.
      {1, 1000, 1000, 2, 1, 256, bf16, true, -1, -1, true},
      {1, 1100, 700, 2, 2, 256, bf16, true, -1, -1},
      {1, 900, 900, 2, 2, 256, bf16, false, 37, 0},
      {1, 700, 750, 2, 2, 256, f16, false, 100, 20},
      {1, 800, 800, 2, 2, 256, bf16, false, 50, -1},  // left window only
      {2, 33, 600, 16, 2, 256, f16, false, 30, 5},    // packed GQA (8 per kv head), window
      // d256, 80-key blocks (masked, > 1024 keys).
      {1, 1100, 1100, 2, 1, 256, bf16, true, -1, -1, true},
      {1, 900, 1100, 2, 2, 256, f16, true, -1, -1, false, true},
      {1, 1400, 1100, 2, 2, 256, bf16, true, -1, -1},  // sq > sk
      {1, 1050, 1050, 2, 2, 256, bf16, false, 37, 0},
      {1, 1000, 1150, 2, 2, 256, f16, false, 100, 20},
      {1, 1100, 1100, 2, 2, 256, bf16, false, 50, -1},  // left window only
      {2, 33, 1100, 16, 2, 256, f16, false, 30, 5},     // packed GQA (8 per kv head), window
      // d64 from 512 queries and keys: the four-consumer kernel (256-row tiles, 64-key blocks) with key
      // ranges: consumer c skips 3 - c diagonal blocks. Below that d64, and d128: 128-key blocks, key ranges
      // only with FLASHATTN_SM90_CONSUMER_KEY_RANGE=2 (a consumer then skips a block at windows and
      // sq != sk); the four d128 cases below ran a 64-key kernel with key ranges in session 19 (measured and
      // removed: forward_config.h).
      {2, 512, 512, 2, 2, 64, f16, true, -1, -1},
      {1, 1000, 1100, 2, 1, 64, bf16, false, 45, 0, true},
      {2, 700, 600, 2, 2, 64, bf16, true, -1, -1},
      {2, 512, 512, 2, 2, 128, bf16, true, -1, -1},
      {1, 777, 777, 2, 1, 128, f16, true, -1, -1, true},
      {1, 900, 1000, 2, 2, 128, bf16, false, 70, 10, false, true},
      {2, 33, 200, 16, 1, 128, bf16, false, 20, 0},  // packed GQA (16 per kv head), window
      {1, 1000, 700, 2, 2, 128, f16, true, -1, -1},  // sq > sk: the first 300 rows see nothing
      {2, 300, 1000, 2, 1, 128, bf16, true, -1, -1, true},
      {1, 800, 800, 2, 1, 128, bf16, false, 50, -1},  // left window only: skips at the bottom
      {1, 700, 750, 2, 2, 128, f16, false, 100, 20},  // both ends
  };
}

class ConsumerKeyRangeTest : public ::testing::TestWithParam<RangeCase> {};

TEST_P(ConsumerKeyRangeTest, MatchesReference) {
  const RangeCase& c = GetParam();
  const Backend backend = Backend::cuda_sm90;
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();

  HostTensor q(c.dtype, {c.b, c.sq, c.h, c.d});
  HostTensor k(c.dtype, {c.b, c.sk, c.hk, c.d});
  HostTensor v(c.dtype, {c.b, c.sk, c.hk, c.d});
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.d});  // poisoned
  HostTensor lse(DType::float32, {c.b, c.h, c.sq});
  HostTensor slopes, sink;
  if (c.alibi) {
    slopes = HostTensor(DType::float32, {c.h});
    slopes.fill_uniform(rng, 0.f, 0.3f);
  }
  if (c.sink) {
    sink = HostTensor(DType::float32, {c.h});
    sink.fill_uniform(rng, -1.f, 2.f);
  }

  auto build = [&](Binding& bind) {
    ForwardArgs a;
    a.q = bind.view(q);
    a.k = bind.view(k);
    a.v = bind.view(v);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.options.causal = c.causal;
    a.options.window.left = c.left;
    a.options.window.right = c.right;
    a.options.alibi_slopes = bind.view(slopes);
    a.options.sink = bind.view(sink);
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

INSTANTIATE_TEST_SUITE_P(Sm90, ConsumerKeyRangeTest, ::testing::ValuesIn(range_cases()),
                         [](const ::testing::TestParamInfo<RangeCase>& info) {
                           return sanitize_name("cuda_sm90_" + std::to_string(info.index) + "_" +
                                                info.param.name());
                         });

}  // namespace
}  // namespace flashattn::test
