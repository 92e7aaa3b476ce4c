// Variable-length forward (packed sequences), dense and paged, every backend
// against the float64 reference.
//
// Per-sequence lengths are drawn from the run's seed under the case's maxima;
// cases with empty sequences force one sequence without queries and one without
// keys. With seqused_q/k only a prefix of each sequence takes part: the rows
// beyond it are poisoned (NaN) in q/k/v, so reading them shows, and must stay
// untouched in out/lse. Paged cases scatter the keys over a shuffled block table
// with page sizes 1, 3, 16 and 256, unused page rows poisoned; the reference
// always sees the dense packed keys, so paging is checked independently of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

namespace flashattn::test {
namespace {

struct VarlenCase {
  std::int64_t b, max_q, max_k, h, hk, d, dv;
  DType dtype;
  Features features;
  Layout layout = Layout::contiguous;
  std::int64_t page_size = 0;  // 0: dense
  bool seqused = false;
  bool empty_sequences = false;

  std::string name() const {
    return "max" + std::to_string(max_q) + "x" + std::to_string(max_k) + "_b" + std::to_string(b) + "_" +
           heads_label(h, hk) + "_d" + std::to_string(d) + (dv != d ? "_dv" + std::to_string(dv) : "") + "_" +
           dtype_label(dtype) + "_" + features_label(features) + "_" + layout_name(layout) +
           (page_size ? "_page" + std::to_string(page_size) : "") + (seqused ? "_seqused" : "") +
           (empty_sequences ? "_empty" : "");
  }
};

std::vector<VarlenCase> varlen_cases() {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{1, 1},     {1, 239}, {113, 203},
                                                                     {128, 217}, {239, 1}, {799, 3}};
  AxisCycle<std::int64_t> dims({8, 40, 64, 72, 96, 128, 192, 256}, 21);
  AxisCycle<DType> dtypes({DType::float16, DType::bfloat16, DType::float32}, 22);
  AxisCycle<std::pair<std::int64_t, std::int64_t>> heads({{4, 4}, {6, 2}, {3, 1}}, 23);
  AxisCycle<MaskKind> masks({MaskKind::none, MaskKind::causal, MaskKind::local, MaskKind::left_only,
                             MaskKind::right_only, MaskKind::causal_left},
                            24);
  AxisCycle<float> softcaps({0.f, 0.f, 1.5f}, 25);
  AxisCycle<AlibiKind> alibis(
      {AlibiKind::none, AlibiKind::per_head, AlibiKind::none, AlibiKind::per_batch_head}, 26);
  AxisCycle<float> dropouts({0.f, 0.f, 0.17f}, 27);
  AxisCycle<bool> sinks({false, false, true}, 28);
  AxisCycle<Layout> layouts({Layout::contiguous, Layout::padded, Layout::heads_major}, 29);
  AxisCycle<std::int64_t> pages({0, 0, 1, 3, 16, 256}, 30);
  AxisCycle<bool> seqused({false, true}, 31);
  AxisCycle<bool> empties({false, true}, 32);
  AxisCycle<std::int64_t> batches({3, 4, 5}, 33);

  std::vector<VarlenCase> cases;
  for (int round = 0; round < 4; ++round) {
    for (auto [max_q, max_k] : shapes) {
      VarlenCase c{};
      c.b = batches.next();
      c.max_q = max_q;
      c.max_k = max_k;
      std::tie(c.h, c.hk) = heads.next();
      c.d = dims.next();
      c.dv = round == 1 ? (c.d == 64 ? 128 : 64) : c.d;
      c.dtype = dtypes.next();
      c.features = {masks.next(), softcaps.next(), alibis.next(), dropouts.next(), sinks.next(), false};
      c.layout = layouts.next();
      c.page_size = pages.next();
      c.seqused = seqused.next();
      c.empty_sequences = empties.next();
      cases.push_back(c);
    }
  }
  // Long sequences: one dense, one paged.
  cases.push_back(
      {2, 1023, 1024, 2, 1, 128, 128, DType::bfloat16, {MaskKind::causal}, Layout::contiguous, 0, true});
  cases.push_back({2,
                   1023,
                   1024,
                   2,
                   2,
                   64,
                   64,
                   DType::float16,
                   {MaskKind::local, 0.f, AlibiKind::none, 0.f, true},
                   Layout::padded,
                   256,
                   false,
                   true});
  // Packed GQA over variable lengths (cuda_sm90 packs groups of 2..16 heads for short queries):
  // per-sequence 5-D query/output maps, seqused, empty sequences; and the padded d = 96.
  cases.push_back(
      {4, 17, 239, 8, 2, 128, 128, DType::bfloat16, {MaskKind::causal}, Layout::padded, 0, true, true});
  cases.push_back(
      {3, 5, 203, 16, 1, 64, 64, DType::float16, {MaskKind::local}, Layout::heads_major, 0, false, true});
  cases.push_back(
      {3, 113, 217, 4, 2, 96, 96, DType::float16, {MaskKind::causal}, Layout::contiguous, 0, true});
  cases.push_back({3, 300, 700, 4, 4, 80, 72, DType::bfloat16, {MaskKind::none}, Layout::padded, 0, true});
  cases.push_back({3, 1, 239, 8, 4, 64, 512, DType::bfloat16, {MaskKind::none}, Layout::contiguous, 0, true});
  // Paged K/V as cuda_sm90's TMA boxes smaller than a key block (forward_launch.h paged_box_rows):
  // pages of 8 (16 boxes per 128-key block), 48 and 192 at d = 128, 48 at d = 256 (80-key blocks).
  cases.push_back({3, 300, 700, 4, 2, 128, 128, DType::float16, {MaskKind::causal}, Layout::padded, 8, true});
  cases.push_back({3, 257, 640, 8, 2, 128, 128, DType::bfloat16, {MaskKind::none}, Layout::contiguous, 48});
  cases.push_back({4,
                   200,
                   900,
                   4,
                   4,
                   128,
                   128,
                   DType::float16,
                   {MaskKind::local},
                   Layout::heads_major,
                   192,
                   false,
                   true});
  cases.push_back(
      {3, 129, 600, 4, 2, 256, 256, DType::bfloat16, {MaskKind::causal}, Layout::padded, 48, true});
  // d = 256 with 64-key blocks (forward_config.h use_d256_block64): pages of 64 and 256 as 64-row boxes with
  // ragged sequences; variable lengths over dense K/V (the 80-key kernel by default: 777 keys > 512).
  cases.push_back(
      {3, 300, 700, 4, 2, 256, 256, DType::float16, {MaskKind::none}, Layout::contiguous, 64, true});
  cases.push_back({3, 257, 600, 2, 2, 256, 256, DType::bfloat16, {MaskKind::local}, Layout::padded, 256});
  cases.push_back({4,
                   333,
                   777,
                   4,
                   1,
                   256,
                   256,
                   DType::bfloat16,
                   {MaskKind::causal},
                   Layout::heads_major,
                   0,
                   false,
                   true});
  // Unmasked d = 256 (O over V stages, forward_config.h O_OVER_V): a sequence without keys (its tiles store O
  // without a key block) between sequences with, dense (64-key blocks, the next tile's first S before the
  // epilogue) and paged with pages of 64 (the paged kernels store O first).
  cases.push_back(
      {4, 300, 500, 4, 2, 256, 256, DType::bfloat16, {MaskKind::none}, Layout::padded, 0, false, true});
  cases.push_back(
      {4, 300, 500, 4, 1, 256, 256, DType::float16, {MaskKind::none}, Layout::contiguous, 64, true, true});
  // Unmasked d = 256 past 512 keys: the 80-key O-over-V kernel, whose producer splits its key-block loop at
  // the next tile's Q prefetch after the second block (forward_config.h PREFETCH_O_OVER_V). A sequence
  // without keys and random lengths (seqused: often a few blocks or fewer) put the split at or before a
  // range's start.
  cases.push_back(
      {5, 200, 900, 4, 2, 256, 256, DType::bfloat16, {MaskKind::none}, Layout::contiguous, 0, true, true});
  cases.push_back(
      {4, 150, 700, 4, 4, 256, 256, DType::float16, {MaskKind::none}, Layout::padded, 0, false, true});
  return cases;
}

// The check of both suites below: case `c` on `backend` (an unsupported CUDA case skips), the rows its
// sequences write against the float64 reference, every input unchanged.
void check_varlen_case(Backend backend, const VarlenCase& c, Rng& rng) {
  const PackedSequences seq = draw_sequences(rng, c.b, c.max_q, c.max_k, c.seqused, c.empty_sequences);
  const std::vector<std::int64_t>& len_k = seq.len_k;
  HostTensor q(c.dtype, {seq.total_q, c.h, c.d}, c.layout);
  HostTensor k(c.dtype, {seq.total_k, c.hk, c.d}, c.layout);
  HostTensor v(c.dtype, {seq.total_k, c.hk, c.dv}, c.layout);
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  // Rows beyond seqused take no part: poisoned, so a backend that reads them shows it.
  seq.poison_unused_q_rows(q);
  seq.poison_unused_k_rows(k);
  seq.poison_unused_k_rows(v);

  // Paged copy of k/v: every sequence's keys scattered over shuffled blocks, the
  // rest of every block poisoned.
  HostTensor k_paged, v_paged, block_table;
  if (c.page_size > 0) {
    const std::int64_t page = c.page_size;
    std::int64_t max_blocks = 1, needed = 0;
    for (std::int64_t s = 0; s < c.b; ++s) {
      max_blocks = std::max(max_blocks, (len_k[s] + page - 1) / page);
      needed += (len_k[s] + page - 1) / page;
    }
    const std::int64_t num_blocks = needed + 2;  // a couple of blocks nobody owns
    std::vector<std::int32_t> physical(num_blocks);
    std::iota(physical.begin(), physical.end(), 0);
    std::shuffle(physical.begin(), physical.end(), rng.engine());
    block_table = HostTensor(DType::int32, {c.b, max_blocks});
    k_paged = HostTensor(c.dtype, {num_blocks, page, c.hk, c.d}, c.layout);
    v_paged = HostTensor(c.dtype, {num_blocks, page, c.hk, c.dv}, c.layout);
    std::int64_t next = 0;
    for (std::int64_t s = 0; s < c.b; ++s) {
      const std::int64_t blocks = (len_k[s] + page - 1) / page;
      for (std::int64_t slot = 0; slot < max_blocks; ++slot) {
        // Slots past the sequence's end still name valid blocks (never read).
        block_table.set_int({s, slot},
                            slot < blocks ? physical[next++] : physical[rng.integer(0, num_blocks - 1)]);
      }
      for (std::int64_t j = 0; j < len_k[s]; ++j) {
        const std::int64_t block = block_table.get_int({s, j / page}), row = j % page;
        const std::int64_t src = seq.k_start(s) + j;
        for (std::int64_t hh = 0; hh < c.hk; ++hh) {
          for (std::int64_t e = 0; e < c.d; ++e) k_paged.set({block, row, hh, e}, k.get({src, hh, e}));
          for (std::int64_t e = 0; e < c.dv; ++e) v_paged.set({block, row, hh, e}, v.get({src, hh, e}));
        }
      }
    }
  }

  HostTensor out(c.dtype, {seq.total_q, c.h, c.dv}, c.layout);
  HostTensor lse(DType::float32, {c.h, seq.total_q},
                 c.layout == Layout::contiguous ? Layout::contiguous : Layout::padded);
  const OptionTensors opts = draw_options(c.features, rng, c.b, c.h, c.d, c.max_k);

  auto build_with = [&](Binding& bind, bool paged) {
    VarlenForwardArgs a;
    a.q = bind.view(q);
    a.k = bind.view(paged ? k_paged : k);
    a.v = bind.view(paged ? v_paged : v);
    a.block_table = paged ? bind.view(block_table) : TensorView{};
    a.cu_seqlens_q = bind.view(seq.cu_q);
    a.cu_seqlens_k = bind.view(seq.cu_k);
    a.max_seqlen_q = c.max_q;
    a.max_seqlen_k = c.max_k;
    a.seqused_q = bind.view(seq.seqused_q);
    a.seqused_k = bind.view(seq.seqused_k);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.options = opts.bind(bind);
    return a;
  };
  auto build_device = [&](Binding& bind) { return build_with(bind, c.page_size > 0); };
  auto build_reference = [&](Binding& bind) { return build_with(bind, false); };

  DeviceBinding device(backend);
  const Status status = run_on(backend, build_device(device));
  if (status.code() == ErrorCode::unsupported && is_cuda(backend)) {
    GTEST_SKIP() << status.message();
  }
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
  if (c.page_size > 0) {
    expect_inputs_unchanged(device, {{"q", &q},
                                     {"k (paged)", &k_paged},
                                     {"v (paged)", &v_paged},
                                     {"block_table", &block_table},
                                     {"cu_seqlens_q", &seq.cu_q},
                                     {"cu_seqlens_k", &seq.cu_k},
                                     {"seqused_q", &seq.seqused_q},
                                     {"seqused_k", &seq.seqused_k}});
  } else {
    expect_inputs_unchanged(device, {{"q", &q},
                                     {"k", &k},
                                     {"v", &v},
                                     {"cu_seqlens_q", &seq.cu_q},
                                     {"cu_seqlens_k", &seq.cu_k},
                                     {"seqused_q", &seq.seqused_q},
                                     {"seqused_k", &seq.seqused_k}});
  }
  expect_inputs_unchanged(device, {{"alibi_slopes", &opts.alibi}, {"sink", &opts.sink}});

  const ElementFilter out_written = [&](const std::int64_t* index) { return bool(seq.q_row_used[index[0]]); };
  const ElementFilter lse_written = [&](const std::int64_t* index) { return bool(seq.q_row_used[index[1]]); };

  const ReferenceBinding ref = reference(build_reference);
  const ReferenceBinding lowp = reference_lowp(build_reference, c.dtype);
  EXPECT_TRUE(expect_close("out", device.fetch(out), out, ref.result(out), lowp.result(out),
                           {2.0, output_atol(c.dtype)}, out_written));
  EXPECT_TRUE(expect_close("lse", device.fetch(lse), lse, ref.result(lse), lowp.result(lse), {2.0, kLseAtol},
                           lse_written));
}

using VarlenParam = std::tuple<Backend, VarlenCase>;
class VarlenTest : public ::testing::TestWithParam<VarlenParam> {};

TEST_P(VarlenTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  check_varlen_case(backend, c, rng);
}

// Drawn afresh each run (attention_cases.h draw_common): 2-6 sequences under the drawn maxima, dense or paged
// K/V (pages of 1 to 512 rows), seqused, empty sequences.
VarlenCase draw_varlen_case(Rng& rng, Backend backend) {
  DrawnCommon fitted = draw_common(rng, backend, true);
  VarlenCase c{};
  c.b = rng.integer(2, 6);
  c.max_q = draw_length(rng, 9000);
  c.max_k = rng.coin(0.3) ? c.max_q : draw_length(rng, 9000);
  // Sequences average about half the maxima (draw_sequences: sequence 0 reaches them).
  fit_drawn_case(c, fitted, c.b, 2, c.max_q, c.max_k, drawn_case_cap(backend), [&] {
    return static_cast<double>((c.b + 1) / 2 * fitted.h) * c.max_q * c.max_k * (fitted.d + fitted.dv);
  });
  c.page_size = draw_page_size(rng);
  c.seqused = rng.coin(0.3);
  c.empty_sequences = rng.coin(0.2);
  return c;
}

class VarlenRandomTest : public ::testing::TestWithParam<RandomParam> {};

TEST_P(VarlenRandomTest, MatchesReference) {
  const Backend backend = std::get<0>(GetParam());
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_drawn_case(backend, draw_varlen_case, check_varlen_case);
}

INSTANTIATE_TEST_SUITE_P(Random, VarlenRandomTest, ::testing::ValuesIn(random_params(16, 6)),
                         random_param_name);

// Calls sharing one workspace on one stream, back to back, as an engine that keeps its workspace issues them.
// On cuda_sm90 every varlen call's prepare kernel rewrites the workspace's per-sequence maps, lengths and
// tile counter, and the forward kernel starts as a programmatic dependent of it (forward_config.h
// PREPARE_OVERLAP): only stream order keeps the next call's prepare kernel from rewriting what this call's
// forward kernel still reads. Two problems of different lengths and masks, alternated twice; every output
// must be bitwise the output of the same problem run alone (the forward is deterministic:
// determinism_test.cpp).
class VarlenBackToBackTest : public ::testing::TestWithParam<Backend> {};

TEST_P(VarlenBackToBackTest, SharedWorkspaceMatchesSeparateCalls) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  if (!is_cuda(backend)) GTEST_SKIP() << "host backends run each call to its end before returning";
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  struct Problem {
    PackedSequences seq;
    HostTensor q, k, v;
    std::int64_t max_q, max_k;
    OptionTensors options;
  };
  const std::int64_t h = 8, hk = 2, d = 128;
  auto make = [&](std::int64_t b, std::int64_t max_q, std::int64_t max_k, MaskKind mask) {
    Problem p{draw_sequences(rng, b, max_q, max_k, false, false), {}, {}, {}, max_q, max_k, {}};
    p.options = draw_options({mask}, rng, b, h, d, max_k);
    p.q = HostTensor(DType::bfloat16, {p.seq.total_q, h, d});
    p.k = HostTensor(DType::bfloat16, {p.seq.total_k, hk, d});
    p.v = HostTensor(DType::bfloat16, {p.seq.total_k, hk, d});
    p.q.fill_normal(rng);
    p.k.fill_normal(rng);
    p.v.fill_normal(rng);
    return p;
  };
  const std::vector<Problem> problems = {make(6, 700, 900, MaskKind::causal),
                                         make(3, 2100, 2100, MaskKind::none)};
  auto args_for = [&](const Problem& p, DeviceBinding& device, HostTensor& out) {
    VarlenForwardArgs a;
    a.q = device.view(p.q);
    a.k = device.view(p.k);
    a.v = device.view(p.v);
    a.cu_seqlens_q = device.view(p.seq.cu_q);
    a.cu_seqlens_k = device.view(p.seq.cu_k);
    a.max_seqlen_q = p.max_q;
    a.max_seqlen_k = p.max_k;
    a.out = device.view(out);
    a.options = p.options.bind(device);
    return a;
  };
  // Each problem alone (run_on: its own stream and workspace).
  std::vector<HostTensor> alone;
  for (const Problem& p : problems) {
    HostTensor out(DType::bfloat16, {p.seq.total_q, h, d});
    DeviceBinding device(backend);
    const Status status = run_on(backend, args_for(p, device, out));
    if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
    ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
    alone.push_back(device.fetch(out));
  }
  // Then A, B, A, B on one stream and one workspace, each into its own output.
  std::vector<HostTensor> outs;
  std::vector<std::unique_ptr<DeviceBinding>> devices;
  std::vector<VarlenForwardArgs> calls;
  outs.reserve(4);  // args hold views of these tensors' device copies, bound by address
  for (int call = 0; call < 4; ++call) {
    const Problem& p = problems[call % 2];
    outs.emplace_back(DType::bfloat16, std::vector<std::int64_t>{p.seq.total_q, h, d});
    devices.push_back(std::make_unique<DeviceBinding>(backend));
    calls.push_back(args_for(p, *devices.back(), outs.back()));
  }
  const Status status = run_back_to_back(backend, calls);
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
  for (int call = 0; call < 4; ++call) {
    EXPECT_TRUE(expect_identical(
        "out of call " + std::to_string(call) + " (problem " + std::to_string(call % 2) + ")",
        alone[call % 2], devices[call]->fetch(outs[call])));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, VarlenBackToBackTest, ::testing::ValuesIn(backends_under_test()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return sanitize_name(backend_name(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Grid, VarlenTest,
                         ::testing::Combine(::testing::ValuesIn(backends_under_test()),
                                            ::testing::ValuesIn(varlen_cases())),
                         [](const ::testing::TestParamInfo<VarlenParam>& info) {
                           return sanitize_name(std::string(backend_name(std::get<0>(info.param))) + "_" +
                                                std::to_string(info.index) + "_" +
                                                std::get<1>(info.param).name());
                         });

}  // namespace
}  // namespace flashattn::test
