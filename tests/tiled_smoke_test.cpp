// Quick self-checks of the CPU tiled backend against the CPU reference, one
// case per feature family (the full grids live in the operation suites):
// batched/GQA/odd head dims, masks, softcap, ALiBi, sink, dropout, varlen with
// seqused, paged K/V, KV cache with append + rotary + split-KV, backward
// (batched and varlen), combine, and bitwise independence of the thread count
// (forward and backward).
//
// Rule: max|tiled - ref| <= 2 * max|ref_lowp - ref| + atol, ref = float64
// reference, ref_lowp = the reference's emulation of the input precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "api/validate.h"
#include "backend.h"
#include "common/numeric.h"
#include "cpu/reference.h"
#include "cpu/tiled.h"
#include "flashattn/flashattn.h"

namespace flashattn {
namespace {

struct Host {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;

  Host() = default;
  Host(DType t, std::vector<std::int64_t> s) : dtype(t), shape(std::move(s)) {
    bytes.assign(static_cast<std::size_t>(numel()) * dtype_size(dtype), 0);
  }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto x : shape) n *= x;
    return n;
  }
  float get(std::int64_t i) const { return detail::load_float(bytes.data(), dtype, i); }
  void set(std::int64_t i, float x) { detail::store_float(bytes.data(), dtype, i, x); }
  TensorView view() {
    TensorView v;
    v.data = bytes.data();
    v.dtype = dtype;
    v.rank = static_cast<int>(shape.size());
    std::int64_t stride = 1;
    for (int d = v.rank - 1; d >= 0; --d) {
      v.shape[d] = shape[d];
      v.stride[d] = stride;
      stride *= shape[d];
    }
    return v;
  }
};

Host random_tensor(DType t, std::vector<std::int64_t> shape, std::mt19937& rng, float lo = -1.f,
                   float hi = 1.f) {
  Host h(t, std::move(shape));
  std::uniform_real_distribution<float> dist(lo, hi);
  for (std::int64_t i = 0; i < h.numel(); ++i) h.set(i, dist(rng));
  return h;
}
Host nan_tensor(DType t, std::vector<std::int64_t> shape) {
  Host h(t, std::move(shape));
  for (std::int64_t i = 0; i < h.numel(); ++i) h.set(i, std::numeric_limits<float>::quiet_NaN());
  return h;
}
Host int_tensor(std::vector<std::int32_t> values) {
  Host h(DType::int32, {static_cast<std::int64_t>(values.size())});
  std::memcpy(h.bytes.data(), values.data(), values.size() * 4);
  return h;
}

// A named set of tensors; a case builds one per run from the same seed, so the
// three runs (tiled, ref, ref_lowp) see equal inputs and private outputs/caches.
using Tensors = std::map<std::string, Host>;

template <class Args>
Status run_with(Backend backend, const Args& args, int threads = 0) {
  ExecutionContext ctx;
  ctx.backend = backend;
  ctx.num_threads = threads;
  std::size_t bytes = 0;
  FLASHATTN_RETURN_IF_ERROR(workspace_size(args, ctx, &bytes));
  std::vector<unsigned char> storage(bytes + 256);
  ctx.workspace =
      reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(storage.data()) + 255) / 256 * 256);
  ctx.workspace_bytes = bytes;
  if constexpr (std::is_same_v<Args, ForwardArgs>) return forward(args, ctx);
  if constexpr (std::is_same_v<Args, VarlenForwardArgs>) return forward_varlen(args, ctx);
  if constexpr (std::is_same_v<Args, KVCacheForwardArgs>) return forward_kvcache(args, ctx);
  if constexpr (std::is_same_v<Args, BackwardArgs>) return backward(args, ctx);
  if constexpr (std::is_same_v<Args, VarlenBackwardArgs>) return backward_varlen(args, ctx);
  if constexpr (std::is_same_v<Args, CombineArgs>) return combine(args, ctx);
  return Status();
}

template <class Params, class Args>
Status run_lowp(const Args& args, DType precision) {
  ExecutionContext ctx;
  ctx.backend = Backend::cpu_reference;
  detail::Validated<Params> validated;
  FLASHATTN_RETURN_IF_ERROR(detail::validate(args, ctx, detail::CheckMode::full, &validated));
  if (validated.nothing_to_do) return Status();
  std::vector<unsigned char> storage(
      detail::cpu_reference::workspace_size(validated.params, detail::cpu_threads(ctx)) + 256);
  ctx.workspace =
      reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(storage.data()) + 255) / 256 * 256);
  ctx.workspace_bytes = storage.size() - 256;
  return detail::cpu_reference::run_emulated(validated.params, ctx, precision);
}

// Builds tensors, then the Args over them.
template <class Args>
struct Case {
  std::function<Tensors()> make;
  std::function<Args(Tensors&)> bind;
  std::vector<std::string> outputs;
};

// The tiled backend on params from the API's validation, with a chosen
// instruction set, so every compiled copy is checked on this machine.
template <class Params, class Args>
Status run_tiled(const Args& args, detail::cpu_tiled::Isa isa, int threads = 0) {
  ExecutionContext ctx;
  ctx.backend = Backend::cpu_tiled;
  ctx.num_threads = threads;
  detail::Validated<Params> validated;
  FLASHATTN_RETURN_IF_ERROR(detail::validate(args, ctx, detail::CheckMode::full, &validated));
  if (validated.nothing_to_do) return Status();
  const std::size_t bytes = detail::cpu_tiled::workspace_size(validated.params, detail::cpu_threads(ctx));
  std::vector<unsigned char> storage(bytes + 256);
  ctx.workspace =
      reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(storage.data()) + 255) / 256 * 256);
  ctx.workspace_bytes = bytes;
  return detail::cpu_tiled::run(validated.params, ctx, isa);
}

std::vector<std::pair<detail::cpu_tiled::Isa, const char*>> isas() {
  using detail::cpu_tiled::Isa;
  std::vector<std::pair<Isa, const char*>> list = {{Isa::baseline, "baseline"}};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) list.push_back({Isa::avx2, "avx2"});
  if (__builtin_cpu_supports("avx512f")) list.push_back({Isa::avx512, "avx512"});
  return list;
}

template <class Params, class Args>
void check_case(const Case<Args>& c, DType dtype, const std::string& name) {
  SCOPED_TRACE(name);
  Tensors ref = c.make(), lowp = c.make();
  const Status ref_status = run_with(Backend::cpu_reference, c.bind(ref));
  ASSERT_TRUE(ref_status.ok()) << ref_status.message();
  const Status lowp_status = run_lowp<Params>(c.bind(lowp), dtype);
  ASSERT_TRUE(lowp_status.ok()) << lowp_status.message();
  // The public API once (automatic ISA), then each compiled copy.
  for (int pass = -1; pass < static_cast<int>(isas().size()); ++pass) {
    const std::string label = name + (pass < 0 ? " [api]" : std::string(" [") + isas()[pass].second + "]");
    SCOPED_TRACE(label);
    Tensors tiled = c.make();
    const Status status = pass < 0 ? run_with(Backend::cpu_tiled, c.bind(tiled))
                                   : run_tiled<Params>(c.bind(tiled), isas()[pass].first);
    ASSERT_TRUE(status.ok()) << status.message();
    const double atol = dtype == DType::float32 ? 2e-6 : 1e-5;
    for (const std::string& out : c.outputs) {
      const Host &a = tiled.at(out), &r = ref.at(out), &l = lowp.at(out);
      double err = 0, err_lowp = 0;
      for (std::int64_t i = 0; i < a.numel(); ++i) {
        const float x = a.get(i), y = r.get(i), z = l.get(i);
        if (std::isnan(y)) {  // untouched by the reference: must be untouched here too
          EXPECT_TRUE(std::isnan(x)) << out << "[" << i << "] written, the reference left it";
          continue;
        }
        if (std::isinf(y)) {
          EXPECT_EQ(x, y) << out << "[" << i << "]";
          continue;
        }
        err = std::max(err, std::fabs(static_cast<double>(x) - y));
        if (!std::isnan(z) && !std::isinf(z))
          err_lowp = std::max(err_lowp, std::fabs(static_cast<double>(z) - y));
        if (std::isnan(x)) err = std::numeric_limits<double>::infinity();
      }
      EXPECT_LE(err, 2 * err_lowp + atol) << out << ": err " << err << ", lowp err " << err_lowp;
      if (std::getenv("TILED_SMOKE_VERBOSE"))
        std::printf("  %-52s %-8s err %.3g  lowp err %.3g\n", label.c_str(), out.c_str(), err, err_lowp);
    }
  }
}

// ---------------------------------------------------------------------------
// Forward, batched.

struct Shape {
  DType dtype = DType::float16;
  std::int64_t b = 2, sq = 37, sk = 91, h = 4, hk = 2, d = 64, dv = 64;
};

Case<ForwardArgs> batched_case(Shape s, std::function<void(AttentionOptions&, Tensors&)> options,
                               unsigned seed) {
  Case<ForwardArgs> c;
  c.make = [=] {
    std::mt19937 rng(seed);
    Tensors t;
    t["q"] = random_tensor(s.dtype, {s.b, s.sq, s.h, s.d}, rng);
    t["k"] = random_tensor(s.dtype, {s.b, s.sk, s.hk, s.d}, rng);
    t["v"] = random_tensor(s.dtype, {s.b, s.sk, s.hk, s.dv}, rng);
    t["out"] = nan_tensor(s.dtype, {s.b, s.sq, s.h, s.dv});
    t["lse"] = nan_tensor(DType::float32, {s.b, s.h, s.sq});
    t["alibi"] = random_tensor(DType::float32, {s.b, s.h}, rng, 0.f, 0.3f);
    t["sink"] = random_tensor(DType::float32, {s.h}, rng, -1.f, 2.f);
    return t;
  };
  c.bind = [=](Tensors& t) {
    ForwardArgs a;
    a.q = t["q"].view();
    a.k = t["k"].view();
    a.v = t["v"].view();
    a.out = t["out"].view();
    a.lse = t["lse"].view();
    options(a.options, t);
    return a;
  };
  c.outputs = {"out", "lse"};
  return c;
}

TEST(TiledSmoke, ForwardBatched) {
  using O = AttentionOptions;
  struct Named {
    std::string name;
    Shape shape;
    std::function<void(O&, Tensors&)> options;
  };
  const std::vector<Named> cases = {
      {"fp16 plain", {DType::float16, 2, 37, 91, 4, 2, 64, 64}, [](O&, Tensors&) {}},
      {"bf16 causal d59 sq>sk",
       {DType::bfloat16, 2, 113, 71, 6, 2, 59, 59},
       [](O& o, Tensors&) { o.causal = true; }},
      {"fp32 window alibi dv!=d",
       {DType::float32, 1, 128, 217, 4, 4, 40, 72},
       [](O& o, Tensors& t) {
         o.window = {30, 7};
         o.alibi_slopes = t["alibi"].view();
       }},
      {"fp16 softcap sink causal",
       {DType::float16, 2, 64, 200, 4, 1, 128, 128},
       [](O& o, Tensors& t) {
         o.softcap = 0.5f;  // small: scores reach both branches of tanh
         o.causal = true;
         o.sink = t["sink"].view();
       }},
      {"bf16 dropout",
       {DType::bfloat16, 2, 50, 130, 2, 2, 32, 32},
       [](O& o, Tensors&) {
         o.dropout = {0.17f, 1234, 77};
         o.causal = true;
       }},
      {"fp16 window left only d256",
       {DType::float16, 1, 70, 70, 2, 1, 256, 256},
       [](O& o, Tensors&) {
         o.window = {5, -1};
       }},
      // Few query rows per kv head: the streaming path (all kv heads per item), split.
      {"bf16 decode gqa4 alibi sink dropout softcap",
       {DType::bfloat16, 2, 1, 1000, 16, 4, 128, 128},
       [](O& o, Tensors& t) {
         o.alibi_slopes = t["alibi"].view();
         o.sink = t["sink"].view();
         o.dropout = {0.1f, 99, 5};
         o.softcap = 2.f;
       }},
      {"fp16 sq3 gqa2 causal window d72",
       {DType::float16, 1, 3, 777, 6, 3, 72, 40},
       [](O& o, Tensors&) {
         o.window = {300, 0};
       }},
  };
  for (const Named& n : cases)
    check_case<detail::AttentionParams>(batched_case(n.shape, n.options, 7), n.shape.dtype, n.name);
}

// ---------------------------------------------------------------------------
// Forward, varlen (seqused) and paged.

TEST(TiledSmoke, ForwardVarlenPaged) {
  for (const bool paged : {false, true}) {
    const DType dtype = DType::float16;
    const std::int64_t h = 4, hk = 2, d = 64;
    const std::vector<std::int32_t> cu_q = {0, 17, 17, 120, 121}, cu_k = {0, 40, 45, 300, 301};
    const std::vector<std::int32_t> used_q = {15, 0, 100, 1}, used_k = {40, 5, 250, 1};
    const std::int64_t page = 7, blocks_per_seq = 40;
    Case<VarlenForwardArgs> c;
    c.make = [=] {
      std::mt19937 rng(11);
      Tensors t;
      t["q"] = random_tensor(dtype, {121, h, d}, rng);
      if (paged) {
        t["k"] = random_tensor(dtype, {4 * blocks_per_seq, page, hk, d}, rng);
        t["v"] = random_tensor(dtype, {4 * blocks_per_seq, page, hk, d}, rng);
        // A shuffled page table so pages of one sequence are scattered.
        std::vector<std::int32_t> table(4 * blocks_per_seq);
        for (std::size_t x = 0; x < table.size(); ++x) table[x] = static_cast<std::int32_t>(x);
        std::shuffle(table.begin(), table.end(), rng);
        t["table"] = int_tensor(table);
        t["table"].shape = {4, blocks_per_seq};
      } else {
        t["k"] = random_tensor(dtype, {301, hk, d}, rng);
        t["v"] = random_tensor(dtype, {301, hk, d}, rng);
      }
      t["cu_q"] = int_tensor(cu_q);
      t["cu_k"] = int_tensor(cu_k);
      t["used_q"] = int_tensor(used_q);
      t["used_k"] = int_tensor(used_k);
      t["out"] = nan_tensor(dtype, {121, h, d});
      t["lse"] = nan_tensor(DType::float32, {h, 121});
      return t;
    };
    c.bind = [=](Tensors& t) {
      VarlenForwardArgs a;
      a.q = t["q"].view();
      a.k = t["k"].view();
      a.v = t["v"].view();
      a.cu_seqlens_q = t["cu_q"].view();
      a.cu_seqlens_k = t["cu_k"].view();
      a.seqused_q = t["used_q"].view();
      a.seqused_k = t["used_k"].view();
      a.max_seqlen_q = 103;
      a.max_seqlen_k = 255;
      if (paged) a.block_table = t["table"].view();
      a.out = t["out"].view();
      a.lse = t["lse"].view();
      a.options.causal = true;
      return a;
    };
    c.outputs = {"out", "lse"};
    check_case<detail::AttentionParams>(c, dtype, paged ? "paged" : "varlen");
  }
}

// ---------------------------------------------------------------------------
// KV cache: append + rotary (both layouts) + leftpad/batch index + split-KV.

TEST(TiledSmoke, KVCacheAppendRotarySplits) {
  struct Variant {
    std::string name;
    std::int64_t page;  // 0: dense
    bool interleaved, causal, leftpad;
    int splits;
    std::int64_t sq;
  };
  const std::vector<Variant> variants = {
      {"dense interleaved causal splits=0 decode", 0, true, true, false, 0, 1},
      {"dense neox noncausal leftpad splits=3", 0, false, false, true, 3, 5},
      {"paged3 interleaved causal splits=1", 3, true, true, false, 1, 4},
      {"paged16 neox causal splits=0", 16, false, true, false, 0, 1},
  };
  for (const Variant& var : variants) {
    const DType dtype = DType::float16;
    const std::int64_t b = 3, h = 8, hk = 2, d = 64, s_cache = 600, s_new = 3, rot = 32;
    const std::vector<std::int32_t> seqlens = {500, 17, 0}, leftpad = {3, 10, 0}, batch_idx = {2, 0, 1};
    Case<KVCacheForwardArgs> c;
    c.make = [=] {
      std::mt19937 rng(5);
      Tensors t;
      t["q"] = random_tensor(dtype, {b, var.sq, h, d}, rng);
      if (var.page) {
        const std::int64_t per_seq = (s_cache + var.page - 1) / var.page, blocks = b * per_seq;
        t["k_cache"] = random_tensor(dtype, {blocks, var.page, hk, d}, rng);
        t["v_cache"] = random_tensor(dtype, {blocks, var.page, hk, d}, rng);
        std::vector<std::int32_t> table(blocks);
        for (std::size_t x = 0; x < table.size(); ++x) table[x] = static_cast<std::int32_t>(x);
        std::shuffle(table.begin(), table.end(), rng);
        t["table"] = int_tensor(table);
        t["table"].shape = {b, per_seq};
      } else {
        t["k_cache"] = random_tensor(dtype, {b, s_cache, hk, d}, rng);
        t["v_cache"] = random_tensor(dtype, {b, s_cache, hk, d}, rng);
        t["batch_idx"] = int_tensor(batch_idx);
      }
      t["k_new"] = random_tensor(dtype, {b, s_new, hk, d}, rng);
      t["v_new"] = random_tensor(dtype, {b, s_new, hk, d}, rng);
      t["cos"] = Host(dtype, {s_cache, rot / 2});
      t["sin"] = Host(dtype, {s_cache, rot / 2});
      for (std::int64_t pos = 0; pos < s_cache; ++pos)
        for (std::int64_t m = 0; m < rot / 2; ++m) {
          const double angle = pos * std::pow(10000.0, -2.0 * m / rot);
          t["cos"].set(pos * rot / 2 + m, static_cast<float>(std::cos(angle)));
          t["sin"].set(pos * rot / 2 + m, static_cast<float>(std::sin(angle)));
        }
      t["seqlens"] = int_tensor(seqlens);
      t["leftpad"] = int_tensor(leftpad);
      t["out"] = nan_tensor(dtype, {b, var.sq, h, d});
      t["lse"] = nan_tensor(DType::float32, {b, h, var.sq});
      return t;
    };
    c.bind = [=](Tensors& t) {
      KVCacheForwardArgs a;
      a.q = t["q"].view();
      a.k_cache = t["k_cache"].view();
      a.v_cache = t["v_cache"].view();
      if (var.page) {
        a.block_table = t["table"].view();
      } else {
        a.cache_batch_idx = t["batch_idx"].view();
      }
      a.cache_seqlens = t["seqlens"].view();
      if (var.leftpad) a.cache_leftpad = t["leftpad"].view();
      a.k_new = t["k_new"].view();
      a.v_new = t["v_new"].view();
      a.rotary_cos = t["cos"].view();
      a.rotary_sin = t["sin"].view();
      a.rotary_interleaved = var.interleaved;
      a.num_splits = var.splits;
      a.out = t["out"].view();
      a.lse = t["lse"].view();
      a.options.causal = var.causal;
      return a;
    };
    c.outputs = {"out", "lse", "k_cache", "v_cache"};
    check_case<detail::AttentionParams>(c, dtype, var.name);
  }
}

// ---------------------------------------------------------------------------
// Backward.

Case<BackwardArgs> backward_case(Shape s, std::function<void(AttentionOptions&, Tensors&)> options,
                                 unsigned seed) {
  Case<BackwardArgs> c;
  c.make = [=] {
    std::mt19937 rng(seed);
    Tensors t;
    t["q"] = random_tensor(s.dtype, {s.b, s.sq, s.h, s.d}, rng);
    t["k"] = random_tensor(s.dtype, {s.b, s.sk, s.hk, s.d}, rng);
    t["v"] = random_tensor(s.dtype, {s.b, s.sk, s.hk, s.dv}, rng);
    t["dout"] = random_tensor(s.dtype, {s.b, s.sq, s.h, s.dv}, rng);
    t["alibi"] = random_tensor(DType::float32, {s.h}, rng, 0.f, 0.3f);
    t["sink"] = random_tensor(DType::float32, {s.h}, rng, -1.f, 2.f);
    t["out"] = Host(s.dtype, {s.b, s.sq, s.h, s.dv});
    t["lse"] = Host(DType::float32, {s.b, s.h, s.sq});
    // The forward's out and LSE, from the reference, as a training step would have them.
    ForwardArgs f;
    f.q = t["q"].view();
    f.k = t["k"].view();
    f.v = t["v"].view();
    f.out = t["out"].view();
    f.lse = t["lse"].view();
    options(f.options, t);
    if (!run_with(Backend::cpu_reference, f).ok()) ADD_FAILURE() << "reference forward failed";
    t["dq"] = nan_tensor(s.dtype, {s.b, s.sq, s.h, s.d});
    t["dk"] = nan_tensor(s.dtype, {s.b, s.sk, s.hk, s.d});
    t["dv"] = nan_tensor(s.dtype, {s.b, s.sk, s.hk, s.dv});
    t["dsink"] = nan_tensor(DType::float32, {s.h});
    return t;
  };
  c.bind = [=](Tensors& t) {
    BackwardArgs a;
    a.dout = t["dout"].view();
    a.q = t["q"].view();
    a.k = t["k"].view();
    a.v = t["v"].view();
    a.out = t["out"].view();
    a.lse = t["lse"].view();
    a.dq = t["dq"].view();
    a.dk = t["dk"].view();
    a.dv = t["dv"].view();
    options(a.options, t);
    if (a.options.sink.defined()) a.dsink = t["dsink"].view();
    return a;
  };
  c.outputs = {"dq", "dk", "dv"};
  return c;
}

TEST(TiledSmoke, BackwardBatched) {
  using O = AttentionOptions;
  struct Named {
    std::string name;
    Shape shape;
    std::function<void(O&, Tensors&)> options;
  };
  const std::vector<Named> cases = {
      {"fp16 plain gqa", {DType::float16, 2, 77, 130, 4, 2, 64, 64}, [](O&, Tensors&) {}},
      {"bf16 causal d59 sq>sk",
       {DType::bfloat16, 1, 150, 90, 3, 1, 59, 59},
       [](O& o, Tensors&) { o.causal = true; }},
      {"fp16 softcap alibi window dv!=d",
       {DType::float16, 2, 64, 100, 2, 2, 32, 48},
       [](O& o, Tensors& t) {
         o.softcap = 0.7f;
         o.alibi_slopes = t["alibi"].view();
         o.window = {20, 10};
       }},
      {"fp16 dropout causal",
       {DType::float16, 1, 90, 90, 4, 1, 64, 64},
       [](O& o, Tensors&) {
         o.dropout = {0.17f, 99, 3};
         o.causal = true;
       }},
      {"fp32 sink",
       {DType::float32, 2, 40, 70, 2, 1, 32, 32},
       [](O& o, Tensors& t) { o.sink = t["sink"].view(); }},
  };
  for (const Named& n : cases) {
    auto c = backward_case(n.shape, n.options, 21);
    if (n.name.find("sink") != std::string::npos) c.outputs.push_back("dsink");
    check_case<detail::BackwardParams>(c, n.shape.dtype, n.name);
  }
}

TEST(TiledSmoke, BackwardVarlen) {
  const DType dtype = DType::bfloat16;
  const std::int64_t h = 4, hk = 2, d = 64, total_q = 130, total_k = 200;
  const std::vector<std::int32_t> cu_q = {0, 60, 60, 130}, cu_k = {0, 50, 120, 200};
  const std::vector<std::int32_t> used_q = {55, 0, 70}, used_k = {50, 60, 71};
  Case<VarlenBackwardArgs> c;
  c.make = [=] {
    std::mt19937 rng(3);
    Tensors t;
    t["q"] = random_tensor(dtype, {total_q, h, d}, rng);
    t["k"] = random_tensor(dtype, {total_k, hk, d}, rng);
    t["v"] = random_tensor(dtype, {total_k, hk, d}, rng);
    t["dout"] = random_tensor(dtype, {total_q, h, d}, rng);
    t["cu_q"] = int_tensor(cu_q);
    t["cu_k"] = int_tensor(cu_k);
    t["used_q"] = int_tensor(used_q);
    t["used_k"] = int_tensor(used_k);
    t["out"] = Host(dtype, {total_q, h, d});
    t["lse"] = Host(DType::float32, {h, total_q});
    VarlenForwardArgs f;
    f.q = t["q"].view();
    f.k = t["k"].view();
    f.v = t["v"].view();
    f.cu_seqlens_q = t["cu_q"].view();
    f.cu_seqlens_k = t["cu_k"].view();
    f.seqused_q = t["used_q"].view();
    f.seqused_k = t["used_k"].view();
    f.max_seqlen_q = 70;
    f.max_seqlen_k = 80;
    f.out = t["out"].view();
    f.lse = t["lse"].view();
    f.options.causal = true;
    if (!run_with(Backend::cpu_reference, f).ok()) ADD_FAILURE() << "reference forward failed";
    t["dq"] = nan_tensor(dtype, {total_q, h, d});
    t["dk"] = nan_tensor(dtype, {total_k, hk, d});
    t["dv"] = nan_tensor(dtype, {total_k, hk, d});
    return t;
  };
  c.bind = [=](Tensors& t) {
    VarlenBackwardArgs a;
    a.dout = t["dout"].view();
    a.q = t["q"].view();
    a.k = t["k"].view();
    a.v = t["v"].view();
    a.out = t["out"].view();
    a.lse = t["lse"].view();
    a.cu_seqlens_q = t["cu_q"].view();
    a.cu_seqlens_k = t["cu_k"].view();
    a.seqused_q = t["used_q"].view();
    a.seqused_k = t["used_k"].view();
    a.max_seqlen_q = 70;
    a.max_seqlen_k = 80;
    a.dq = t["dq"].view();
    a.dk = t["dk"].view();
    a.dv = t["dv"].view();
    a.options.causal = true;
    return a;
  };
  c.outputs = {"dq", "dk", "dv"};
  check_case<detail::BackwardParams>(c, dtype, "varlen seqused causal");
}

// Same inputs, 1 and 2 threads, twice each: bitwise equal gradients.
TEST(TiledSmoke, BackwardDeterministic) {
  auto c = backward_case(
      {DType::float16, 1, 200, 200, 2, 1, 64, 64}, [](AttentionOptions& o, Tensors&) { o.causal = true; }, 4);
  std::vector<Tensors> runs;
  for (const int threads : {1, 2, 2, 1}) {
    Tensors t = c.make();
    ASSERT_TRUE(run_with(Backend::cpu_tiled, c.bind(t), threads).ok());
    runs.push_back(std::move(t));
  }
  for (std::size_t r = 1; r < runs.size(); ++r)
    for (const char* name : {"dq", "dk", "dv"})
      EXPECT_EQ(runs[0].at(name).bytes, runs[r].at(name).bytes) << name;
}

// Same inputs, 1, 2 and 3 threads: bitwise equal forward results, on the
// streaming path (decoding, split) and the tile path (prefill).
TEST(TiledSmoke, ForwardThreadIndependent) {
  const std::vector<Shape> shapes = {{DType::bfloat16, 1, 1, 8192, 8, 2, 64, 64},
                                     {DType::float16, 1, 300, 300, 4, 2, 64, 64}};
  for (const Shape& shape : shapes) {
    auto c = batched_case(
        shape, [](AttentionOptions& o, Tensors&) { o.causal = true; }, 5);
    std::vector<Tensors> runs;
    for (const int threads : {1, 2, 3, 1}) {
      Tensors t = c.make();
      ASSERT_TRUE(run_with(Backend::cpu_tiled, c.bind(t), threads).ok());
      runs.push_back(std::move(t));
    }
    for (std::size_t r = 1; r < runs.size(); ++r)
      for (const char* name : {"out", "lse"})
        EXPECT_EQ(runs[0].at(name).bytes, runs[r].at(name).bytes) << name << " sq " << shape.sq;
  }
}

// ---------------------------------------------------------------------------
// Combine, with splits whose LSE is -inf (and one row where all are).

TEST(TiledSmoke, Combine) {
  const std::int64_t splits = 5, b = 2, sq = 9, h = 3, dv = 40;
  std::mt19937 rng(8);
  Host out_partial = random_tensor(DType::float32, {splits, b, sq, h, dv}, rng);
  Host lse_partial = random_tensor(DType::float32, {splits, b, sq, h}, rng, -3.f, 3.f);
  for (std::int64_t s = 0; s < splits; ++s) lse_partial.set(((s * b + 1) * sq + 4) * h + 2, -INFINITY);
  lse_partial.set(((2 * b + 0) * sq + 1) * h + 0, -INFINITY);
  Host out_tiled = nan_tensor(DType::bfloat16, {b, sq, h, dv}), out_ref = out_tiled;
  Host lse_tiled = nan_tensor(DType::float32, {b, sq, h}), lse_ref = lse_tiled;
  auto args = [&](Host& out, Host& lse) {
    CombineArgs a;
    a.out_partial = out_partial.view();
    a.lse_partial = lse_partial.view();
    a.out = out.view();
    a.lse = lse.view();
    return a;
  };
  ASSERT_TRUE(run_with(Backend::cpu_tiled, args(out_tiled, lse_tiled)).ok());
  ASSERT_TRUE(run_with(Backend::cpu_reference, args(out_ref, lse_ref)).ok());
  for (std::int64_t i = 0; i < out_ref.numel(); ++i) EXPECT_NEAR(out_tiled.get(i), out_ref.get(i), 8e-3) << i;
  for (std::int64_t i = 0; i < lse_ref.numel(); ++i) {
    if (std::isinf(lse_ref.get(i))) {
      EXPECT_EQ(lse_tiled.get(i), lse_ref.get(i));
    } else {
      EXPECT_NEAR(lse_tiled.get(i), lse_ref.get(i), 1e-5) << i;
    }
  }
}

}  // namespace
}  // namespace flashattn
