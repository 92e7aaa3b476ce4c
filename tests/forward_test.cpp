// Batched forward, every backend against the float64 reference.
//
// The grid: every (sq, sk) of the list, every head dim, every dtype,
// MHA/GQA/MQA, dv != d, every mask kind, softcap, ALiBi (h) and (b, h), dropout,
// sink, custom scale and non-contiguous layouts, each value at least once. The
// small shapes cycle through the axes (AxisCycle); the large ones (1023x1024,
// 2048x2048, d = 256) are a few hand-picked cases, because the float64
// reference is O(sq * sk * d) and the whole binary must run in minutes on a
// 2-core CI machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/sm90/split_kv_plan.h"
#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace flashattn::test {
namespace {

struct ForwardCase {
  std::int64_t b, sq, sk, h, hk, d, dv;
  DType dtype;
  Features features;
  Layout layout = Layout::contiguous;
  bool with_lse = true;

  std::string name() const {
    return std::to_string(sq) + "x" + std::to_string(sk) + "_b" + std::to_string(b) + "_" +
           heads_label(h, hk) + "_d" + std::to_string(d) + (dv != d ? "_dv" + std::to_string(dv) : "") + "_" +
           dtype_label(dtype) + "_" + features_label(features) + "_" + layout_name(layout) +
           (with_lse ? "" : "_nolse");
  }
};

const std::vector<std::pair<std::int64_t, std::int64_t>> kSmallShapes = {{1, 1},     {1, 239}, {113, 203},
                                                                         {128, 217}, {239, 1}, {799, 3}};
const std::vector<std::int64_t> kHeadDims = {8, 40, 64, 72, 96, 128, 192, 256};

std::vector<ForwardCase> forward_cases() {
  std::vector<ForwardCase> cases;
  AxisCycle<std::int64_t> dims(kHeadDims, 1);
  AxisCycle<DType> dtypes({DType::float16, DType::bfloat16, DType::float32}, 2);
  AxisCycle<std::pair<std::int64_t, std::int64_t>> heads({{4, 4}, {6, 2}, {3, 1}}, 3);
  AxisCycle<MaskKind> masks({MaskKind::none, MaskKind::causal, MaskKind::local, MaskKind::left_only,
                             MaskKind::right_only, MaskKind::causal_left},
                            4);
  AxisCycle<float> softcaps({0.f, 0.f, 1.5f}, 5);
  AxisCycle<AlibiKind> alibis(
      {AlibiKind::none, AlibiKind::none, AlibiKind::per_head, AlibiKind::per_batch_head}, 6);
  AxisCycle<float> dropouts({0.f, 0.f, 0.17f}, 7);
  AxisCycle<bool> sinks({false, false, true}, 8);
  AxisCycle<bool> scales({false, false, false, true}, 9);
  AxisCycle<Layout> layouts({Layout::contiguous, Layout::padded, Layout::heads_major}, 10);
  AxisCycle<bool> lses({true, true, true, true, false}, 11);
  AxisCycle<int> dv_choice({0, 0, 0, 1}, 12);  // 1: dv != d

  constexpr int kRounds = 6;
  for (int round = 0; round < kRounds; ++round) {
    for (auto [sq, sk] : kSmallShapes) {
      ForwardCase c{};
      c.b = 2;
      c.sq = sq;
      c.sk = sk;
      std::tie(c.h, c.hk) = heads.next();
      c.d = dims.next();
      // dv != d: the head dim two steps along the list (so both smaller and larger dv occur).
      c.dv = dv_choice.next() ? kHeadDims[(std::find(kHeadDims.begin(), kHeadDims.end(), c.d) -
                                           kHeadDims.begin() + (round % 2 ? 2 : 6)) %
                                          kHeadDims.size()]
                              : c.d;
      c.dtype = dtypes.next();
      c.features = {masks.next(),    softcaps.next(), alibis.next(),
                    dropouts.next(), sinks.next(),    scales.next()};
      c.layout = layouts.next();
      c.with_lse = lses.next();
      cases.push_back(c);
    }
  }
  // Large shapes: few, single-head, covering the long-sequence paths of every mask family.
  const Features plain{};
  cases.push_back({1, 1023, 1024, 2, 1, 64, 64, DType::float16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1,
                   1023,
                   1024,
                   1,
                   1,
                   128,
                   128,
                   DType::bfloat16,
                   {MaskKind::local, 0.f, AlibiKind::per_head, 0.17f, true},
                   Layout::padded});
  cases.push_back({1, 2048, 2048, 1, 1, 128, 128, DType::float16, plain, Layout::contiguous});
  cases.push_back(
      {1, 2048, 2048, 1, 1, 256, 256, DType::bfloat16, {MaskKind::causal, 1.5f}, Layout::heads_major});
  cases.push_back(
      {1, 1023, 1024, 1, 1, 256, 128, DType::float32, {MaskKind::right_only}, Layout::contiguous});
  // Head dims the Hopper kernels reach by padding (96) or by large-V configurations ((64, 256),
  // (64, 512): FA3's hdimv cases), and GQA groups of 2..16 heads with short query lengths, which
  // cuda_sm90 packs into one tile (rows = (query, head in group)): causal and windowed masks,
  // ragged tails, LSE per packed row, every layout.
  cases.push_back({2, 113, 203, 4, 2, 96, 96, DType::bfloat16, {MaskKind::causal}, Layout::padded});
  cases.push_back({2, 17, 239, 8, 2, 96, 96, DType::float16, {MaskKind::local, 1.5f}, Layout::heads_major});
  cases.push_back({2, 128, 217, 4, 2, 64, 256, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({2, 239, 113, 2, 1, 64, 256, DType::float16, {MaskKind::none, 1.5f}, Layout::padded});
  cases.push_back({2, 113, 203, 4, 2, 64, 512, DType::bfloat16, {MaskKind::causal}, Layout::padded});
  cases.push_back({1, 1, 799, 8, 2, 64, 512, DType::float16, {MaskKind::none}, Layout::contiguous});
  cases.push_back({2, 1, 239, 8, 2, 128, 128, DType::float16, {MaskKind::causal}, Layout::contiguous});
  // Padded head dims (forward_config.h kernel_head_dims): cuda_sm90 runs them on the d = dv = 64 / 128 / 192
  // / 256 kernel that holds them, its extra columns zero-filled by TMA and clipped from the O store: each
  // kernel family's instances (d128's unmasked and causal K/V multicast from 2k keys, d64's four-consumer
  // tile from 4k queries, d256's 64-key blocks, the decode kernels), dv != d, every mask family.
  cases.push_back({1, 2048, 2048, 2, 1, 80, 80, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1, 2100, 2100, 2, 2, 112, 112, DType::float16, plain, Layout::padded});
  cases.push_back({2, 300, 700, 4, 2, 40, 40, DType::bfloat16, {MaskKind::local, 1.5f}, Layout::heads_major});
  cases.push_back({1, 4100, 4100, 2, 1, 56, 56, DType::float16, plain, Layout::contiguous});
  cases.push_back({1, 1100, 1000, 2, 1, 160, 160, DType::bfloat16, {MaskKind::causal}, Layout::padded});
  cases.push_back({1,
                   1024,
                   1024,
                   2,
                   2,
                   224,
                   224,
                   DType::float16,
                   {MaskKind::causal, 0.f, AlibiKind::per_head, 0.f, true},
                   Layout::contiguous});
  cases.push_back({2, 113, 239, 4, 2, 80, 64, DType::bfloat16, {MaskKind::right_only}, Layout::padded});
  cases.push_back({2, 239, 113, 2, 1, 48, 136, DType::float16, {MaskKind::causal_left}, Layout::heads_major});
  cases.push_back({2, 1, 1500, 8, 2, 80, 80, DType::bfloat16, plain, Layout::contiguous});
  cases.push_back({2, 3, 1700, 16, 4, 48, 48, DType::float16, {MaskKind::causal}, Layout::padded});
  cases.push_back({2, 1, 1500, 8, 2, 200, 200, DType::bfloat16, {MaskKind::none, 1.5f}, Layout::contiguous});
  // Head dims of at most 96 on d = 128's kernels with GEMMs over 96 columns, and of 136-160 on d = 192's
  // with GEMMs over 160 (forward_config.h narrowed_gemm_dim): the unmasked K/V multicast (an even number of
  // query blocks from 2048 keys), softcapped windows, ALiBi with a sink, dv != d, and (above) d = 96's packed
  // GQA, d = 80's causal 2k and d = 160's causal.
  cases.push_back({1, 2304, 2304, 2, 1, 72, 72, DType::bfloat16, plain, Layout::padded});
  cases.push_back({2, 300, 700, 4, 2, 88, 88, DType::float16, {MaskKind::local, 1.5f}, Layout::heads_major});
  cases.push_back({1,
                   1023,
                   1024,
                   2,
                   2,
                   96,
                   96,
                   DType::bfloat16,
                   {MaskKind::causal, 0.f, AlibiKind::per_head, 0.f, true},
                   Layout::contiguous});
  cases.push_back({2, 300, 700, 4, 2, 136, 152, DType::float16, {MaskKind::local, 1.5f}, Layout::padded});
  // At most 64 query rows per head or packed group: cuda_sm90's one-consumer 64-row tiles
  // (forward_config.h use_single_consumer): a full packed tile (16 x 4, 8 x 8), unpacked rows
  // (MHA; ALiBi and the sink turn packing off), ragged key ends, every mask family.
  cases.push_back({2, 16, 239, 8, 2, 128, 128, DType::bfloat16, {MaskKind::causal}, Layout::padded});
  cases.push_back({1, 8, 300, 16, 2, 128, 128, DType::float16, {MaskKind::right_only}, Layout::contiguous});
  cases.push_back(
      {2, 64, 1000, 3, 3, 128, 128, DType::float16, {MaskKind::causal, 1.5f}, Layout::heads_major});
  cases.push_back({2,
                   50,
                   700,
                   8,
                   2,
                   128,
                   128,
                   DType::bfloat16,
                   {MaskKind::local, 0.f, AlibiKind::per_head, 0.f, true},
                   Layout::padded});
  cases.push_back({2, 17, 239, 8, 2, 128, 128, DType::bfloat16, {MaskKind::causal}, Layout::padded});
  cases.push_back({2, 5, 300, 32, 2, 64, 64, DType::bfloat16, {MaskKind::causal_left}, Layout::heads_major});
  cases.push_back({3, 3, 799, 16, 1, 256, 256, DType::float16, {MaskKind::left_only}, Layout::contiguous});
  // The d = dv = 64 and 256 decode kernels, and d = 96 on d = 128's: few tiles over long keys split them
  // (split_kv.h).
  cases.push_back({2, 3, 1700, 16, 4, 64, 64, DType::bfloat16, {MaskKind::causal}, Layout::padded});
  cases.push_back({2, 1, 1500, 8, 2, 256, 256, DType::float16, {MaskKind::none, 1.5f}, Layout::contiguous});
  cases.push_back({2, 2, 1800, 32, 32, 96, 96, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  // More decode tiles than the SMs (132 on an H100 / H200), fewer than two a SM, on the static schedule of
  // equal tiles: the narrow kernel of two CTAs a SM (forward_config.h TWO_CTAS_PER_SM): groups of 4, of 8 (a
  // Q box of one position), of 2 with a sink.
  cases.push_back({20, 1, 1200, 32, 8, 128, 128, DType::bfloat16, {MaskKind::none}, Layout::contiguous});
  cases.push_back({20, 1, 700, 64, 8, 128, 128, DType::bfloat16, {MaskKind::none}, Layout::contiguous});
  cases.push_back({17,
                   1,
                   900,
                   16,
                   8,
                   128,
                   128,
                   DType::float16,
                   {MaskKind::none, 0.f, AlibiKind::none, 0.f, true},
                   Layout::padded});
  // Past two tiles a SM (the kernel of one CTA a SM, forward_dispatch.h decode_ctas_per_sm): the static
  // schedule's whole rounds and the last round's split; d = 96 on the d = 128 kernel, MHA (1280 tiles).
  cases.push_back({36, 1, 500, 32, 8, 128, 128, DType::float16, {MaskKind::none, 20.f}, Layout::contiguous});
  cases.push_back({40, 1, 200, 32, 32, 96, 96, DType::bfloat16, {MaskKind::none}, Layout::padded});
  cases.push_back({2, 40, 113, 4, 1, 192, 128, DType::bfloat16, {MaskKind::right_only}, Layout::contiguous});
  cases.push_back({2,
                   9,
                   203,
                   8,
                   4,
                   192,
                   192,
                   DType::float16,
                   {MaskKind::causal, 0.f, AlibiKind::none, 0.f, false, true},
                   Layout::padded,
                   false});
  // Long enough (sq >= 4096, no causal/window mask) for cuda_sm90's three-consumer d64 kernel, whose
  // row sums come from the tensor cores (P V against a block of ones): ragged tails against its
  // 192-row / 128-key tiles, GQA with a sink joining that sum, and softcap in fp16.
  cases.push_back({1,
                   4100,
                   4100,
                   2,
                   1,
                   64,
                   64,
                   DType::bfloat16,
                   {MaskKind::none, 0.f, AlibiKind::none, 0.f, true},
                   Layout::padded});
  cases.push_back({1, 4097, 4099, 1, 1, 64, 64, DType::float16, {MaskKind::none, 30.f}, Layout::heads_major});
  // Past 8191 queries with few keys: cuda_sm90's three-consumer d64 kernel, unmasked and causal (the
  // 4100-query cases above run its four-consumer kernel since session 9: forward_config.h use_d64_alt_tile);
  // causal with sq > sk leaves the first 7867 rows without a visible key (tiles with no key block).
  cases.push_back({1, 8193, 300, 2, 1, 64, 64, DType::bfloat16, plain, Layout::contiguous});
  cases.push_back({1, 8200, 333, 1, 1, 64, 64, DType::float16, {MaskKind::causal}, Layout::padded});
  // The same kernel as clusters of two CTAs sharing each K/V block (builds with
  // FLASHATTN_SM90_KV_MULTICAST_D64
  // <= 2100): 44 query blocks of 192 rows (the last ragged), ragged keys, GQA with a sink; fp16 with softcap.
  cases.push_back({1,
                   8400,
                   2100,
                   2,
                   1,
                   64,
                   64,
                   DType::bfloat16,
                   {MaskKind::none, 0.f, AlibiKind::none, 0.f, true},
                   Layout::padded});
  cases.push_back({1, 8448, 2100, 2, 2, 64, 64, DType::float16, {MaskKind::none, 30.f}, Layout::heads_major});
  // An even number of 128-row query blocks per head, unmasked, dense: cuda_sm90's d128 kernel launched as
  // clusters of two CTAs sharing each K/V block by TMA multicast (when built with
  // FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN <= 777): ragged keys (the last block's second half past the end),
  // GQA, ALiBi and a sink.
  cases.push_back({2,
                   500,
                   777,
                   4,
                   2,
                   128,
                   128,
                   DType::bfloat16,
                   {MaskKind::none, 0.f, AlibiKind::per_head, 0.f, true},
                   Layout::padded});
  // A multiple of four 128-row query blocks with at least 8192 keys under a causal or right-only mask:
  // cuda_sm90's d128 K/V multicast kernel for causal problems (forward_config.h
  // FLASHATTN_SM90_KV_MULTICAST_CAUSAL, by default from 8192 keys), whose clusters walk the key blocks of two
  // query blocks and run static couples of them: bottom-right alignment with more keys than queries and a
  // ragged last key block, GQA, fp16 with ALiBi and a sink, a random right window.
  cases.push_back({1, 512, 8200, 4, 2, 128, 128, DType::bfloat16, {MaskKind::causal}, Layout::padded});
  cases.push_back({1,
                   1024,
                   8192,
                   2,
                   1,
                   128,
                   128,
                   DType::float16,
                   {MaskKind::causal, 0.f, AlibiKind::per_head, 0.f, true},
                   Layout::contiguous});
  cases.push_back(
      {1, 512, 8192, 2, 2, 128, 128, DType::bfloat16, {MaskKind::right_only}, Layout::heads_major});
  // An even number of 128-row query blocks with at least 2048 keys, unmasked: cuda_sm90's d256 kernel as
  // clusters of two CTAs sharing each K/V block by column chunks (in builds with
  // FLASHATTN_SM90_KV_MULTICAST_D256 <= 2100): ragged keys, GQA, ALiBi and a sink; fp16 with softcap, every
  // head its own kv head.
  cases.push_back({1,
                   512,
                   2100,
                   2,
                   1,
                   256,
                   256,
                   DType::bfloat16,
                   {MaskKind::none, 0.f, AlibiKind::per_head, 0.f, true},
                   Layout::padded});
  cases.push_back(
      {2, 256, 2304, 2, 2, 256, 256, DType::float16, {MaskKind::none, 1.5f}, Layout::heads_major});
  // The same kernel for causal problems (FLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL, by default from 4097 keys;
  // 2100 / 2304 keys run it in builds with the switch, the 64-key blocks on placement clusters by default):
  // a multiple of four query blocks, bottom-right alignment with a ragged last key block, GQA; a right window
  // in fp16; at 4100 / 4352 keys and at 2100 / 2304.
  cases.push_back({1, 512, 4100, 4, 2, 256, 256, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1, 512, 4352, 2, 1, 256, 256, DType::float16, {MaskKind::right_only}, Layout::padded});
  cases.push_back({1, 512, 2100, 4, 2, 256, 256, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1, 512, 2304, 2, 1, 256, 256, DType::float16, {MaskKind::right_only}, Layout::padded});
  // Past 2048 queries, so cuda_sm80's d256 non-causal table entry for long sequences (whole-tile K/V copies
  // without per-copy bounds tests, forward_tuning.json) runs, with a ragged tail against its 64-row tiles.
  cases.push_back({1, 2113, 2100, 1, 1, 256, 256, DType::float16, plain, Layout::contiguous});
  // cuda_sm90's d256 kernel with 64-key blocks (forward_config.h use_d256_block64, by default up to 512
  // keys unmasked and 4096 masked): 512 keys (8 whole blocks), causal and not; causal 1001 keys with ALiBi (a
  // ragged 64-key block); causal 2048 keys with GQA, and 512 queries bottom-right over 4096 keys (the longest
  // masked rows that take them), on the placement clusters below.
  cases.push_back({2, 512, 512, 2, 2, 256, 256, DType::bfloat16, plain, Layout::contiguous});
  cases.push_back({2, 512, 512, 2, 1, 256, 256, DType::float16, {MaskKind::causal}, Layout::padded});
  cases.push_back({1,
                   1000,
                   1001,
                   2,
                   1,
                   256,
                   256,
                   DType::bfloat16,
                   {MaskKind::causal, 0.f, AlibiKind::per_head},
                   Layout::heads_major});
  cases.push_back({1, 2048, 2048, 2, 1, 256, 256, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1, 512, 4096, 2, 1, 256, 256, DType::float16, {MaskKind::causal}, Layout::padded});
  // The same rows on static couples in clusters of two, a head's couples together (forward_config.h
  // use_placement_clusters, by default up to 4096 keys): more tiles than CTAs (192 tiles: the walk's later
  // steps), GQA, more queries than keys (the first 128 rows see no key); a right window in fp16 at 1024 keys.
  cases.push_back({3, 512, 384, 16, 4, 256, 256, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1, 1024, 1024, 2, 1, 256, 256, DType::float16, {MaskKind::right_only}, Layout::padded});
  // d128 causal between 4096 and 8192 keys: the dynamic schedule's sections of a quarter of L2
  // (forward_config.h SECTION_L2_DIVISOR_MID): on a 50 MB L2, sections of 4 kv heads of 3 MB and a last one
  // of 2; GQA, a ragged last key block.
  cases.push_back({1, 512, 6000, 12, 6, 128, 128, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  // d128 short masked problems (session 19; they ran a 64-key kernel that was measured and removed): causal
  // 512 with GQA, 1000 keys (a ragged 40-key last block) in fp16 with ALiBi, bottom-right alignment with more
  // keys (an offset of 700, not a multiple of 64; a sink) and with more queries (the first 250 rows see no
  // key), a random right window, packed GQA (4 heads per kv head).
  cases.push_back({1, 512, 512, 2, 1, 128, 128, DType::bfloat16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1,
                   1000,
                   1000,
                   2,
                   2,
                   128,
                   128,
                   DType::float16,
                   {MaskKind::causal, 0.f, AlibiKind::per_head},
                   Layout::padded});
  cases.push_back({1,
                   300,
                   1000,
                   2,
                   1,
                   128,
                   128,
                   DType::bfloat16,
                   {MaskKind::causal, 0.f, AlibiKind::none, 0.f, true},
                   Layout::heads_major});
  cases.push_back({1, 700, 450, 2, 2, 128, 128, DType::float16, {MaskKind::causal}, Layout::contiguous});
  cases.push_back({1, 512, 777, 2, 1, 128, 128, DType::bfloat16, {MaskKind::right_only}, Layout::padded});
  cases.push_back({2, 24, 640, 8, 2, 128, 128, DType::float16, {MaskKind::causal}, Layout::contiguous});
  return cases;
}

// The check of both forward suites below: the call `build` binds runs on `backend` (a CUDA backend that
// reports the case unsupported skips the test), leaves `inputs` as they were, and its out (and lse, when
// defined) pass the FlashAttention rule against the float64 reference.
template <class Build>
void expect_forward_matches(Backend backend, DType dtype, Build&& build, const HostTensor& out,
                            const HostTensor& lse, NamedTensors inputs) {
  DeviceBinding device(backend);
  const Status status = run_on(backend, build(device));
  if (status.code() == ErrorCode::unsupported && is_cuda(backend)) {
    GTEST_SKIP() << status.message();
  }
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();

  expect_inputs_unchanged(device, inputs);

  const ReferenceBinding ref = reference(build);
  const ReferenceBinding lowp = reference_lowp(build, dtype);
  EXPECT_TRUE(expect_close("out", device.fetch(out), out, ref.result(out), lowp.result(out),
                           {2.0, output_atol(dtype)}));
  if (lse.defined()) {
    EXPECT_TRUE(
        expect_close("lse", device.fetch(lse), lse, ref.result(lse), lowp.result(lse), {2.0, kLseAtol}));
  }
}

using ForwardParam = std::tuple<Backend, ForwardCase>;

// A case's test name: backend, index, the case's own name.
std::string forward_param_name(const ::testing::TestParamInfo<ForwardParam>& info) {
  return sanitize_name(std::string(backend_name(std::get<0>(info.param))) + "_" + std::to_string(info.index) +
                       "_" + std::get<1>(info.param).name());
}

class ForwardTest : public ::testing::TestWithParam<ForwardParam> {};

// The grid's case `c` (and the Random suite's drawn ones) on `backend`.
void check_forward_case(Backend backend, const ForwardCase& c, Rng& rng) {
  HostTensor q(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout);
  HostTensor k(c.dtype, {c.b, c.sk, c.hk, c.d}, c.layout);
  HostTensor v(c.dtype, {c.b, c.sk, c.hk, c.dv}, c.layout);
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.dv}, c.layout);  // poisoned
  HostTensor lse = c.with_lse
                       ? HostTensor(DType::float32, {c.b, c.h, c.sq},
                                    c.layout == Layout::contiguous ? Layout::contiguous : Layout::padded)
                       : HostTensor();
  const OptionTensors opts = draw_options(c.features, rng, c.b, c.h, c.d, c.sk);

  auto build = [&](Binding& bind) {
    ForwardArgs a;
    a.q = bind.view(q);
    a.k = bind.view(k);
    a.v = bind.view(v);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.options = opts.bind(bind);
    return a;
  };

  expect_forward_matches(
      backend, c.dtype, build, out, lse,
      {{"q", &q}, {"k", &k}, {"v", &v}, {"alibi_slopes", &opts.alibi}, {"sink", &opts.sink}});
}

TEST_P(ForwardTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  check_forward_case(backend, c, rng);
}

// Dropout on every kernel shape of cuda_sm90's dropout instances (forward_config.h DropoutConfig: 64-, 80-,
// 96- and 128-key blocks, the d = 256 masked instance unmasked too, (64, 512) as two launches that drop the
// same probabilities): several key blocks per tile, ragged ends, every mask family, GQA unpacked (dropout
// turns packing off), few query rows (which would run the decode kernel without dropout), softcap, ALiBi and
// a sink beside it. CUDA only: the grid's dropout cases cover the CPU backends.
std::vector<ForwardCase> dropout_cases() {
  using F = Features;
  return {{1, 1023, 1024, 2, 1, 64, 64, DType::float16, F{MaskKind::causal, 0.f, AlibiKind::none, 0.17f},
           Layout::contiguous},
          {2, 700, 900, 2, 2, 128, 128, DType::bfloat16, F{MaskKind::none, 0.f, AlibiKind::none, 0.1f},
           Layout::padded},
          {1, 1000, 1001, 2, 1, 256, 256, DType::bfloat16,
           F{MaskKind::causal, 0.f, AlibiKind::per_head, 0.17f, true}, Layout::heads_major},
          {1, 512, 600, 2, 2, 256, 256, DType::float16, F{MaskKind::none, 1.5f, AlibiKind::none, 0.3f},
           Layout::contiguous},
          {2, 300, 400, 4, 2, 192, 128, DType::bfloat16, F{MaskKind::local, 0.f, AlibiKind::none, 0.17f},
           Layout::padded},
          {2, 200, 333, 2, 1, 192, 192, DType::float16, F{MaskKind::right_only, 0.f, AlibiKind::none, 0.17f},
           Layout::contiguous},
          {2, 128, 217, 4, 2, 64, 256, DType::bfloat16, F{MaskKind::causal, 0.f, AlibiKind::none, 0.17f},
           Layout::contiguous},
          {1, 113, 203, 4, 2, 64, 512, DType::float16, F{MaskKind::none, 0.f, AlibiKind::none, 0.17f},
           Layout::padded},
          {2, 113, 203, 4, 2, 96, 96, DType::bfloat16, F{MaskKind::causal_left, 0.f, AlibiKind::none, 0.17f},
           Layout::heads_major},
          {2, 5, 300, 8, 2, 128, 128, DType::bfloat16, F{MaskKind::none, 0.f, AlibiKind::none, 0.17f, true},
           Layout::contiguous},
          {1, 2048, 2048, 1, 1, 128, 128, DType::float16, F{MaskKind::causal, 0.f, AlibiKind::none, 0.5f},
           Layout::contiguous}};
}

class ForwardDropoutTest : public ::testing::TestWithParam<ForwardParam> {};

TEST_P(ForwardDropoutTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  if (!is_cuda(backend))
    GTEST_SKIP() << "the CUDA dropout kernels' shapes (the grid covers the CPU backends)";
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  check_forward_case(backend, c, rng);
}

INSTANTIATE_TEST_SUITE_P(Dropout, ForwardDropoutTest,
                         ::testing::Combine(::testing::ValuesIn(backends_under_test()),
                                            ::testing::ValuesIn(dropout_cases())),
                         forward_param_name);

// More units than a GPU has clusters, so that the static schedule of cuda_sm90's d128 K/V multicast kernel
// (non-causal, an even number of query blocks) ends in a partial round, which from 4096 keys the split tail
// cuts into key-block pieces combined in the workspace (forward_config.h SPLIT_TAIL, split_tail.h). On 132
// SMs (66 clusters): 70 units (under half a round past the first: the whole problem is the tail, 33 ragged
// blocks per unit) with GQA, ALiBi and a sink; 100 units (a tail of 34) in fp16 with softcap. The CPU
// backends are left out: these shapes exist for a CUDA schedule and would add minutes of CI there.
std::vector<ForwardCase> tail_cases() {
  return {{1,
           256,
           4200,
           70,
           10,
           128,
           128,
           DType::bfloat16,
           {MaskKind::none, 0.f, AlibiKind::per_head, 0.f, true},
           Layout::padded},
          {1, 512, 4096, 50, 50, 128, 128, DType::float16, {MaskKind::none, 1.5f}, Layout::heads_major},
          // A padded head dim on the same kernel (forward_config.h kernel_head_dims), and one on its
          // narrowed GEMMs (narrowed_gemm_dim: records of 96 columns).
          {1, 256, 4100, 70, 70, 112, 112, DType::bfloat16, {MaskKind::none}, Layout::contiguous},
          {1,
           256,
           4100,
           70,
           10,
           96,
           96,
           DType::float16,
           {MaskKind::none, 1.5f, AlibiKind::per_head, 0.f, true},
           Layout::padded}};
}

class ForwardTailTest : public ::testing::TestWithParam<ForwardParam> {};

TEST_P(ForwardTailTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  if (!is_cuda(backend)) GTEST_SKIP() << "a CUDA schedule's shapes (cuda_sm90's split tail)";
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  check_forward_case(backend, c, rng);
}

INSTANTIATE_TEST_SUITE_P(Tail, ForwardTailTest,
                         ::testing::Combine(::testing::ValuesIn(backends_under_test()),
                                            ::testing::ValuesIn(tail_cases())),
                         forward_param_name);

// Scores far wider than the grid's (N(0, 1) inputs give logits of a few units), where the online softmax's
// reference maxima move often and far: q drawn with a large deviation makes the row maxima jump between key
// blocks (up to overflowing probabilities against a stale reference at stddev 40), and keys whose norm grows
// or shrinks along the sequence make each block's maximum higher than the last one's in one walking direction
// or the other (cuda_sm90 walks from the last block down). Shapes reach the kernels that rescale
// conditionally: d128 with K/V multicast (unmasked from FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN keys, by
// default 2048, and an even number of 128-row query blocks; causal: >= 8192 keys and a multiple of four) and
// without, d256 (the causal multicast from 4097 keys by default), and the d64 kernels (two, three and four
// consumers).
struct SpreadCase {
  std::int64_t b, sq, sk, h, d;
  DType dtype;
  bool causal;
  float q_stddev;
  int key_trend;  // 0: none; +1: key j scaled by 0.5 + 20 j / sk; -1: by 0.5 + 20 (1 - j / sk)
  std::string name() const {
    return std::to_string(sq) + "x" + std::to_string(sk) + "_b" + std::to_string(b) + "_h" +
           std::to_string(h) + "_d" + std::to_string(d) + "_" + dtype_label(dtype) +
           (causal ? "_causal" : "") + "_q" + std::to_string(static_cast<int>(q_stddev)) +
           (key_trend > 0   ? "_rising"
            : key_trend < 0 ? "_falling"
                            : "");
  }
};

std::vector<SpreadCase> spread_cases() {
  return {
      {1, 512, 2304, 2, 128, DType::bfloat16, false, 6.f, 0},  // d128 K/V multicast (from 2048 keys)
      {1, 512, 2304, 2, 128, DType::float16, false, 40.f, 0},  // overflow against a stale reference
      {1, 700, 700, 2, 128, DType::float16, true, 6.f, 0},
      {2, 384, 1500, 2, 128, DType::bfloat16, false, 1.f, -1},  // every block above the last (sm90's order)
      {1, 600, 900, 2, 128, DType::float16, true, 1.f, 1},
      {1, 512, 2304, 2, 128, DType::bfloat16, false, 1.f, -1},  // the same under K/V multicast
      // Causal under K/V multicast (>= 8192 keys, FLASHATTN_SM90_KV_MULTICAST_CAUSAL): rows whose first
      // block is the diagonal, and a lower query block that skips the cluster's top block.
      {1, 512, 8192, 1, 128, DType::bfloat16, true, 6.f, 0},
      {1, 512, 8192, 2, 128, DType::float16, true, 1.f, -1},
      {1, 300, 1000, 2, 256, DType::bfloat16, false, 6.f, -1},
      // d256 K/V multicast: unmasked (KV_MULTICAST_D256 builds) and causal (by default from 4097 keys).
      {1, 512, 2304, 2, 256, DType::float16, false, 40.f, 0},
      {1, 512, 2304, 2, 256, DType::bfloat16, true, 6.f, -1},
      {1, 512, 4352, 2, 256, DType::bfloat16, true, 6.f, -1},
      {1, 512, 4096, 2, 256, DType::float16, true, 40.f, 1},  // the longest causal rows on 64-key blocks
      {1, 500, 700, 2, 64, DType::float16, true, 6.f, 1},
      // d64 kernels whose row sums come from the P V GEMM (forward_config.h kRowSumMma): four consumers
      // (512 <= sq < 8192) and three (sq >= 8192 non-causal). Like the d128 cases above (kRowSumFused), their
      // by-sum softmax triggers on a bit test of the packed probabilities, shifted by kProbabilityShift
      // (softmax.h): q40 overflows a stale reference, the trends move it block after block.
      {1, 1024, 1536, 2, 64, DType::bfloat16, false, 40.f, 0},
      {1, 1024, 1024, 2, 64, DType::float16, true, 6.f, -1},
      {1, 8192, 768, 1, 64, DType::bfloat16, false, 6.f, 1},
      {1, 8448, 2304, 1, 64, DType::float16, false, 40.f, -1},  // the same with K/V multicast (D64 builds)
      // Block maxima rising by far more than fp32's exponent range from one block to the next in sm90's
      // walking order (q40 against keys scaled up to 20x): a probability taken against the previous reference
      // overflows fp32 itself, so the scores must still be at hand when the block triggers the exact way (the
      // by-sum softmax of every kernel: the bit test at d128 (the first case under K/V multicast) and
      // at d64, the sum trigger at d256).
      {1, 512, 2304, 2, 128, DType::bfloat16, false, 40.f, -1},
      {1, 300, 1000, 2, 256, DType::bfloat16, false, 40.f, -1},
      {1, 1024, 1536, 2, 64, DType::float16, false, 40.f, -1},
      // The narrowed GEMMs (d <= 96 on d = 128's kernels, d <= 160 on d = 192's; narrowed_gemm_dim): the
      // by-sum softmax without the tensor cores' sums, under K/V multicast (unmasked and causal) and without.
      {1, 512, 2304, 2, 96, DType::bfloat16, false, 40.f, -1},
      {1, 512, 8192, 1, 80, DType::float16, true, 6.f, 1},
      {1, 600, 900, 2, 96, DType::float16, true, 40.f, 0},
      {1, 600, 900, 2, 160, DType::bfloat16, true, 40.f, -1},
  };
}

using SpreadParam = std::tuple<Backend, SpreadCase>;

class ForwardSpreadTest : public ::testing::TestWithParam<SpreadParam> {};

TEST_P(ForwardSpreadTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();

  HostTensor q(c.dtype, {c.b, c.sq, c.h, c.d});
  HostTensor k(c.dtype, {c.b, c.sk, c.h, c.d});
  HostTensor v(c.dtype, {c.b, c.sk, c.h, c.d});
  q.fill_normal(rng, c.q_stddev);
  k.fill_normal(rng);
  v.fill_normal(rng);
  if (c.key_trend != 0) {
    k.for_each_index([&](const std::int64_t* index) {
      const float position = static_cast<float>(index[1]) / static_cast<float>(c.sk);
      const float scale = 0.5f + 20.f * (c.key_trend > 0 ? position : 1.f - position);
      k.set(index, k.get(index) * scale);
    });
  }
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.d});  // poisoned
  HostTensor lse(DType::float32, {c.b, c.h, c.sq});

  auto build = [&](Binding& bind) {
    ForwardArgs a;
    a.q = bind.view(q);
    a.k = bind.view(k);
    a.v = bind.view(v);
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.options.causal = c.causal;
    return a;
  };

  expect_forward_matches(backend, c.dtype, build, out, lse, {{"q", &q}, {"k", &k}, {"v", &v}});
}

INSTANTIATE_TEST_SUITE_P(Spread, ForwardSpreadTest,
                         ::testing::Combine(::testing::ValuesIn(backends_under_test()),
                                            ::testing::ValuesIn(spread_cases())),
                         [](const ::testing::TestParamInfo<SpreadParam>& info) {
                           return sanitize_name(std::string(backend_name(std::get<0>(info.param))) + "_" +
                                                std::to_string(info.index) + "_" +
                                                std::get<1>(info.param).name());
                         });

// Shapes and options drawn afresh each run from the test's seed, on top of the hand-picked grid above
// (attention_cases.h draw_common): 1-3 sequences, lengths up to 9000, LSE or not.
ForwardCase draw_forward_case(Rng& rng, Backend backend) {
  DrawnCommon common = draw_common(rng, backend, true);
  ForwardCase c{};
  c.b = rng.integer(1, 3);
  c.sq = draw_length(rng, 9000);
  c.sk = rng.coin(0.3) ? c.sq : draw_length(rng, 9000);
  c.with_lse = rng.coin(0.8);
  fit_drawn_case(c, common, c.b, 1, c.sq, c.sk, drawn_case_cap(backend),
                 [&] { return static_cast<double>(c.b * common.h) * c.sq * c.sk * (common.d + common.dv); });
  return c;
}

class ForwardRandomTest : public ::testing::TestWithParam<RandomParam> {};

TEST_P(ForwardRandomTest, MatchesReference) {
  const Backend backend = std::get<0>(GetParam());
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_drawn_case(backend, draw_forward_case, check_forward_case);
}

// 24 drawn cases per CUDA backend, 8 on the CPU one (the GPU suites stay within gpu_check.sh's time limit;
// bench/integration/s33_random.sh runs several seeds).
INSTANTIATE_TEST_SUITE_P(Random, ForwardRandomTest, ::testing::ValuesIn(random_params(24, 8)),
                         random_param_name);

// cuda_sm90's static schedule (unmasked, one length for every sequence) claims no tile through its counter,
// so such a call sizes no workspace (and a caller allocates none: the suites above then run it without one),
// while the causal schedule's counter needs its own (so do per-sequence lengths and the split tail).
TEST(ForwardWorkspace, Sm90StaticScheduleNeedsNone) {
  FLASHATTN_SKIP_IF_UNAVAILABLE(Backend::cuda_sm90);
  HostTensor q(DType::bfloat16, {2, 512, 4, 128}), kv(DType::bfloat16, {2, 512, 4, 128});
  HostTensor out(DType::bfloat16, {2, 512, 4, 128});
  DeviceBinding device(Backend::cuda_sm90);
  ExecutionContext ctx;
  ctx.backend = Backend::cuda_sm90;
  auto bytes_for = [&](const HostTensor& query, const HostTensor& keys, const HostTensor& o, bool causal) {
    ForwardArgs a;
    a.q = device.view(query);
    a.k = device.view(keys);
    a.v = device.view(keys);
    a.out = device.view(o);
    a.options.causal = causal;
    std::size_t bytes = 0;
    const Status status = workspace_size(a, ctx, &bytes);
    EXPECT_TRUE(status.ok() || status.code() == ErrorCode::unsupported) << status.message();
    return status.ok() ? static_cast<long long>(bytes) : -1;
  };
  const long long unmasked = bytes_for(q, kv, out, false);
  if (unmasked < 0) GTEST_SKIP() << "cuda_sm90 d128 bf16 not compiled";
  EXPECT_EQ(unmasked, 0);
  EXPECT_GT(bytes_for(q, kv, out, true), 0) << "the dynamic schedule's counter";
  // A decode step of few tiles (GQA 32/8, one sequence: 8 packed tiles) splits its keys (split_kv_plan.h):
  // the static schedule then needs the pieces' arrival counters and records.
  HostTensor q1(DType::bfloat16, {1, 1, 32, 128}), kv1(DType::bfloat16, {1, 4096, 8, 128});
  HostTensor out1(DType::bfloat16, {1, 1, 32, 128});
  EXPECT_GE(bytes_for(q1, kv1, out1, false), 8 * 2 * 4 * 129 * 4) << "8 tiles, at least 2 pieces of 4 rows";
#if FLASHATTN_WITH_CUDA
  // d = 96 decodes on the d = 128 kernel, whose pieces record 128 columns per row (split_kv_shape): MHA with
  // 32 heads over 4096 keys is 32 tiles of one row, each in one wave's share of pieces of its 32 key blocks.
  HostTensor q96(DType::bfloat16, {1, 1, 32, 96}), kv96(DType::bfloat16, {1, 4096, 32, 96});
  HostTensor out96(DType::bfloat16, {1, 1, 32, 96});
  int ordinal = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&ordinal), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal), cudaSuccess);
  const int pieces = detail::cuda_sm90::split_kv_count(32, 32, sms, 0);
  const long long d96 = bytes_for(q96, kv96, out96, false);
  const long long records = 32LL * pieces * (128 + 4) * 4;
  EXPECT_TRUE(d96 < 0 || d96 >= records)
      << d96 << " bytes: records of the kernel's 128 columns need " << records;
  // More than two tiles a SM (3 sequences past them; GQA 32/8 over 4096 keys): the kernel of one CTA a SM
  // (forward_dispatch.h decode_ctas_per_sm) and the records of its last round's split tiles (split_kv_tail).
  const int batch = 2 * sms / 8 + 3;
  const int tiles = 8 * batch;
  HostTensor qb(DType::bfloat16, {batch, 1, 32, 128}), kvb(DType::bfloat16, {batch, 4096, 8, 128});
  HostTensor outb(DType::bfloat16, {batch, 1, 32, 128});
  const detail::cuda_sm90::SplitKVTail tail =
      detail::cuda_sm90::split_kv_tail(tiles, 4096 / 128, sms, 0, 4 * 128, 128 * (128 + 128) * 2);
  const long long tail_bytes = bytes_for(qb, kvb, outb, false);
  const long long tail_records =
      static_cast<long long>(tiles - tail.whole_tiles) * tail.splits * (4 * 128 + 4) * 4;
  EXPECT_GT(tail.splits, 1) << tiles << " tiles";
  EXPECT_TRUE(tail_bytes < 0 || tail_bytes >= tail_records)
      << tail_bytes << " bytes: the split tail's records need " << tail_records;
#endif
}

// The harness itself: a result that is slightly wrong (scale off by 1%, one element
// left poisoned, one padding element written) must be caught, or the suites above
// prove nothing.
TEST(ForwardHarness, CatchesSmallErrors) {
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  HostTensor q(DType::float16, {1, 64, 2, 64}, Layout::padded), k(DType::float16, {1, 80, 2, 64}),
      v(DType::float16, {1, 80, 2, 64});
  q.fill_normal(rng);
  k.fill_normal(rng);
  v.fill_normal(rng);
  HostTensor out(DType::float16, {1, 64, 2, 64}, Layout::padded);
  auto build = [&](Binding& bind, float scale) {
    ForwardArgs a;
    a.q = bind.view(q);
    a.k = bind.view(k);
    a.v = bind.view(v);
    a.out = bind.view(out);
    a.options.softmax_scale = scale;
    return a;
  };
  const float scale = 0.125f;
  DeviceBinding device(Backend::cpu_tiled);
  ASSERT_TRUE(run_on(Backend::cpu_tiled, build(device, scale * 1.01f)).ok());
  auto build_exact = [&](Binding& bind) { return build(bind, scale); };
  const ReferenceBinding ref = reference(build_exact);
  const ReferenceBinding lowp = reference_lowp(build_exact, DType::float16);
  const Tolerance tol{2.0, output_atol(DType::float16)};
  EXPECT_FALSE(expect_close("out", device.fetch(out), out, ref.result(out), lowp.result(out), tol));

  // The right result passes, and then fails once one element keeps its poison or padding is written.
  DeviceBinding exact(Backend::cpu_tiled);
  ASSERT_TRUE(run_on(Backend::cpu_tiled, build(exact, scale)).ok());
  HostTensor result = exact.fetch(out);
  EXPECT_TRUE(expect_close("out", result, out, ref.result(out), lowp.result(out), tol));
  HostTensor poisoned = result;
  poisoned.poison_leading(0, 1);
  EXPECT_FALSE(expect_close("out", poisoned, out, ref.result(out), lowp.result(out), tol));
  HostTensor padding_written = result;
  reinterpret_cast<std::uint16_t*>(padding_written.storage())[HostTensor::kGuard + 64] = 0;  // head padding
  EXPECT_FALSE(expect_close("out", padding_written, out, ref.result(out), lowp.result(out), tol));
}

INSTANTIATE_TEST_SUITE_P(Grid, ForwardTest,
                         ::testing::Combine(::testing::ValuesIn(backends_under_test()),
                                            ::testing::ValuesIn(forward_cases())),
                         forward_param_name);

}  // namespace
}  // namespace flashattn::test
