// Sizes past the 32-bit and grid limits on the CUDA backends. An element offset that overflows 32 bits (a
// batch, a packed token row or a KV-cache page past 2^31 elements, or past 2^31 bytes) must address the right
// memory, and more batches (or decode sequences) than a grid's y / z dimension holds (65535) must all run.
// FlashAttention has had illegal memory accesses and wrong results at both (the user-needs list, item 15).
//
// The inputs are filled on the device with one random block of P elements repeated (element e holds
// block[e % P], P odd, so no two batches see the same data), which makes any slice's contents known on the
// host; the outputs are poisoned with NaN before each call. The batches on either side of each limit and the
// last one are checked against the float64 reference, each as a problem of its own. The 2^31-element cases
// need ~45 GB of GPU memory and skip, with the amount, where less is free.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "flashattn/flashattn.h"
#include "support/oracle.h"
#include "support/test_support.h"

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace flashattn::test {
namespace {

#if FLASHATTN_WITH_CUDA

constexpr Device kGpu{DeviceType::cuda, 0};
// b batches (or packed sequences) of s rows of h heads of d columns, q / k / v / dO alike.
struct Shape {
  std::int64_t b, s, h, d;
  constexpr std::int64_t batch_elements() const { return s * h * d; }
  constexpr std::int64_t elements() const { return b * batch_elements(); }
};
// Batches of 2^17 elements (128 rows of 8 heads of 128); 2^14 + 64 of them make each tensor 2^31 + 2^23
// elements (4.03 GB in bf16). Checked: the first batch, those on either side of 2^30 and 2^31 elements, the
// last.
constexpr Shape kLarge{(std::int64_t{1} << 14) + 64, 128, 8, 128};
const std::vector<std::int64_t> kLargeChecked = {0,       (1 << 13) - 1, 1 << 13, (1 << 14) - 1,
                                                 1 << 14, kLarge.b - 1};
// More batches than a grid's y / z dimension holds (65535), short ones: a launch that puts the batch (or
// batch x heads) on those dimensions fails or drops batches. Checked around 2^16 and the last. (Every case in
// this file is d = 128, bf16: one build bucket.)
constexpr Shape kManyBatches{(std::int64_t{1} << 16) + 100, 32, 2, 128};
const std::vector<std::int64_t> kManyChecked = {0, 65534, 65535, 65536, kManyBatches.b - 1};
constexpr std::int64_t kBlock = (std::int64_t{1} << 22) + 4099;  // the repeated block (odd)

// (Called after FLASHATTN_SKIP_IF_UNAVAILABLE: a CUDA device is there.)
std::optional<std::string> too_little_memory(std::size_t needed) {
  std::size_t free = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  if (free < needed) {
    return "needs " + std::to_string(needed >> 30) + " GiB of free GPU memory, " +
           std::to_string(free >> 30) + " GiB free";
  }
  return std::nullopt;
}

// A bf16 tensor of `elements` on the GPU holding a repeated random block (pattern() reads it on the host).
class PatternTensor {
 public:
  PatternTensor(Backend backend, Rng& rng, std::int64_t elements)
      : memory_(backend, static_cast<std::size_t>(elements) * 2), block_(DType::bfloat16, {kBlock}) {
    block_.fill_normal(rng);
    auto* bytes = static_cast<char*>(memory_.data());
    check_cuda(cudaMemcpy(bytes, block_bits(), std::min(kBlock, elements) * 2, cudaMemcpyHostToDevice),
               "cudaMemcpy block");
    // Doubling copies of whole periods keep element e = block[e % kBlock].
    for (std::int64_t filled = kBlock; filled < elements;) {
      const std::int64_t count = std::min(filled, elements - filled);
      check_cuda(cudaMemcpy(bytes + filled * 2, bytes, count * 2, cudaMemcpyDeviceToDevice),
                 "cudaMemcpy fill");
      filled += count;
    }
    // The calls run on run_on's non-blocking stream, which does not wait for the legacy stream's copies.
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the fill");
  }
  void* data() const { return memory_.data(); }
  // Elements [first, first + t.numel()) into the contiguous host tensor t.
  void pattern(std::int64_t first, HostTensor& t) const {
    pattern(first, t.numel(), reinterpret_cast<std::uint16_t*>(t.storage() + t.origin_byte_offset()));
  }
  // Elements [first, first + count) into dst.
  void pattern(std::int64_t first, std::int64_t count, std::uint16_t* dst) const {
    const auto* block = block_bits();
    for (std::int64_t i = 0; i < count; ++i) dst[i] = block[(first + i) % kBlock];
  }

 private:
  const std::uint16_t* block_bits() const {
    return reinterpret_cast<const std::uint16_t*>(block_.storage() + block_.origin_byte_offset());
  }
  DeviceMemory memory_;
  HostTensor block_;
};

// An output on the GPU, poisoned (all bits set: NaN in bf16 and fp32) before each call.
class OutputTensor {
 public:
  OutputTensor(Backend backend, std::size_t bytes) : memory_(backend, bytes) {}
  void* data() const { return memory_.data(); }
  // (Synchronised: a memset still queued on the legacy stream would land after the call's writes on run_on's
  // non-blocking stream. It did, for the LSE behind a 1 GB poison of out, before this wait.)
  void poison() {
    check_cuda(cudaMemset(memory_.data(), 0xFF, memory_.bytes()), "cudaMemset");
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the poison");
  }
  // `t.numel()` elements from byte `offset` into the contiguous host tensor t (its guards untouched).
  void fetch(std::size_t offset, HostTensor& t) const {
    fetch(offset, t.storage() + t.origin_byte_offset(),
          static_cast<std::size_t>(t.numel()) * (t.dtype() == DType::float32 ? 4 : 2));
  }
  void fetch(std::size_t offset, void* host, std::size_t bytes) const {
    memory_.download(host, bytes, offset);
  }

 private:
  DeviceMemory memory_;
};

TensorView rows_view(const void* data, const Shape& x, bool varlen) {
  auto* p = const_cast<void*>(data);
  return varlen ? TensorView::contiguous(p, DType::bfloat16, {x.b * x.s, x.h, x.d}, kGpu)
                : TensorView::contiguous(p, DType::bfloat16, {x.b, x.s, x.h, x.d}, kGpu);
}

// `before` poisoned, the device's slice fetched into a copy: what expect_close compares.
struct Fetched {
  HostTensor before, actual;
};
Fetched fetch_slice(const OutputTensor& t, std::size_t offset, DType dtype, std::vector<std::int64_t> shape) {
  Fetched f{HostTensor(dtype, shape), {}};
  f.before.poison();
  f.actual = f.before;
  t.fetch(offset, f.actual);
  return f;
}

// An LSE slice as a (1, heads, rows) tensor: head h's rows from element first_of(h) of the device LSE.
Fetched fetch_lse_rows(const OutputTensor& lse, std::int64_t heads, std::int64_t rows,
                       const std::function<std::int64_t(std::int64_t)>& first_of) {
  Fetched l{HostTensor(DType::float32, {1, heads, rows}), {}};
  l.before.poison();
  l.actual = l.before;
  for (std::int64_t head = 0; head < heads; ++head) {
    lse.fetch(static_cast<std::size_t>(first_of(head)) * 4,
              l.actual.storage() + l.actual.origin_byte_offset() + head * rows * 4, rows * 4);
  }
  return l;
}

// Forward (with LSE) and backward (deterministic where asked) of shape x, batched non-causal or varlen causal
// (every sequence x.s rows), the batches `checked` against the reference, each as a problem of its own.
void check_forward_and_backward(Backend backend, bool varlen, const Shape& x,
                                const std::vector<std::int64_t>& checked, bool deterministic = false) {
  // q k v dout, out dq dk dv (bf16) and the backward's fp32 dQ accumulator.
  const std::int64_t n = x.elements();
  const std::size_t bytes = static_cast<std::size_t>(n) * (8 * 2 + 4) + (std::size_t{4} << 30);
  if (auto reason = too_little_memory(bytes)) GTEST_SKIP() << *reason;
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  const PatternTensor q(backend, rng, n), k(backend, rng, n), v(backend, rng, n), dout(backend, rng, n);
  OutputTensor out(backend, n * 2), lse(backend, x.b * x.h * x.s * 4);
  OutputTensor dq(backend, n * 2), dk(backend, n * 2), dv(backend, n * 2);
  std::vector<std::int32_t> cu(x.b + 1);
  for (std::int64_t i = 0; i <= x.b; ++i) cu[i] = static_cast<std::int32_t>(i * x.s);
  DeviceMemory cu_seqlens(backend, cu.size() * 4);
  cu_seqlens.upload(cu.data(), cu.size() * 4);
  const TensorView cu_view = TensorView::contiguous(cu_seqlens.data(), DType::int32, {x.b + 1}, kGpu);
  // varlen: LSE (h, total); batched: (b, h, s).
  const TensorView lse_view = varlen
                                  ? TensorView::contiguous(lse.data(), DType::float32, {x.h, x.b * x.s}, kGpu)
                                  : TensorView::contiguous(lse.data(), DType::float32, {x.b, x.h, x.s}, kGpu);
  AttentionOptions options;
  options.causal = varlen;

  out.poison();
  lse.poison();
  Status status;
  if (varlen) {
    VarlenForwardArgs a;
    a.q = rows_view(q.data(), x, true), a.k = rows_view(k.data(), x, true),
    a.v = rows_view(v.data(), x, true);
    a.cu_seqlens_q = a.cu_seqlens_k = cu_view;
    a.max_seqlen_q = a.max_seqlen_k = x.s;
    a.out = rows_view(out.data(), x, true), a.lse = lse_view, a.options = options;
    status = run_on(backend, a);
  } else {
    ForwardArgs a;
    a.q = rows_view(q.data(), x, false), a.k = rows_view(k.data(), x, false),
    a.v = rows_view(v.data(), x, false);
    a.out = rows_view(out.data(), x, false), a.lse = lse_view, a.options = options;
    status = run_on(backend, a);
  }
  if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();

  dq.poison(), dk.poison(), dv.poison();
  if (varlen) {
    VarlenBackwardArgs a;
    a.dout = rows_view(dout.data(), x, true), a.q = rows_view(q.data(), x, true);
    a.k = rows_view(k.data(), x, true), a.v = rows_view(v.data(), x, true);
    a.out = rows_view(out.data(), x, true), a.lse = lse_view;
    a.cu_seqlens_q = a.cu_seqlens_k = cu_view;
    a.max_seqlen_q = a.max_seqlen_k = x.s;
    a.dq = rows_view(dq.data(), x, true), a.dk = rows_view(dk.data(), x, true),
    a.dv = rows_view(dv.data(), x, true);
    a.options = options, a.deterministic = deterministic;
    status = run_on(backend, a);
  } else {
    BackwardArgs a;
    a.dout = rows_view(dout.data(), x, false), a.q = rows_view(q.data(), x, false);
    a.k = rows_view(k.data(), x, false), a.v = rows_view(v.data(), x, false);
    a.out = rows_view(out.data(), x, false), a.lse = lse_view;
    a.dq = rows_view(dq.data(), x, false), a.dk = rows_view(dk.data(), x, false),
    a.dv = rows_view(dv.data(), x, false);
    a.options = options, a.deterministic = deterministic;
    status = run_on(backend, a);
  }
  // A build without the backward (FLASHATTN_BACKWARD=OFF) refuses it: the forward is still checked.
  const bool backward_ran = status.code() != ErrorCode::unsupported;
  if (backward_ran) {
    ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();
  }

  // Each checked batch as a problem of its own: the forward from q, k, v; the backward from the device
  // forward's out and LSE (the reference backward is the exact function of what it is handed).
  const std::vector<std::int64_t> shape = {1, x.s, x.h, x.d}, lse_shape = {1, x.h, x.s};
  for (const std::int64_t batch : checked) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const std::int64_t first = batch * x.batch_elements();
    HostTensor hq(DType::bfloat16, shape), hk(DType::bfloat16, shape), hv(DType::bfloat16, shape),
        hdout(DType::bfloat16, shape);
    q.pattern(first, hq), k.pattern(first, hk), v.pattern(first, hv), dout.pattern(first, hdout);
    const std::size_t row_bytes = static_cast<std::size_t>(first) * 2;
    const Fetched o = fetch_slice(out, row_bytes, DType::bfloat16, shape);
    // The LSE of this batch: batched (b, h, s) holds it in one piece; varlen (h, total) in one row per head.
    const Fetched l = fetch_lse_rows(lse, x.h, x.s, [&](std::int64_t head) {
      return varlen ? head * x.b * x.s + batch * x.s : (batch * x.h + head) * x.s;
    });
    HostTensor ref_out(DType::bfloat16, shape), ref_lse(DType::float32, lse_shape);
    auto forward = [&](Binding& bind) {
      ForwardArgs a;
      a.q = bind.view(hq), a.k = bind.view(hk), a.v = bind.view(hv);
      a.out = bind.view(ref_out), a.lse = bind.view(ref_lse), a.options = options;
      return a;
    };
    const ReferenceBinding ref = reference(forward), lowp = reference_lowp(forward, DType::bfloat16);
    EXPECT_TRUE(expect_close("out", o.actual, o.before, ref.result(ref_out), lowp.result(ref_out),
                             {2.0, output_atol(DType::bfloat16)}));
    EXPECT_TRUE(
        expect_close("lse", l.actual, l.before, ref.result(ref_lse), lowp.result(ref_lse), {2.0, kLseAtol}));
    if (!backward_ran) continue;

    HostTensor ref_dq(DType::bfloat16, shape), ref_dk(DType::bfloat16, shape), ref_dv(DType::bfloat16, shape);
    auto backward = [&](Binding& bind) {
      BackwardArgs a;
      a.dout = bind.view(hdout), a.q = bind.view(hq), a.k = bind.view(hk), a.v = bind.view(hv);
      a.out = bind.view(o.actual), a.lse = bind.view(l.actual);
      a.dq = bind.view(ref_dq), a.dk = bind.view(ref_dk), a.dv = bind.view(ref_dv), a.options = options;
      return a;
    };
    const ReferenceBinding gref = reference(backward), glowp = reference_lowp(backward, DType::bfloat16);
    // backward_test.cpp's rule for gradients (factor 2, fp32 accumulation noise, half an output ulp).
    const Tolerance tol{2.0, 1e-4, 0.5};
    const std::pair<const char*, const OutputTensor*> grads[] = {{"dq", &dq}, {"dk", &dk}, {"dv", &dv}};
    const HostTensor* refs[] = {&ref_dq, &ref_dk, &ref_dv};
    for (int g = 0; g < 3; ++g) {
      const Fetched f = fetch_slice(*grads[g].second, row_bytes, DType::bfloat16, shape);
      EXPECT_TRUE(expect_close(grads[g].first, f.actual, f.before, gref.result(*refs[g]),
                               glowp.result(*refs[g]), tol));
    }
  }
}

class LargeOffsets : public ::testing::TestWithParam<std::tuple<Backend, bool>> {};  // backend, varlen

// Tensors of 2^31 + 2^23 elements.
TEST_P(LargeOffsets, ForwardAndBackward) {
  const auto [backend, varlen] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  check_forward_and_backward(backend, varlen, kLarge, kLargeChecked);
}

// 65636 batches (or packed sequences) of 32 rows.
TEST_P(LargeOffsets, ManyBatches) {
  const auto [backend, varlen] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  check_forward_and_backward(backend, varlen, kManyBatches, kManyChecked);
}

// The deterministic backward (its own dQ schedule and semaphores) over the 2^31 + 2^23-element tensors.
TEST_P(LargeOffsets, DeterministicBackward) {
  const auto [backend, varlen] = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  check_forward_and_backward(backend, varlen, kLarge, kLargeChecked, true);
}

// One sequence of 2^21 + 2^13 rows (2^31 + 2^23 elements a tensor), a local window of 127 keys back (so the
// call stays cheap): row offsets within one sequence past 2^30 and 2^31 elements. The forward's out and LSE
// of 128-row blocks around those rows and at the end, each against the reference over its rows and the keys
// they see (bottom-right alignment keeps the window where the sub-problem starts its keys 127 rows earlier).
class LargeOffsetsLongSequence : public ::testing::TestWithParam<Backend> {};

TEST_P(LargeOffsetsLongSequence, WindowedForward) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  constexpr std::int64_t s = kLarge.elements() / (kLarge.h * kLarge.d), h = kLarge.h, d = kLarge.d;
  constexpr std::int64_t n = kLarge.elements(), kBack = 127, kRowsChecked = 128;
  if (auto reason = too_little_memory(static_cast<std::size_t>(n) * 8 + (std::size_t{2} << 30))) {
    GTEST_SKIP() << *reason;
  }
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  const PatternTensor q(backend, rng, n), k(backend, rng, n), v(backend, rng, n);
  OutputTensor out(backend, n * 2), lse(backend, h * s * 4);
  out.poison();
  lse.poison();
  ForwardArgs a;
  a.q = TensorView::contiguous(q.data(), DType::bfloat16, {1, s, h, d}, kGpu);
  a.k = TensorView::contiguous(k.data(), DType::bfloat16, {1, s, h, d}, kGpu);
  a.v = TensorView::contiguous(v.data(), DType::bfloat16, {1, s, h, d}, kGpu);
  a.out = TensorView::contiguous(out.data(), DType::bfloat16, {1, s, h, d}, kGpu);
  a.lse = TensorView::contiguous(lse.data(), DType::float32, {1, h, s}, kGpu);
  a.options.window = {kBack, 0};
  const Status status = run_on(backend, a);
  if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();

  const std::int64_t row_elements = h * d;
  for (const std::int64_t r0 : {std::int64_t{0}, (std::int64_t{1} << 20) - 64, std::int64_t{1} << 20,
                                (std::int64_t{1} << 21) - 64, std::int64_t{1} << 21, s - kRowsChecked}) {
    SCOPED_TRACE("rows from " + std::to_string(r0));
    const std::int64_t k0 = std::max<std::int64_t>(0, r0 - kBack), sk = r0 + kRowsChecked - k0;
    HostTensor hq(DType::bfloat16, {1, kRowsChecked, h, d}), hk(DType::bfloat16, {1, sk, h, d}),
        hv(DType::bfloat16, {1, sk, h, d});
    q.pattern(r0 * row_elements, hq), k.pattern(k0 * row_elements, hk), v.pattern(k0 * row_elements, hv);
    HostTensor ref_out(DType::bfloat16, {1, kRowsChecked, h, d}),
        ref_lse(DType::float32, {1, h, kRowsChecked});
    auto forward = [&](Binding& bind) {
      ForwardArgs f;
      f.q = bind.view(hq), f.k = bind.view(hk), f.v = bind.view(hv);
      f.out = bind.view(ref_out), f.lse = bind.view(ref_lse);
      f.options.window = {kBack, 0};
      return f;
    };
    const ReferenceBinding ref = reference(forward), lowp = reference_lowp(forward, DType::bfloat16);
    const Fetched o = fetch_slice(out, static_cast<std::size_t>(r0 * row_elements) * 2, DType::bfloat16,
                                  {1, kRowsChecked, h, d});
    EXPECT_TRUE(expect_close("out", o.actual, o.before, ref.result(ref_out), lowp.result(ref_out),
                             {2.0, output_atol(DType::bfloat16)}));
    const Fetched l = fetch_lse_rows(lse, h, kRowsChecked, [&](std::int64_t head) { return head * s + r0; });
    EXPECT_TRUE(
        expect_close("lse", l.actual, l.before, ref.result(ref_lse), lowp.result(ref_lse), {2.0, kLseAtol}));
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, LargeOffsetsLongSequence,
                         ::testing::Values(Backend::cuda_sm80, Backend::cuda_sm90),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(backend_name(info.param));
                         });

// A paged KV cache of 2^31 + 2^23 elements per tensor: block tables that point at pages on either side of
// 2^30 and 2^31 elements and at the last page, GQA 16 / 8, a decode step of 4 query rows, causal.
class LargeOffsetsKVCache : public ::testing::TestWithParam<Backend> {};

TEST_P(LargeOffsetsKVCache, HighPages) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  constexpr std::int64_t kHeads = kLarge.h, kDim = kLarge.d, kElements = kLarge.elements();
  const std::size_t bytes = static_cast<std::size_t>(kElements) * 2 * 2 + (std::size_t{2} << 30);
  if (auto reason = too_little_memory(bytes)) GTEST_SKIP() << *reason;
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  constexpr std::int64_t kPage = 256, kPages = kElements / (kPage * kHeads * kDim);  // 8224 pages of 2^18
  constexpr std::int64_t b = 2, sq = 4, h = 16, pages_per_seq = 4, sk = pages_per_seq * kPage;
  const PatternTensor k_cache(backend, rng, kElements), v_cache(backend, rng, kElements);
  // Pages 4095 / 4096 straddle 2^30 elements, 8191 / 8192 2^31; the last is 8223.
  const std::vector<std::int32_t> table = {0, 8191, 8192, 8223, 8223, 4096, 4095, 8192};
  DeviceMemory table_memory(backend, table.size() * 4);
  table_memory.upload(table.data(), table.size() * 4);
  const std::vector<std::int32_t> lengths(b, static_cast<std::int32_t>(sk));
  DeviceMemory lengths_memory(backend, lengths.size() * 4);
  lengths_memory.upload(lengths.data(), lengths.size() * 4);
  HostTensor hq(DType::bfloat16, {b, sq, h, kDim});
  hq.fill_normal(rng);
  DeviceMemory q_memory(backend, hq.numel() * 2);
  q_memory.upload(hq.storage() + hq.origin_byte_offset(), hq.numel() * 2);
  OutputTensor out(backend, b * sq * h * kDim * 2);
  out.poison();

  KVCacheForwardArgs a;
  a.q = TensorView::contiguous(q_memory.data(), DType::bfloat16, {b, sq, h, kDim}, kGpu);
  a.k_cache = TensorView::contiguous(k_cache.data(), DType::bfloat16, {kPages, kPage, kHeads, kDim}, kGpu);
  a.v_cache = TensorView::contiguous(v_cache.data(), DType::bfloat16, {kPages, kPage, kHeads, kDim}, kGpu);
  a.block_table = TensorView::contiguous(table_memory.data(), DType::int32, {b, pages_per_seq}, kGpu);
  a.cache_seqlens = TensorView::contiguous(lengths_memory.data(), DType::int32, {b}, kGpu);
  a.out = TensorView::contiguous(out.data(), DType::bfloat16, {b, sq, h, kDim}, kGpu);
  a.options.causal = true;
  const Status status = run_on(backend, a);
  if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();

  // The reference: each sequence's pages gathered into a dense (b, sk, hk, d) K and V.
  HostTensor hk(DType::bfloat16, {b, sk, kHeads, kDim}), hv(DType::bfloat16, {b, sk, kHeads, kDim});
  constexpr std::int64_t kPageElements = kPage * kHeads * kDim;
  auto* keys = reinterpret_cast<std::uint16_t*>(hk.storage() + hk.origin_byte_offset());
  auto* values = reinterpret_cast<std::uint16_t*>(hv.storage() + hv.origin_byte_offset());
  for (std::int64_t page = 0; page < b * pages_per_seq; ++page) {  // the pages of sequence 0, then 1
    const std::int64_t first = table[page] * kPageElements;
    k_cache.pattern(first, kPageElements, keys + page * kPageElements);
    v_cache.pattern(first, kPageElements, values + page * kPageElements);
  }
  HostTensor ref_out(DType::bfloat16, {b, sq, h, kDim});
  auto forward = [&](Binding& bind) {
    ForwardArgs f;
    f.q = bind.view(hq), f.k = bind.view(hk), f.v = bind.view(hv), f.out = bind.view(ref_out);
    f.options.causal = true;
    return f;
  };
  const ReferenceBinding ref = reference(forward), lowp = reference_lowp(forward, DType::bfloat16);
  const Fetched o = fetch_slice(out, 0, DType::bfloat16, {b, sq, h, kDim});
  EXPECT_TRUE(expect_close("out", o.actual, o.before, ref.result(ref_out), lowp.result(ref_out),
                           {2.0, output_atol(DType::bfloat16)}));
}

INSTANTIATE_TEST_SUITE_P(Grid, LargeOffsets,
                         ::testing::Combine(::testing::Values(Backend::cuda_sm80, Backend::cuda_sm90),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<LargeOffsets::ParamType>& info) {
                           return std::string(backend_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_varlen" : "_batched");
                         });

// A decode step of 65636 sequences (one query row each, GQA 8 / 2, d = 128) over a dense KV cache of 96 rows
// a sequence, each its own length: more tiles than a grid's y / z dimension holds, on the decode kernels.
TEST_P(LargeOffsetsKVCache, ManyDecodeSequences) {
  const Backend backend = GetParam();
  FLASHATTN_SKIP_IF_UNAVAILABLE(backend);
  constexpr std::int64_t b = kManyBatches.b, h = 8, hk = 2, d = 128, s_cache = 96;
  constexpr std::int64_t q_elements = b * h * d, cache_elements = b * s_cache * hk * d;
  if (auto reason =
          too_little_memory(static_cast<std::size_t>(cache_elements) * 4 + (std::size_t{2} << 30))) {
    GTEST_SKIP() << *reason;
  }
  SCOPED_TRACE(seed_trace());
  Rng rng = Rng::for_current_test();
  const PatternTensor q(backend, rng, q_elements), k_cache(backend, rng, cache_elements),
      v_cache(backend, rng, cache_elements);
  std::vector<std::int32_t> lengths(b);
  for (std::int64_t i = 0; i < b; ++i)
    lengths[i] = static_cast<std::int32_t>(1 + rng.integer(0, s_cache - 1));
  DeviceMemory lengths_memory(backend, lengths.size() * 4);
  lengths_memory.upload(lengths.data(), lengths.size() * 4);
  OutputTensor out(backend, q_elements * 2);
  out.poison();

  KVCacheForwardArgs a;
  a.q = TensorView::contiguous(q.data(), DType::bfloat16, {b, 1, h, d}, kGpu);
  a.k_cache = TensorView::contiguous(k_cache.data(), DType::bfloat16, {b, s_cache, hk, d}, kGpu);
  a.v_cache = TensorView::contiguous(v_cache.data(), DType::bfloat16, {b, s_cache, hk, d}, kGpu);
  a.cache_seqlens = TensorView::contiguous(lengths_memory.data(), DType::int32, {b}, kGpu);
  a.out = TensorView::contiguous(out.data(), DType::bfloat16, {b, 1, h, d}, kGpu);
  const Status status = run_on(backend, a);
  if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
  ASSERT_TRUE(status.ok()) << error_code_name(status.code()) << ": " << status.message();

  for (const std::int64_t seq : kManyChecked) {
    SCOPED_TRACE("sequence " + std::to_string(seq) + " of " + std::to_string(lengths[seq]) + " keys");
    const std::int64_t len = lengths[seq];
    HostTensor hq(DType::bfloat16, {1, 1, h, d}), keys(DType::bfloat16, {1, len, hk, d}),
        values(DType::bfloat16, {1, len, hk, d}), ref_out(DType::bfloat16, {1, 1, h, d});
    q.pattern(seq * h * d, hq), k_cache.pattern(seq * s_cache * hk * d, keys),
        v_cache.pattern(seq * s_cache * hk * d, values);
    auto forward = [&](Binding& bind) {
      ForwardArgs f;
      f.q = bind.view(hq), f.k = bind.view(keys), f.v = bind.view(values), f.out = bind.view(ref_out);
      return f;
    };
    const ReferenceBinding ref = reference(forward), lowp = reference_lowp(forward, DType::bfloat16);
    const Fetched o =
        fetch_slice(out, static_cast<std::size_t>(seq * h * d) * 2, DType::bfloat16, {1, 1, h, d});
    EXPECT_TRUE(expect_close("out", o.actual, o.before, ref.result(ref_out), lowp.result(ref_out),
                             {2.0, output_atol(DType::bfloat16)}));
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, LargeOffsetsKVCache, ::testing::Values(Backend::cuda_sm80, Backend::cuda_sm90),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(backend_name(info.param));
                         });

#else

TEST(LargeOffsets, NeedsCuda) { GTEST_SKIP() << "tensors of more than 2^31 elements: built without CUDA"; }

#endif

}  // namespace
}  // namespace flashattn::test
