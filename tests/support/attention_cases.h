// Building blocks of the case tables: the option axes every attention suite
// shares (mask, softcap, ALiBi, dropout, sink, scale), how they are named, how
// their random parts are drawn, and deterministic coverage of axes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
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

}  // namespace flashattn::test
