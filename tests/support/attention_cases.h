// Building blocks of the case tables: the option axes every attention suite
// shares (mask, softcap, ALiBi, dropout, sink, scale), how they are named, how
// their random parts are drawn, and deterministic coverage of axes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/test_support.h"

namespace flashattn::test {

// Deterministic coverage of one axis of a case table: next() walks the values in
// a fresh shuffled order every round, so each value appears once per round while
// the combinations with other axes vary. Case names never depend on the run's seed
// (test discovery lists them before running), so the shuffle uses a fixed salt.
template <class T>
class AxisCycle {
 public:
  AxisCycle(std::vector<T> values, std::uint64_t salt) : values_(std::move(values)), engine_(salt) {}
  T next() {
    if (order_.empty()) {
      order_.resize(values_.size());
      std::iota(order_.begin(), order_.end(), 0);
      std::shuffle(order_.begin(), order_.end(), engine_);
    }
    const std::size_t i = order_.back();
    order_.pop_back();
    return values_[i];
  }

 private:
  std::vector<T> values_;
  std::vector<std::size_t> order_;
  std::mt19937_64 engine_;
};

enum class MaskKind {
  none,
  causal,
  local,        // random window on both sides
  left_only,    // random left, unbounded right
  right_only,   // unbounded left, random right
  causal_left,  // causal plus a random left window
};
enum class AlibiKind { none, per_head, per_batch_head };

struct Features {
  MaskKind mask = MaskKind::none;
  float softcap = 0.f;
  AlibiKind alibi = AlibiKind::none;
  float dropout = 0.f;
  bool sink = false;
  bool custom_scale = false;  // softmax_scale = 0.5 / sqrt(d) instead of the default
};

std::string features_label(const Features& f);
const char* mask_label(MaskKind mask);

// The drawn parts of the options: window sizes, slopes, sink logits, dropout stream.
struct OptionTensors {
  AttentionOptions options;  // views left empty; bind() fills them
  HostTensor alibi;          // fp32 (h) or (b, h), or undefined
  HostTensor sink;           // fp32 (h), or undefined

  AttentionOptions bind(Binding& binding) const {
    AttentionOptions o = options;
    o.alibi_slopes = binding.view(alibi);
    o.sink = binding.view(sink);
    return o;
  }
};

// `window_extent` bounds the random window sizes (the largest key count).
OptionTensors draw_options(const Features& f, Rng& rng, std::int64_t batch, std::int64_t heads,
                           std::int64_t head_dim, std::int64_t window_extent);

// Packed (varlen) sequences: lengths drawn under the maxima, cu_seqlens and seqused.
// Sequence 0 reaches the maxima; with `empty`, sequence 1 has no queries and the last
// one no keys; with `seqused`, a random prefix of each sequence takes part.
struct PackedSequences {
  std::int64_t batch = 0, total_q = 0, total_k = 0;
  std::vector<std::int64_t> len_q, len_k, used_q, used_k;
  HostTensor cu_q, cu_k;                     // int32 (b + 1)
  HostTensor seqused_q, seqused_k;           // int32 (b), or undefined
  std::vector<bool> q_row_used, k_row_used;  // per packed row: inside a used prefix

  std::int64_t q_start(std::int64_t s) const { return cu_q.get_int({s}); }
  std::int64_t k_start(std::int64_t s) const { return cu_k.get_int({s}); }
  // Poisons rows outside the used prefixes (nobody may read them).
  void poison_unused_q_rows(HostTensor& t) const;
  void poison_unused_k_rows(HostTensor& t) const;
};
PackedSequences draw_sequences(Rng& rng, std::int64_t batch, std::int64_t max_q, std::int64_t max_k,
                               bool seqused, bool empty);

// Label for head counts: "mha4", "gqa6x2", "mqa3".
std::string heads_label(std::int64_t h, std::int64_t hk);

// Cases drawn afresh each run (the Random suites of the forward, varlen and KV-cache tests): the CUDA
// backends choose among kernels and schedules by length thresholds, evenness of query blocks, head dims and
// mask kinds, and a drawn case lands on combinations no hand-picked grid lists. A length in [1, max_length]:
// 40% near a threshold (a power of two from 64 to 8192, give or take three), else log-uniform.
std::int64_t draw_length(Rng& rng, std::int64_t max_length);
// The parts every drawn case has: (d, dv) among the pairs the Hopper kernels have (d = dv = 64..256, (192,
// 128), (64, 256), and with `large_v` (64, 512)), or a third of the time a head dim between cuda_sm80's
// buckets (8, 40, 72, 160, 224), which cuda_sm90 runs on a wider kernel (forward_config.h kernel_head_dims);
// fp16 or bf16 (and fp32 on the CPU); kv heads 1-3 with groups of 1-8, every mask kind, softcap, ALiBi, sink,
// custom scale (no dropout), every layout.
struct DrawnCommon {
  std::int64_t h, hk, d, dv;
  DType dtype;
  Features features;
  Layout layout;
};
DrawnCommon draw_common(Rng& rng, Backend backend, bool large_v);
// The reference's cost cap per drawn case, in multiply-adds of b h sq sk (d + dv): the CPU backend runs in CI
// on two cores.
double drawn_case_cap(Backend backend);
// The Random suites' parameters: (backend, case index), `cuda_cases` per CUDA backend and `cpu_cases` on the
// CPU one (its cases smaller: drawn_case_cap), and their test names (INSTANTIATE_TEST_SUITE_P's name
// generator).
using RandomParam = std::tuple<Backend, int>;
std::vector<RandomParam> random_params(int cuda_cases, int cpu_cases);
std::string random_param_name(const ::testing::TestParamInfo<RandomParam>& info);
// A drawn K/V page size: 0 (dense) 30% of the time, else pages of 1, 3, 16, 64, 128, 256 or 512 rows.
std::int64_t draw_page_size(Rng& rng);
// The body of a Random suite's test: the case draw(rng, backend) draws from the test's seed, named (its
// name()) in the trace and in --gtest_output=xml (what a run covered), then check(backend, case, rng).
template <class Draw, class Check>
void check_drawn_case(Backend backend, Draw&& draw, Check&& check) {
  Rng rng = Rng::for_current_test();
  const auto c = draw(rng, backend);
  SCOPED_TRACE("drawn case: " + c.name());
  ::testing::Test::RecordProperty("drawn_case", c.name());
  check(backend, c, rng);
}
// Fits a drawn case under `cap` (cost() its multiply-adds): fewer sequences (down to min_batch), fewer heads
// (down to one kv head), then the longer of the two lengths by a quarter at a time; then copies the common
// parts into `c`.
template <class Case, class Cost>
void fit_drawn_case(Case& c, DrawnCommon& common, std::int64_t& batch, std::int64_t min_batch,
                    std::int64_t& length_a, std::int64_t& length_b, double cap, Cost&& cost) {
  while (cost() > cap && batch > min_batch) --batch;
  while (cost() > cap && common.h > common.hk) common.h /= 2;
  while (cost() > cap && common.hk > 1) common.h = --common.hk;
  while (cost() > cap) {
    std::int64_t& longer = length_a > length_b ? length_a : length_b;
    longer = std::max<std::int64_t>(1, longer * 3 / 4);
  }
  c.h = common.h, c.hk = common.hk, c.d = common.d, c.dv = common.dv;
  c.dtype = common.dtype;
  c.features = common.features;
  c.layout = common.layout;
}

}  // namespace flashattn::test
