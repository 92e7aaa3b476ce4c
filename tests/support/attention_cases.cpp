#include "support/attention_cases.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>

namespace flashattn::test {

const char* mask_label(MaskKind mask) {
  switch (mask) {
    case MaskKind::none:
      return "full";
    case MaskKind::causal:
      return "causal";
    case MaskKind::local:
      return "local";
    case MaskKind::left_only:
      return "leftwin";
    case MaskKind::right_only:
      return "rightwin";
    case MaskKind::causal_left:
      return "causalwin";
  }
  return "?";
}

std::string features_label(const Features& f) {
  std::string label = mask_label(f.mask);
  if (f.softcap > 0.f) label += "_softcap";
  if (f.alibi == AlibiKind::per_head) label += "_alibiH";
  if (f.alibi == AlibiKind::per_batch_head) label += "_alibiBH";
  if (f.dropout > 0.f) label += "_dropout";
  if (f.sink) label += "_sink";
  if (f.custom_scale) label += "_scale";
  return label;
}

std::string heads_label(std::int64_t h, std::int64_t hk) {
  if (h == hk) return "mha" + std::to_string(h);
  if (hk == 1) return "mqa" + std::to_string(h);
  return "gqa" + std::to_string(h) + "x" + std::to_string(hk);
}

OptionTensors draw_options(const Features& f, Rng& rng, std::int64_t batch, std::int64_t heads,
                           std::int64_t head_dim, std::int64_t window_extent) {
  OptionTensors t;
  AttentionOptions& o = t.options;
  const std::int64_t max_window = std::max<std::int64_t>(window_extent - 1, 0);
  switch (f.mask) {
    case MaskKind::none:
      break;
    case MaskKind::causal:
      o.causal = true;
      break;
    case MaskKind::local:
      o.window.left = rng.integer(0, max_window);
      o.window.right = rng.integer(0, max_window);
      break;
    case MaskKind::left_only:
      o.window.left = rng.integer(0, max_window);
      break;
    case MaskKind::right_only:
      o.window.right = rng.integer(0, max_window);
      break;
    case MaskKind::causal_left:
      o.causal = true;
      o.window.left = rng.integer(0, max_window);
      break;
  }
  o.softcap = f.softcap;
  if (f.custom_scale) o.softmax_scale = 0.5f / std::sqrt(static_cast<float>(head_dim));
  if (f.alibi != AlibiKind::none) {
    t.alibi = f.alibi == AlibiKind::per_head ? HostTensor(DType::float32, {heads})
                                             : HostTensor(DType::float32, {batch, heads});
    t.alibi.fill_uniform(rng, 0.f, 0.3f);
  }
  if (f.sink) {
    t.sink = HostTensor(DType::float32, {heads});
    t.sink.fill_normal(rng, 2.f);
  }
  if (f.dropout > 0.f) {
    o.dropout.p = f.dropout;
    o.dropout.seed = rng.bits();
    o.dropout.offset = rng.bits() >> rng.integer(0, 63);
  }
  return t;
}

namespace {

HostTensor int32_tensor(const std::vector<std::int64_t>& values) {
  HostTensor t(DType::int32, {static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) {
    t.set_int({static_cast<std::int64_t>(i)}, static_cast<std::int32_t>(values[i]));
  }
  return t;
}

std::vector<std::int64_t> prefix_sums(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> cu(lengths.size() + 1, 0);
  for (std::size_t s = 0; s < lengths.size(); ++s) cu[s + 1] = cu[s] + lengths[s];
  return cu;
}

}  // namespace

PackedSequences draw_sequences(Rng& rng, std::int64_t batch, std::int64_t max_q, std::int64_t max_k,
                               bool seqused, bool empty) {
  PackedSequences p;
  p.batch = batch;
  p.len_q.resize(batch);
  p.len_k.resize(batch);
  p.used_q.resize(batch);
  p.used_k.resize(batch);
  for (std::int64_t s = 0; s < batch; ++s) {
    p.len_q[s] = s == 0 ? max_q : rng.integer(1, max_q);
    p.len_k[s] = s == 0 ? max_k : rng.integer(1, max_k);
  }
  if (empty && batch >= 2) {
    p.len_q[1] = 0;
    p.len_k[batch - 1] = 0;
  }
  for (std::int64_t s = 0; s < batch; ++s) {
    p.used_q[s] = seqused ? rng.integer(0, p.len_q[s]) : p.len_q[s];
    p.used_k[s] = seqused ? rng.integer(0, p.len_k[s]) : p.len_k[s];
  }
  const std::vector<std::int64_t> cu_q = prefix_sums(p.len_q), cu_k = prefix_sums(p.len_k);
  p.total_q = cu_q.back();
  p.total_k = cu_k.back();
  p.cu_q = int32_tensor(cu_q);
  p.cu_k = int32_tensor(cu_k);
  if (seqused) {
    p.seqused_q = int32_tensor(p.used_q);
    p.seqused_k = int32_tensor(p.used_k);
  }
  p.q_row_used.assign(p.total_q, false);
  p.k_row_used.assign(p.total_k, false);
  for (std::int64_t s = 0; s < batch; ++s) {
    for (std::int64_t i = 0; i < p.used_q[s]; ++i) p.q_row_used[cu_q[s] + i] = true;
    for (std::int64_t j = 0; j < p.used_k[s]; ++j) p.k_row_used[cu_k[s] + j] = true;
  }
  return p;
}

void PackedSequences::poison_unused_q_rows(HostTensor& t) const {
  for (std::int64_t s = 0; s < batch; ++s) t.poison_leading(q_start(s) + used_q[s], len_q[s] - used_q[s]);
}

void PackedSequences::poison_unused_k_rows(HostTensor& t) const {
  for (std::int64_t s = 0; s < batch; ++s) t.poison_leading(k_start(s) + used_k[s], len_k[s] - used_k[s]);
}

std::int64_t draw_length(Rng& rng, std::int64_t max_length) {
  std::int64_t n;
  if (rng.coin(0.4)) {
    n = (std::int64_t{64} << rng.integer(0, 7)) + rng.integer(-3, 3);  // 64 .. 8192, give or take three
  } else {
    n = static_cast<std::int64_t>(std::exp(rng.uniform(0.f, std::log(static_cast<float>(max_length)))));
  }
  return std::clamp<std::int64_t>(n, 1, max_length);
}

DrawnCommon draw_common(Rng& rng, Backend backend, bool large_v) {
  static constexpr std::int64_t kOddDims[] = {8, 40, 72, 160, 224};
  static constexpr std::pair<std::int64_t, std::int64_t> kDims[] = {
      {64, 64},   {96, 96},   {128, 128}, {128, 128}, {192, 192},
      {256, 256}, {256, 256}, {192, 128}, {64, 256},  {64, 512}};
  static constexpr MaskKind kMasks[] = {MaskKind::none,       MaskKind::none,       MaskKind::causal,
                                        MaskKind::causal,     MaskKind::local,      MaskKind::left_only,
                                        MaskKind::right_only, MaskKind::causal_left};
  static constexpr Layout kLayouts[] = {Layout::contiguous, Layout::padded, Layout::heads_major};
  DrawnCommon c{};
  std::tie(c.d, c.dv) = kDims[rng.integer(0, std::size(kDims) - (large_v ? 1 : 2))];
  if (rng.coin(1.0 / 3)) c.d = c.dv = kOddDims[rng.integer(0, std::size(kOddDims) - 1)];
  c.dtype = rng.coin() ? DType::bfloat16 : DType::float16;
  if (!is_cuda(backend) && rng.coin(0.2)) c.dtype = DType::float32;
  c.hk = rng.integer(1, 3);
  c.h = c.hk * (std::int64_t{1} << rng.integer(0, 3));
  c.features.mask = kMasks[rng.integer(0, std::size(kMasks) - 1)];
  c.features.softcap = rng.coin(0.2) ? (rng.coin() ? 1.5f : 30.f) : 0.f;
  c.features.alibi =
      rng.coin(0.15) ? (rng.coin() ? AlibiKind::per_head : AlibiKind::per_batch_head) : AlibiKind::none;
  c.features.sink = rng.coin(0.15);
  c.features.custom_scale = rng.coin(0.2);
  c.layout = kLayouts[rng.integer(0, std::size(kLayouts) - 1)];
  return c;
}

double drawn_case_cap(Backend backend) { return is_cuda(backend) ? 3e9 : 2e8; }

std::vector<RandomParam> random_params(int cuda_cases, int cpu_cases) {
  std::vector<RandomParam> params;
  for (const Backend backend : backends_under_test()) {
    const int cases = is_cuda(backend) ? cuda_cases : cpu_cases;
    for (int index = 0; index < cases; ++index) params.emplace_back(backend, index);
  }
  return params;
}

std::string random_param_name(const ::testing::TestParamInfo<RandomParam>& info) {
  return sanitize_name(std::string(backend_name(std::get<0>(info.param))) + "_" +
                       std::to_string(std::get<1>(info.param)));
}

std::int64_t draw_page_size(Rng& rng) {
  static constexpr std::int64_t kPages[] = {0, 0, 0, 1, 3, 16, 64, 128, 256, 512};
  return kPages[rng.integer(0, std::size(kPages) - 1)];
}

}  // namespace flashattn::test
