// Forward over a KV cache (decoding, chunked prefill), every backend against the
// float64 reference.
//
// Axes: dense and paged caches (page sizes 1, 3, 16, 256, shuffled block tables),
// appended k/v or not, cache_batch_idx (dense), left padding, rotary (interleaved
// and GPT-NeoX, rotary_dim = d and < d), num_splits 1 / heuristic / 3, every mask
// kind, softcap, ALiBi, sink, dtypes, head dims, MHA/GQA/MQA, layouts.
//
// Besides out and LSE, the cache itself is checked after the call: appended v rows
// equal v_new exactly, appended k rows equal the (rotated) k_new within the rounding
// of the cache dtype, and every other cache element is bitwise unchanged. Cache
// positions that hold no key (before leftpad, after cache_seqlens, blocks nobody
// owns) are poisoned with NaN, so reading them shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "support/attention_cases.h"
#include "support/oracle.h"
#include "support/test_support.h"

namespace flashattn::test {
namespace {

enum class Rotary { none, interleaved, neox };

struct KVCacheCase {
  std::int64_t b, sq, sk, h, hk, d, dv;  // sk: keys of the longest sequence after the append
  DType dtype;
  Features features = {};
  Layout layout = Layout::contiguous;
  bool append = true;
  Rotary rotary = Rotary::none;
  bool partial_rotary = false;  // rotary_dim = d / 2 instead of d
  std::int64_t page_size = 0;   // 0: dense cache
  bool batch_idx = false;       // dense only
  bool leftpad = false;
  int num_splits = 1;

  std::string name() const {
    std::string rot = rotary == Rotary::none ? "" : rotary == Rotary::interleaved ? "_ropeGPTJ" : "_ropeNeoX";
    if (rotary != Rotary::none && partial_rotary) rot += "half";
    return std::to_string(sq) + "x" + std::to_string(sk) + "_b" + std::to_string(b) + "_" +
           heads_label(h, hk) + "_d" + std::to_string(d) + (dv != d ? "_dv" + std::to_string(dv) : "") + "_" +
           dtype_label(dtype) + "_" + features_label(features) + "_" + layout_name(layout) +
           (append ? "_append" : "") + rot + (page_size ? "_page" + std::to_string(page_size) : "") +
           (batch_idx ? "_batchidx" : "") + (leftpad ? "_leftpad" : "") + "_splits" +
           std::to_string(num_splits);
  }
};

std::vector<KVCacheCase> kvcache_cases() {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{1, 1},     {1, 239}, {113, 203},
                                                                     {128, 217}, {239, 1}, {799, 3}};
  AxisCycle<std::int64_t> dims({8, 40, 64, 72, 96, 128, 192, 256}, 41);
  AxisCycle<DType> dtypes({DType::float16, DType::bfloat16, DType::float32}, 42);
  AxisCycle<std::pair<std::int64_t, std::int64_t>> heads({{4, 4}, {6, 2}, {3, 1}}, 43);
  AxisCycle<MaskKind> masks({MaskKind::none, MaskKind::causal, MaskKind::local, MaskKind::left_only,
                             MaskKind::right_only, MaskKind::causal_left},
                            44);
  AxisCycle<float> softcaps({0.f, 0.f, 1.5f}, 45);
  AxisCycle<AlibiKind> alibis(
      {AlibiKind::none, AlibiKind::per_head, AlibiKind::none, AlibiKind::per_batch_head}, 46);
  AxisCycle<bool> sinks({false, false, true}, 47);
  AxisCycle<Layout> layouts({Layout::contiguous, Layout::padded, Layout::heads_major}, 48);
  AxisCycle<std::int64_t> pages({0, 0, 1, 3, 16, 256}, 49);
  AxisCycle<Rotary> rotaries({Rotary::none, Rotary::interleaved, Rotary::neox}, 50);
  AxisCycle<bool> partials({false, true}, 51);
  AxisCycle<bool> batch_idxs({false, true}, 52);
  AxisCycle<bool> leftpads({false, true}, 53);
  AxisCycle<int> splits({1, 0, 3}, 54);
  AxisCycle<bool> appends({true, true, false}, 55);

  std::vector<KVCacheCase> cases;
  for (int round = 0; round < 4; ++round) {
    for (auto [sq, sk] : shapes) {
      KVCacheCase c{};
      c.b = 3;
      c.sq = sq;
      c.sk = sk;
      std::tie(c.h, c.hk) = heads.next();
      c.d = dims.next();
      c.dv = round == 2 ? (c.d == 96 ? 64 : 96) : c.d;
      c.dtype = dtypes.next();
      c.features = {masks.next(), softcaps.next(), alibis.next(), 0.f, sinks.next(), false};
      c.layout = layouts.next();
      c.page_size = pages.next();
      c.append = appends.next() && sq <= sk;  // the new keys are the queries' own tokens
      c.rotary = c.append ? rotaries.next() : Rotary::none;
      c.partial_rotary = partials.next();
      c.batch_idx = c.page_size == 0 && batch_idxs.next();
      c.leftpad = leftpads.next();
      c.num_splits = splits.next();
      cases.push_back(c);
    }
  }
  // One query row over grouped K/V heads without a mask, ALiBi or sink: cuda_sm80 runs the group's heads as
  // the rows of one tile (backend.cu groups_as_rows), a view whose strides these layouts, pages, the append
  // with rotary (rotated at the row's position before the view) and the split partials all go through.
  // The cases as rows of a table (one to three lines each), not a field a line.
  // clang-format off
  cases.push_back({.b = 3, .sq = 1, .sk = 700, .h = 8, .hk = 2, .d = 64, .dv = 64, .dtype = DType::bfloat16,
                   .layout = Layout::padded, .rotary = Rotary::interleaved, .partial_rotary = true,
                   .batch_idx = true, .leftpad = true, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 1, .sk = 1500, .h = 6, .hk = 3, .d = 256, .dv = 256, .dtype = DType::float16,
                   .features = {MaskKind::causal, 1.5f}, .layout = Layout::heads_major, .append = false,
                   .page_size = 3, .num_splits = 3});
  // Long caches: split-KV decoding and a chunked prefill.
  cases.push_back({.b = 2, .sq = 1, .sk = 2048, .h = 4, .hk = 1, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .rotary = Rotary::neox, .page_size = 16, .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 2048, .h = 2, .hk = 2, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .append = false, .leftpad = true, .num_splits = 8});
  cases.push_back({.b = 1, .sq = 1023, .sk = 1024, .h = 2, .hk = 1, .d = 64, .dv = 64,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .layout = Layout::padded,
                   .rotary = Rotary::interleaved, .partial_rotary = true, .page_size = 256, .num_splits = 3});
  // Dense caches on the Hopper path: packed GQA (decoding and a chunked prefill), append with
  // rotary, cache_batch_idx and leftpad, d = 96 and (64, 512).
  cases.push_back({.b = 3, .sq = 1, .sk = 799, .h = 8, .hk = 2, .d = 128, .dv = 128, .dtype = DType::bfloat16,
                   .features = {MaskKind::none}, .rotary = Rotary::neox, .batch_idx = true, .leftpad = true,
                   .num_splits = 0});
  cases.push_back({.b = 2, .sq = 17, .sk = 239, .h = 16, .hk = 4, .d = 128, .dv = 128,
                   .dtype = DType::float16, .features = {MaskKind::causal}, .layout = Layout::padded,
                   .rotary = Rotary::interleaved, .partial_rotary = true, .leftpad = true});
  cases.push_back({.b = 3, .sq = 40, .sk = 203, .h = 8, .hk = 1, .d = 64, .dv = 64, .dtype = DType::bfloat16,
                   .features = {MaskKind::causal_left}, .layout = Layout::heads_major, .append = false,
                   .batch_idx = true, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 3, .sk = 300, .h = 4, .hk = 2, .d = 96, .dv = 96, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .rotary = Rotary::neox, .leftpad = true, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 1, .sk = 217, .h = 8, .hk = 2, .d = 64, .dv = 512, .dtype = DType::bfloat16,
                   .features = {MaskKind::none}, .layout = Layout::padded, .batch_idx = true});
  // Decoding on cuda_sm90's one-consumer 64-row tiles (forward_config.h use_single_consumer): a paged
  // cache read in 128-row boxes with a ragged end, and four speculative queries per sequence (16 packed
  // rows, causal) appended with rotary into pages of 64.
  cases.push_back({.b = 3, .sq = 1, .sk = 1500, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::none}, .append = false, .page_size = 256,
                   .num_splits = 0});
  cases.push_back({.b = 2, .sq = 4, .sk = 700, .h = 8, .hk = 2, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .layout = Layout::padded, .rotary = Rotary::neox,
                   .page_size = 64});
  // Paged caches with packed GQA: pages smaller than, equal to and larger than a key block.
  cases.push_back({.b = 3, .sq = 1, .sk = 799, .h = 8, .hk = 2, .d = 128, .dv = 128, .dtype = DType::bfloat16,
                   .features = {MaskKind::none}, .page_size = 16, .leftpad = true, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 33, .sk = 530, .h = 16, .hk = 4, .d = 64, .dv = 64, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .layout = Layout::padded, .rotary = Rotary::neox,
                   .page_size = 256});
  cases.push_back({.b = 2, .sq = 5, .sk = 300, .h = 4, .hk = 1, .d = 256, .dv = 256, .dtype = DType::bfloat16,
                   .features = {MaskKind::causal_left}, .layout = Layout::heads_major, .page_size = 3,
                   .leftpad = true, .num_splits = 0});
  // Paged caches read by cuda_sm90 as TMA boxes smaller than a key block (forward_launch.h
  // paged_box_rows): pages of 48 (16-row boxes, 8 per 128-key block), 192 (64-row boxes, blocks
  // across pages) at d = 128, pages of 256 at d = 256 (80-key blocks, 16-row boxes across pages),
  // 192 at d = 64 (the two-consumer kernel); leftpad 1..7 sends a sequence's blocks to the gather.
  cases.push_back({.b = 3, .sq = 64, .sk = 1000, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::float16, .features = {MaskKind::causal}, .layout = Layout::padded,
                   .page_size = 48});
  cases.push_back({.b = 2, .sq = 77, .sk = 900, .h = 4, .hk = 4, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::none}, .page_size = 192,
                   .leftpad = true});
  cases.push_back({.b = 2, .sq = 33, .sk = 1100, .h = 4, .hk = 2, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::local}, .layout = Layout::heads_major,
                   .append = false, .page_size = 256});
  cases.push_back({.b = 3, .sq = 300, .sk = 800, .h = 4, .hk = 1, .d = 64, .dv = 64, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .page_size = 192});
  // Chunked prefills at d <= 96 (cuda_sm90's narrowed GEMMs on d = 128's kernels, forward_config.h
  // narrowed_gemm_dim): paged (16-row boxes and the gather) and dense with an append and rotary.
  cases.push_back({.b = 2, .sq = 77, .sk = 900, .h = 4, .hk = 2, .d = 80, .dv = 80, .dtype = DType::bfloat16,
                   .features = {MaskKind::causal}, .page_size = 48, .leftpad = true});
  cases.push_back({.b = 2, .sq = 40, .sk = 500, .h = 8, .hk = 2, .d = 96, .dv = 96, .dtype = DType::float16,
                   .features = {MaskKind::none}, .layout = Layout::padded, .rotary = Rotary::neox,
                   .partial_rotary = true});
  // Split-KV on cuda_sm90's decode kernel (split_kv.h): pieces of each tile's key blocks combined by the last
  // one to finish. MQA packed 8 to a tile over pages of 64 with an append, NeoX rotary and left padding (8
  // pieces of the sequence's own blocks, shorter than the cache's 24); MHA with a sink, softcap and a local
  // window (most pieces see no key: O 0, LSE -inf, weighed 0) asking for 7 splits; causal ALiBi over two
  // speculative queries in pages of 16 (24 unpacked tiles: 5 pieces); 200 splits asked of 8 key blocks; and
  // four speculative queries over GQA groups of 8 (32 packed rows) in pages of 32; the d = 256 decode kernel
  // (80-key blocks) with softcap and a local window in pages of 16, and dense with an append and GPT-J
  // rotary; the d = 64 one with a sink (unpacked MHA rows); d = 96 (MHA, on the d = 128 kernel) with an
  // append and half NeoX rotary.
  cases.push_back({.b = 1, .sq = 1, .sk = 3000, .h = 8, .hk = 1, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::none}, .rotary = Rotary::neox,
                   .page_size = 64, .leftpad = true, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 1, .sk = 2500, .h = 4, .hk = 4, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::local, 1.5f, AlibiKind::none, 0.f, true}, .layout = Layout::padded,
                   .append = false, .batch_idx = true, .num_splits = 7});
  cases.push_back({.b = 3, .sq = 2, .sk = 1800, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal, 0.f, AlibiKind::per_head},
                   .layout = Layout::heads_major, .append = false, .page_size = 16, .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 1000, .h = 4, .hk = 2, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::none}, .rotary = Rotary::interleaved, .partial_rotary = true,
                   .num_splits = 200});
  cases.push_back({.b = 2, .sq = 4, .sk = 2200, .h = 16, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .page_size = 32,
                   .num_splits = 0});
  cases.push_back({.b = 2, .sq = 1, .sk = 2000, .h = 16, .hk = 8, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::local, 1.5f}, .append = false,
                   .page_size = 16, .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 3100, .h = 8, .hk = 4, .d = 256, .dv = 256, .dtype = DType::float16,
                   .features = {MaskKind::none}, .layout = Layout::padded, .rotary = Rotary::interleaved,
                   .leftpad = true, .num_splits = 6});
  cases.push_back({.b = 1, .sq = 1, .sk = 2600, .h = 4, .hk = 4, .d = 64, .dv = 64, .dtype = DType::bfloat16,
                   .features = {MaskKind::none, 0.f, AlibiKind::none, 0.f, true},
                   .layout = Layout::heads_major, .append = false, .batch_idx = true, .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 2700, .h = 32, .hk = 32, .d = 96, .dv = 96, .dtype = DType::float16,
                   .features = {MaskKind::none}, .layout = Layout::padded, .rotary = Rotary::neox,
                   .partial_rotary = true, .num_splits = 0});
  // cuda_sm90's narrow decode tile (decode_consumer.h: at most 8 packed rows, keys as the wgmma's M) and its
  // edge: two speculative queries over GQA groups of 4 (8 rows, causal) appended with NeoX rotary into pages
  // of 64; an MQA group of 8 with softcap and a local window over left padding in 5 splits; d = 64 MHA with
  // ALiBi over two causal speculative queries in pages of 16; d = 96 (on the d = 128 kernel) with a sink and
  // cache_batch_idx; 9 packed rows (three queries of groups of 3), which the 64-row tile takes, at d = 128
  // and as nine MHA queries at d = 64.
  cases.push_back({.b = 2, .sq = 2, .sk = 1500, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .layout = Layout::padded,
                   .rotary = Rotary::neox, .page_size = 64, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 1, .sk = 3000, .h = 8, .hk = 1, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::local, 1.5f}, .append = false, .leftpad = true, .num_splits = 5});
  cases.push_back({.b = 3, .sq = 2, .sk = 900, .h = 4, .hk = 4, .d = 64, .dv = 64, .dtype = DType::bfloat16,
                   .features = {MaskKind::causal, 0.f, AlibiKind::per_head}, .layout = Layout::heads_major,
                   .rotary = Rotary::interleaved, .page_size = 16, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 1, .sk = 1200, .h = 6, .hk = 2, .d = 96, .dv = 96, .dtype = DType::float16,
                   .features = {MaskKind::none, 0.f, AlibiKind::none, 0.f, true}, .append = false,
                   .batch_idx = true, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 3, .sk = 400, .h = 9, .hk = 3, .d = 128, .dv = 128, .dtype = DType::bfloat16,
                   .features = {MaskKind::causal}, .layout = Layout::padded, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 9, .sk = 400, .h = 2, .hk = 2, .d = 64, .dv = 64, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .num_splits = 0});
  // The narrow tile at d = 256 (64-key blocks where the 64-row tile has 80): two speculative queries over GQA
  // groups of 4 (8 rows, causal) appended with NeoX rotary into pages of 64 (one box per block); an MQA group
  // of 8 with softcap and a local window over left padding in 5 splits; MHA rows with a sink in pages of 16;
  // and 9 packed rows, which the 64-row tile takes.
  cases.push_back({.b = 2, .sq = 2, .sk = 1500, .h = 8, .hk = 2, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .layout = Layout::padded,
                   .rotary = Rotary::neox, .page_size = 64, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 1, .sk = 2900, .h = 8, .hk = 1, .d = 256, .dv = 256, .dtype = DType::float16,
                   .features = {MaskKind::local, 1.5f}, .append = false, .leftpad = true, .num_splits = 5});
  cases.push_back({.b = 1, .sq = 1, .sk = 1300, .h = 4, .hk = 4, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::none, 0.f, AlibiKind::none, 0.f, true},
                   .layout = Layout::heads_major, .append = false, .page_size = 16, .num_splits = 0});
  cases.push_back({.b = 2, .sq = 3, .sk = 400, .h = 9, .hk = 3, .d = 256, .dv = 256, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .layout = Layout::padded, .rotary = Rotary::interleaved,
                   .num_splits = 0});
  // cuda_sm90's narrow decode tile reading the lengths itself (forward_config.h CACHE_LENGTHS): a dense cache
  // in one piece per tile (its map covers every row of the cache: the rows past a sequence's end, NaN here,
  // zeroed in V's stage by the consumer); paged, pages of 32, one piece of many blocks (the tail's V rows
  // zeroed by the producer after the next block's loads: producer.h fix_tail); paged with a leftpad, an
  // append and the automatic split.
  cases.push_back({.b = 2, .sq = 1, .sk = 2500, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .append = false});
  cases.push_back({.b = 2, .sq = 1, .sk = 2300, .h = 16, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::float16, .layout = Layout::padded, .append = false, .page_size = 32});
  cases.push_back({.b = 3, .sq = 1, .sk = 1700, .h = 8, .hk = 2, .d = 64, .dv = 64, .dtype = DType::bfloat16,
                   .rotary = Rotary::neox, .page_size = 16, .leftpad = true, .num_splits = 0});
  // cuda_sm90's split pieces of a tile as one cluster (forward_config.h CLUSTER_COMBINE: each row of the
  // records sent by st.async to its owner in the cluster): a dense cache in the automatic 8 pieces with a
  // sink and softcap (the combine's sink term); paged, 8-row tiles (two float4 units per combining thread) in
  // 5 pieces with an append (the cluster launch after the prepare kernel); 12 pieces (a cluster above the
  // portable size of 8).
  cases.push_back({.b = 2, .sq = 1, .sk = 3000, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::none, 30.f, AlibiKind::none, 0.f, true},
                   .append = false, .num_splits = 0});
  const KVCacheCase dense_with_sink = cases.back();
  cases.push_back({.b = 2, .sq = 1, .sk = 1500, .h = 16, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::float16, .features = {MaskKind::causal}, .layout = Layout::heads_major,
                   .rotary = Rotary::neox, .page_size = 16, .num_splits = 5});
  cases.push_back({.b = 1, .sq = 1, .sk = 2000, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .layout = Layout::padded, .append = false, .page_size = 64,
                   .num_splits = 12});
  // Clusters of up to 16 pieces: one K/V head of 8-row tiles (their slots hold 15 pieces at d = 128) with an
  // append and GPT-J rotary, in the automatic count; d = 256 tiles of 2 rows (15 pieces fit); 20 pieces, more
  // than a cluster holds (the arrival counter's combine).
  cases.push_back({.b = 1, .sq = 1, .sk = 4000, .h = 8, .hk = 1, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .rotary = Rotary::interleaved, .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 3000, .h = 16, .hk = 8, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::none, 30.f}, .append = false,
                   .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 3000, .h = 8, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .layout = Layout::padded, .append = false, .page_size = 64,
                   .num_splits = 20});
  // Two levels (several clusters of 8 a tile, each combined into one record, the records through L2): the
  // dense cache with a sink and softcap above in 24 pieces asked (the sink counted once, by the tile's
  // combine); one K/V head over 40000 keys in pages of 64 with an append, the automatic count (72 pieces);
  // d = 64 in 32 pieces under a local window (whole clusters of pieces that see no key: records of LSE -inf).
  KVCacheCase two_levels = dense_with_sink;
  two_levels.num_splits = 24;
  cases.push_back(two_levels);
  cases.push_back({.b = 1, .sq = 1, .sk = 40000, .h = 8, .hk = 1, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .page_size = 64,
                   .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 5000, .h = 8, .hk = 1, .d = 64, .dv = 64, .dtype = DType::float16,
                   .features = {MaskKind::local}, .layout = Layout::heads_major, .append = false,
                   .num_splits = 32});
  // Combines whose rows take several float4 units a thread (decode_consumer.h sum_pieces, session 52): d =
  // 256 tiles of 8 rows (four units) in the automatic count; 6 rows at d = 128 (the second unit held by 64 of
  // the 128 threads) in 20 pieces, three rounds through L2; 6 rows at d = 256 (three of four units) in 7
  // pieces, with a sink and softcap, pages of 16.
  cases.push_back({.b = 1, .sq = 1, .sk = 2500, .h = 8, .hk = 1, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .append = false,
                   .num_splits = 0});
  cases.push_back({.b = 1, .sq = 1, .sk = 3000, .h = 6, .hk = 1, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::local}, .rotary = Rotary::neox, .num_splits = 20});
  cases.push_back({.b = 2, .sq = 1, .sk = 1500, .h = 12, .hk = 2, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::none, 20.f, AlibiKind::none, 0.f, true},
                   .layout = Layout::padded, .append = false, .page_size = 16, .num_splits = 7});
  // Rows summed by their owners in the cluster (decode_consumer.h row_owner, session 53: row j by the CTA of
  // rank j where the cluster has a CTA per row, else every row by the first) and stored into O directly: 8
  // rows (two query positions of a group of 4, causal) over a cluster of 3, the first CTA owning them all; 2
  // rows over clusters of 8 in two levels (24 pieces), six of each cluster's CTAs owning none.
  cases.push_back({.b = 2, .sq = 2, .sk = 1200, .h = 8, .hk = 2, .d = 128, .dv = 128, .dtype = DType::float16,
                   .features = {MaskKind::causal}, .num_splits = 3});
  cases.push_back({.b = 1, .sq = 1, .sk = 20000, .h = 2, .hk = 1, .d = 64, .dv = 64, .dtype = DType::bfloat16,
                   .append = false, .num_splits = 24});
  // d = 256 tiles of 8 rows, whose whole records a CTA's slots hold 3 of, on clusters of one row a slot
  // (ForwardConfig cluster_slots, session 53): the automatic count over 9000 keys (two levels of 7 clusters
  // of 8); the 2500-key case above takes one cluster of 8, and the 6-row one in 7 pieces one cluster of 7.
  cases.push_back({.b = 1, .sq = 1, .sk = 9000, .h = 8, .hk = 1, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .num_splits = 0});
  // More tiles than the SMs (132 on an H100 / H200), fewer than two a SM: on cuda_sm90 the narrow tile at
  // d <= 128 runs its kernel of two CTAs a SM (forward_config.h TWO_CTAS_PER_SM), every tile at once; the
  // others split the tiles past their whole round (split_kv_plan.h split_kv_tail; SplitKV whole_tiles), the
  // rest stored by their own CTAs on the dynamic schedule of the cache's lengths. GQA 32/8 over 17 sequences
  // with an append (136 tiles); 20 sequences in pages of 64 with a sink and softcap; MHA d = 64 rows over 25
  // sequences (200 tiles) in a local window over left padding; d = 256 causal over 17 sequences (split);
  // groups of 16 on the 64-row tile (70 sequences, 140 tiles; split).
  cases.push_back({.b = 17, .sq = 1, .sk = 1500, .h = 32, .hk = 8, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::none}, .num_splits = 0});
  cases.push_back({.b = 20, .sq = 1, .sk = 2600, .h = 16, .hk = 8, .d = 128, .dv = 128,
                   .dtype = DType::float16, .features = {MaskKind::none, 30.f, AlibiKind::none, 0.f, true},
                   .append = false, .page_size = 64, .num_splits = 0});
  cases.push_back({.b = 25, .sq = 1, .sk = 900, .h = 8, .hk = 8, .d = 64, .dv = 64, .dtype = DType::bfloat16,
                   .features = {MaskKind::local}, .layout = Layout::padded, .append = false, .leftpad = true,
                   .num_splits = 0});
  cases.push_back({.b = 17, .sq = 1, .sk = 1200, .h = 16, .hk = 8, .d = 256, .dv = 256,
                   .dtype = DType::bfloat16, .features = {MaskKind::causal}, .num_splits = 0});
  cases.push_back({.b = 70, .sq = 1, .sk = 700, .h = 32, .hk = 2, .d = 128, .dv = 128,
                   .dtype = DType::float16, .features = {MaskKind::none}, .append = false, .num_splits = 0});
  // Groups of 4 in pages of 16 (gathered boxes) on the kernel of two CTAs a SM (160 tiles).
  cases.push_back({.b = 20, .sq = 1, .sk = 1300, .h = 32, .hk = 8, .d = 128, .dv = 128,
                   .dtype = DType::float16, .features = {MaskKind::none}, .append = false, .page_size = 16,
                   .num_splits = 0});
  // More tiles than two a SM (264 on an H100 / H200: past them cuda_sm90's kernel of one CTA a SM,
  // forward_dispatch.h decode_ctas_per_sm): two whole rounds, then the last round's tiles split, on the
  // dynamic schedule. GQA 32/8 d = 128 over 36 sequences with an append (288 tiles); d = 64 16/8 over 34
  // sequences in pages of 16 (272 tiles).
  cases.push_back({.b = 36, .sq = 1, .sk = 1000, .h = 32, .hk = 8, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::none}, .num_splits = 0});
  cases.push_back({.b = 34, .sq = 1, .sk = 900, .h = 16, .hk = 8, .d = 64, .dv = 64, .dtype = DType::float16,
                   .features = {MaskKind::none}, .append = false, .page_size = 16, .num_splits = 0});
  // MHA in pages of 64 over 12 sequences: 384 tiles, so CTAs of the kernel of one CTA a SM run three items
  // and more through one Q buffer, ring and tile handoff (the paged producer's phases over several tiles).
  cases.push_back({.b = 12, .sq = 1, .sk = 700, .h = 32, .hk = 32, .d = 128, .dv = 128,
                   .dtype = DType::bfloat16, .features = {MaskKind::none}, .append = false, .page_size = 64,
                   .num_splits = 0});
  // Pages of an odd multiple of 8 rows: boxes of 8 rows, so 32 a key block on d64's narrow kernel (256-key
  // blocks, forward_config.h NARROW_D64_BLOCK_N: every lane of the producer warp; with an append) and 16 on
  // d128's; sequences ending inside a page, and the split pieces of a small batch.
  struct OddPages {
    std::int64_t d;
    DType dtype;
    bool append;
    std::int64_t page_size;
  };
  for (const OddPages& o :
       {OddPages{64, DType::bfloat16, true, 24}, OddPages{128, DType::float16, false, 40}}) {
    cases.push_back({.b = 3, .sq = 1, .sk = 1000, .h = 32, .hk = 8, .d = o.d, .dv = o.d, .dtype = o.dtype,
                     .features = {MaskKind::none}, .append = o.append, .page_size = o.page_size,
                     .num_splits = 0});
  }
  // clang-format on
  return cases;
}

// The check of both suites below: case `c` on `backend` (an unsupported CUDA case skips), its out, lse and
// the cache's appended rows against the float64 reference, every input and the rest of the cache unchanged.
void check_kvcache_case(Backend backend, const KVCacheCase& c, Rng& rng) {
  const std::int64_t s_new = c.append ? c.sq : 0;
  // Per sequence: left padding, keys already cached, their end (cache_seqlens).
  std::vector<std::int64_t> pad(c.b), old_keys(c.b), cache_end(c.b);
  for (std::int64_t s = 0; s < c.b; ++s) {
    pad[s] = c.leftpad ? rng.integer(0, 7) : 0;
    old_keys[s] = s == 0 ? c.sk - s_new : rng.integer(0, c.sk - s_new);
    cache_end[s] = pad[s] + old_keys[s];
  }
  std::int64_t capacity = 0;
  for (std::int64_t s = 0; s < c.b; ++s) capacity = std::max(capacity, cache_end[s] + s_new);
  capacity += rng.integer(0, 5);  // room nobody uses
  capacity = std::max<std::int64_t>(capacity, 1);
  // Without an append or leftpad, cache_seqlens may be omitted when every sequence fills the cache.
  const bool omit_seqlens = !c.append && !c.leftpad && c.page_size == 0 && c.b > 0 && rng.coin(0.3);
  if (omit_seqlens) {
    capacity = c.sk;
    for (std::int64_t s = 0; s < c.b; ++s) cache_end[s] = old_keys[s] = c.sk;
  }

  // Where sequence s's cache position p lives: (cache row or block, row in it).
  HostTensor block_table, batch_idx;
  std::int64_t cache_rows = c.b;     // dense: b_cache; paged: num_blocks
  std::int64_t rows_per = capacity;  // dense: s_cache; paged: page_size
  if (c.page_size > 0) {
    const std::int64_t blocks = (capacity + c.page_size - 1) / c.page_size;
    cache_rows = c.b * blocks + 1;  // one block nobody owns
    rows_per = c.page_size;
    std::vector<std::int32_t> physical(cache_rows);
    std::iota(physical.begin(), physical.end(), 0);
    std::shuffle(physical.begin(), physical.end(), rng.engine());
    block_table = HostTensor(DType::int32, {c.b, blocks});
    for (std::int64_t s = 0; s < c.b; ++s) {
      for (std::int64_t slot = 0; slot < blocks; ++slot)
        block_table.set_int({s, slot}, physical[s * blocks + slot]);
    }
  } else if (c.batch_idx) {
    cache_rows = c.b + 2;
    std::vector<std::int32_t> rows(cache_rows);
    std::iota(rows.begin(), rows.end(), 0);
    std::shuffle(rows.begin(), rows.end(), rng.engine());
    batch_idx = HostTensor(DType::int32, {c.b});
    for (std::int64_t s = 0; s < c.b; ++s) batch_idx.set_int({s}, rows[s]);
  }
  auto locate = [&](std::int64_t s, std::int64_t position) -> std::pair<std::int64_t, std::int64_t> {
    if (c.page_size > 0) return {block_table.get_int({s, position / c.page_size}), position % c.page_size};
    return {c.batch_idx ? batch_idx.get_int({s}) : s, position};
  };

  // The cache: keys at [pad, cache_end) of each sequence random, everything else poisoned.
  HostTensor k_cache(c.dtype, {cache_rows, rows_per, c.hk, c.d}, c.layout);
  HostTensor v_cache(c.dtype, {cache_rows, rows_per, c.hk, c.dv}, c.layout);
  for (std::int64_t s = 0; s < c.b; ++s) {
    for (std::int64_t p = pad[s]; p < cache_end[s]; ++p) {
      const auto [row, pos] = locate(s, p);
      for (std::int64_t hh = 0; hh < c.hk; ++hh) {
        for (std::int64_t e = 0; e < c.d; ++e) k_cache.set({row, pos, hh, e}, rng.normal());
        for (std::int64_t e = 0; e < c.dv; ++e) v_cache.set({row, pos, hh, e}, rng.normal());
      }
    }
  }
  auto int_tensor = [&](const std::vector<std::int64_t>& values) {
    HostTensor t(DType::int32, {c.b});
    for (std::int64_t s = 0; s < c.b; ++s) t.set_int({s}, static_cast<std::int32_t>(values[s]));
    return t;
  };
  const HostTensor cache_seqlens = omit_seqlens ? HostTensor() : int_tensor(cache_end);
  const HostTensor leftpad = c.leftpad ? int_tensor(pad) : HostTensor();

  HostTensor q(c.dtype, {c.b, c.sq, c.h, c.d}, c.layout);
  q.fill_normal(rng);
  HostTensor k_new, v_new, rotary_cos, rotary_sin;
  if (c.append) {
    k_new = HostTensor(c.dtype, {c.b, s_new, c.hk, c.d}, c.layout);
    v_new = HostTensor(c.dtype, {c.b, s_new, c.hk, c.dv}, c.layout);
    k_new.fill_normal(rng);
    v_new.fill_normal(rng);
  }
  if (c.rotary != Rotary::none) {
    const std::int64_t rotary_dim = c.partial_rotary ? std::max<std::int64_t>(2, c.d / 2 / 2 * 2) : c.d;
    const std::int64_t positions = capacity + 3;
    rotary_cos = HostTensor(c.dtype, {positions, rotary_dim / 2});
    rotary_sin = HostTensor(c.dtype, {positions, rotary_dim / 2});
    for (std::int64_t p = 0; p < positions; ++p) {
      for (std::int64_t m = 0; m < rotary_dim / 2; ++m) {
        const double angle = p * std::pow(10000.0, -2.0 * m / rotary_dim);
        rotary_cos.set({p, m}, static_cast<float>(std::cos(angle)));
        rotary_sin.set({p, m}, static_cast<float>(std::sin(angle)));
      }
    }
  }
  HostTensor out(c.dtype, {c.b, c.sq, c.h, c.dv}, c.layout);
  HostTensor lse(DType::float32, {c.b, c.h, c.sq});
  const OptionTensors opts = draw_options(c.features, rng, c.b, c.h, c.d, c.sk);

  auto build = [&](Binding& bind) {
    KVCacheForwardArgs a;
    a.q = bind.view(q);
    a.k_cache = bind.view(k_cache);
    a.v_cache = bind.view(v_cache);
    a.block_table = bind.view(block_table);
    a.cache_seqlens = bind.view(cache_seqlens);
    a.cache_batch_idx = bind.view(batch_idx);
    a.cache_leftpad = bind.view(leftpad);
    a.k_new = bind.view(k_new);
    a.v_new = bind.view(v_new);
    a.rotary_cos = bind.view(rotary_cos);
    a.rotary_sin = bind.view(rotary_sin);
    a.rotary_interleaved = c.rotary == Rotary::interleaved;
    a.num_splits = c.num_splits;
    a.out = bind.view(out);
    a.lse = bind.view(lse);
    a.options = opts.bind(bind);
    return a;
  };

  DeviceBinding device(backend);
  const Status status = run_on(backend, build(device));
  if (status.code() == ErrorCode::unsupported && is_cuda(backend)) {
    GTEST_SKIP() << status.message();
  }
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
  expect_inputs_unchanged(device, {{"q", &q},
                                   {"k_new", &k_new},
                                   {"v_new", &v_new},
                                   {"block_table", &block_table},
                                   {"cache_seqlens", &cache_seqlens},
                                   {"cache_batch_idx", &batch_idx},
                                   {"cache_leftpad", &leftpad},
                                   {"rotary_cos", &rotary_cos},
                                   {"rotary_sin", &rotary_sin},
                                   {"alibi_slopes", &opts.alibi},
                                   {"sink", &opts.sink}});

  const ReferenceBinding ref = reference(build);
  const ReferenceBinding lowp = reference_lowp(build, c.dtype);
  EXPECT_TRUE(expect_close("out", device.fetch(out), out, ref.result(out), lowp.result(out),
                           {2.0, output_atol(c.dtype)}));
  EXPECT_TRUE(
      expect_close("lse", device.fetch(lse), lse, ref.result(lse), lowp.result(lse), {2.0, kLseAtol}));

  // The cache after the call: appended rows as the reference wrote them, the rest untouched.
  std::set<std::pair<std::int64_t, std::int64_t>> appended;
  for (std::int64_t s = 0; s < c.b; ++s) {
    for (std::int64_t t = 0; t < s_new; ++t) appended.insert(locate(s, cache_end[s] + t));
  }
  const ElementFilter in_append = [&](const std::int64_t* index) {
    return appended.count({index[0], index[1]}) > 0;
  };
  // k: rotated in the cache dtype, so within twice the reference's own rounding to it.
  EXPECT_TRUE(expect_close("k_cache", device.fetch(k_cache), k_cache, ref.result(k_cache),
                           lowp.result(k_cache), {2.0, c.rotary == Rotary::none ? 0.0 : output_atol(c.dtype)},
                           in_append));
  // v: a plain copy, exact.
  EXPECT_TRUE(expect_close("v_cache", device.fetch(v_cache), v_cache, ref.result(v_cache),
                           lowp.result(v_cache), {0.0, 0.0}, in_append));
}

using KVCacheParam = std::tuple<Backend, KVCacheCase>;
class KVCacheTest : public ::testing::TestWithParam<KVCacheParam> {};

TEST_P(KVCacheTest, MatchesReference) {
  const auto& [backend, c] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  check_kvcache_case(backend, c, rng);
}

// Drawn afresh each run (attention_cases.h draw_common): decoding (one query) half the time, else a chunk of
// queries; caches dense, indexed by batch or paged (pages of 1 to 512 rows); appends with and without rotary
// (interleaved or not, whole or half), left padding, split counts.
KVCacheCase draw_kvcache_case(Rng& rng, Backend backend) {
  static constexpr int kSplits[] = {1, 0, 0, 3, 8};
  DrawnCommon fitted = draw_common(rng, backend, false);
  KVCacheCase c{};
  c.b = rng.integer(1, 4);
  c.sq = rng.coin() ? 1 : draw_length(rng, 2048);
  c.sk = draw_length(rng, 9000);
  fit_drawn_case(c, fitted, c.b, 1, c.sq, c.sk, drawn_case_cap(backend),
                 [&] { return static_cast<double>(c.b * fitted.h) * c.sq * c.sk * (fitted.d + fitted.dv); });
  c.page_size = draw_page_size(rng);
  c.append = rng.coin(0.6) && c.sq <= c.sk;  // the new keys are the queries' own tokens
  c.rotary = c.append && rng.coin(0.5) ? (rng.coin() ? Rotary::interleaved : Rotary::neox) : Rotary::none;
  c.partial_rotary = rng.coin(0.3);
  c.batch_idx = c.page_size == 0 && rng.coin(0.3);
  c.leftpad = rng.coin(0.25);
  c.num_splits = kSplits[rng.integer(0, std::size(kSplits) - 1)];
  return c;
}

class KVCacheRandomTest : public ::testing::TestWithParam<RandomParam> {};

TEST_P(KVCacheRandomTest, MatchesReference) {
  const Backend backend = std::get<0>(GetParam());
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  SCOPED_TRACE(seed_trace());
  check_drawn_case(backend, draw_kvcache_case, check_kvcache_case);
}

INSTANTIATE_TEST_SUITE_P(Random, KVCacheRandomTest, ::testing::ValuesIn(random_params(16, 6)),
                         random_param_name);

INSTANTIATE_TEST_SUITE_P(Grid, KVCacheTest,
                         ::testing::Combine(::testing::ValuesIn(backends_under_test()),
                                            ::testing::ValuesIn(kvcache_cases())),
                         [](const ::testing::TestParamInfo<KVCacheParam>& info) {
                           return sanitize_name(std::string(backend_name(std::get<0>(info.param))) + "_" +
                                                std::to_string(info.index) + "_" +
                                                std::get<1>(info.param).name());
                         });

}  // namespace
}  // namespace flashattn::test
