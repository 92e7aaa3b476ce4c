// Bad inputs are rejected with the right ErrorCode and a message naming the
// argument; good edge cases (empty batch, empty queries, empty keys) succeed;
// no call modifies its inputs.
//
// Each table row starts from a valid problem of one operation, breaks one rule
// and expects (code, substring). Rows whose rule depends on index contents are
// marked so: workspace_size()/select_kernel() validate shapes only and must
// accept them, while the call itself must reject them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "flashattn/flashattn.h"

namespace flashattn {
namespace {

using i64 = std::int64_t;

// A valid problem of every operation, backed by owned buffers. Index vectors
// get spare capacity so a row that enlarges their shape stays inside memory.
struct Problem {
  static constexpr i64 b = 2, sq = 5, sk = 7, h = 4, hk = 2, d = 16, dv = 8;
  static constexpr i64 total_q = 9, total_k = 12;  // varlen: q lengths {4, 5}, k lengths {7, 5}
  static constexpr i64 s_cache = 16, s_new = 2;
  static constexpr i64 num_blocks = 6, page = 4, max_blocks = 3;

  std::vector<float> q, k, v, out, lse, dout, grad_q, grad_k, grad_v, alibi, sink, dsink, bias;
  std::vector<float> vq, vk, vv, vout, vlse, vdout, vdq, vdk, vdv;
  std::vector<float> kc, vc, kn, vn, cos, sin, pkc, pvc;
  std::vector<float> op, lp, cout, clse;
  std::vector<std::int32_t> cu_q, cu_k, used_q, used_k, cache_seqlens, batch_idx, leftpad, table;

  ForwardArgs fwd;
  VarlenForwardArgs varlen;
  KVCacheForwardArgs kv;
  KVCacheForwardArgs paged;
  BackwardArgs bwd;
  VarlenBackwardArgs vbwd;
  CombineArgs comb;

  static std::vector<float> random(i64 n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (float& e : x) e = dist(rng);
    return x;
  }
  static TensorView f32(std::vector<float>& x, std::initializer_list<i64> shape) {
    return TensorView::contiguous(x.data(), DType::float32, shape);
  }
  static TensorView i32(std::vector<std::int32_t>& x, std::initializer_list<i64> shape) {
    return TensorView::contiguous(x.data(), DType::int32, shape);
  }

  Problem(const Problem&) = delete;  // views point into this object's own buffers
  Problem& operator=(const Problem&) = delete;

  Problem() {
    unsigned seed = 1;
    q = random(b * sq * h * d, seed++);
    k = random(b * sk * hk * d, seed++);
    v = random(b * sk * hk * dv, seed++);
    out = random(b * sq * h * dv, seed++);
    lse = random(b * h * sq, seed++);
    dout = random(b * sq * h * dv, seed++);
    grad_q = random(b * sq * h * d, seed++);
    grad_k = random(b * sk * hk * d, seed++);
    grad_v = random(b * sk * hk * dv, seed++);
    alibi = random(b * h, seed++);
    sink = random(h, seed++);
    dsink = random(h, seed++);
    bias = random(b * h * sq * sk, 99);
    fwd.q = f32(q, {b, sq, h, d});
    fwd.k = f32(k, {b, sk, hk, d});
    fwd.v = f32(v, {b, sk, hk, dv});
    fwd.out = f32(out, {b, sq, h, dv});
    fwd.lse = f32(lse, {b, h, sq});

    vq = random(total_q * h * d, seed++);
    vk = random(total_k * hk * d, seed++);
    vv = random(total_k * hk * dv, seed++);
    vout = random(total_q * h * dv, seed++);
    vlse = random(h * total_q, seed++);
    vdout = random(total_q * h * dv, seed++);
    vdq = random(total_q * h * d, seed++);
    vdk = random(total_k * hk * d, seed++);
    vdv = random(total_k * hk * dv, seed++);
    cu_q = {0, 4, 9, 0, 0, 0, 0, 0};
    cu_k = {0, 7, 12, 0, 0, 0, 0, 0};
    used_q = {3, 5, 0, 0, 0, 0, 0, 0};
    used_k = {7, 2, 0, 0, 0, 0, 0, 0};
    varlen.q = f32(vq, {total_q, h, d});
    varlen.k = f32(vk, {total_k, hk, d});
    varlen.v = f32(vv, {total_k, hk, dv});
    varlen.cu_seqlens_q = i32(cu_q, {b + 1});
    varlen.cu_seqlens_k = i32(cu_k, {b + 1});
    varlen.max_seqlen_q = 5;
    varlen.max_seqlen_k = 7;
    varlen.out = f32(vout, {total_q, h, dv});
    varlen.lse = f32(vlse, {h, total_q});

    kc = random(b * s_cache * hk * d, seed++);
    vc = random(b * s_cache * hk * dv, seed++);
    kn = random(b * s_new * hk * d, seed++);
    vn = random(b * s_new * hk * dv, seed++);
    cos = random(s_cache * d / 4, seed++);
    sin = random(s_cache * d / 4, seed++);
    cache_seqlens = {5, 9, 0, 0, 0, 0, 0, 0};
    batch_idx = {1, 0, 0, 0, 0, 0, 0, 0};
    leftpad = {1, 0, 0, 0, 0, 0, 0, 0};
    kv.q = fwd.q;
    kv.k_cache = f32(kc, {b, s_cache, hk, d});
    kv.v_cache = f32(vc, {b, s_cache, hk, dv});
    kv.cache_seqlens = i32(cache_seqlens, {b});
    kv.k_new = f32(kn, {b, s_new, hk, d});
    kv.v_new = f32(vn, {b, s_new, hk, dv});
    kv.rotary_cos = f32(cos, {s_cache, d / 4});
    kv.rotary_sin = f32(sin, {s_cache, d / 4});
    kv.out = fwd.out;
    kv.lse = fwd.lse;

    pkc = random(num_blocks * page * hk * d, seed++);
    pvc = random(num_blocks * page * hk * dv, seed++);
    table = {5, 0, 3, 1, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    paged.q = fwd.q;
    paged.k_cache = f32(pkc, {num_blocks, page, hk, d});
    paged.v_cache = f32(pvc, {num_blocks, page, hk, dv});
    paged.block_table = i32(table, {b, max_blocks});
    paged.cache_seqlens = i32(cache_seqlens, {b});
    paged.out = fwd.out;

    bwd.dout = f32(dout, {b, sq, h, dv});
    bwd.q = fwd.q;
    bwd.k = fwd.k;
    bwd.v = fwd.v;
    bwd.out = fwd.out;
    bwd.lse = fwd.lse;
    bwd.dq = f32(grad_q, {b, sq, h, d});
    bwd.dk = f32(grad_k, {b, sk, hk, d});
    bwd.dv = f32(grad_v, {b, sk, hk, dv});

    vbwd.dout = f32(vdout, {total_q, h, dv});
    vbwd.q = varlen.q;
    vbwd.k = varlen.k;
    vbwd.v = varlen.v;
    vbwd.out = varlen.out;
    vbwd.lse = varlen.lse;
    vbwd.cu_seqlens_q = varlen.cu_seqlens_q;
    vbwd.cu_seqlens_k = varlen.cu_seqlens_k;
    vbwd.max_seqlen_q = 5;
    vbwd.max_seqlen_k = 7;
    vbwd.dq = f32(vdq, {total_q, h, d});
    vbwd.dk = f32(vdk, {total_k, hk, d});
    vbwd.dv = f32(vdv, {total_k, hk, dv});

    op = random(3 * b * sq * h * dv, seed++);
    lp = random(3 * b * sq * h, seed++);
    cout = random(b * sq * h * dv, seed++);
    clse = random(b * sq * h, seed++);
    comb.out_partial = f32(op, {3, b, sq, h, dv});
    comb.lse_partial = f32(lp, {3, b, sq, h});
    comb.out = f32(cout, {b, sq, h, dv});
    comb.lse = f32(clse, {b, sq, h});
  }
};

enum class Op { forward, varlen, kvcache, paged, backward, varlen_backward, combine };

ExecutionContext reference_ctx() {
  ExecutionContext ctx;
  ctx.backend = Backend::cpu_reference;
  ctx.num_threads = 2;
  return ctx;
}

// Runs op on p with a sufficient workspace; when shapes_only, runs
// workspace_size instead (which validates shapes, dtypes and options only).
Status call(Op op, Problem& p, ExecutionContext ctx, bool shapes_only) {
  std::size_t bytes = 0;
  Status ws;
  switch (op) {
    case Op::forward:
      ws = workspace_size(p.fwd, ctx, &bytes);
      break;
    case Op::varlen:
      ws = workspace_size(p.varlen, ctx, &bytes);
      break;
    case Op::kvcache:
      ws = workspace_size(p.kv, ctx, &bytes);
      break;
    case Op::paged:
      ws = workspace_size(p.paged, ctx, &bytes);
      break;
    case Op::backward:
      ws = workspace_size(p.bwd, ctx, &bytes);
      break;
    case Op::varlen_backward:
      ws = workspace_size(p.vbwd, ctx, &bytes);
      break;
    case Op::combine:
      ws = workspace_size(p.comb, ctx, &bytes);
      break;
  }
  if (shapes_only || !ws.ok()) return ws;
  std::vector<std::uint8_t> workspace(bytes + 256);
  if (bytes > 0) {
    const auto base = reinterpret_cast<std::uintptr_t>(workspace.data());
    ctx.workspace = workspace.data() + ((256 - base % 256) % 256);
    ctx.workspace_bytes = bytes;
  }
  switch (op) {
    case Op::forward:
      return forward(p.fwd, ctx);
    case Op::varlen:
      return forward_varlen(p.varlen, ctx);
    case Op::kvcache:
      return forward_kvcache(p.kv, ctx);
    case Op::paged:
      return forward_kvcache(p.paged, ctx);
    case Op::backward:
      return backward(p.bwd, ctx);
    case Op::varlen_backward:
      return backward_varlen(p.vbwd, ctx);
    case Op::combine:
      return combine(p.comb, ctx);
  }
  return Status::error(ErrorCode::internal, "unreachable");
}

struct BadCase {
  const char* name;
  Op op;
  std::function<void(Problem&)> breaks;
  ErrorCode code;
  const char* message;    // substring of the expected message
  bool contents = false;  // detected only by reading index contents (not by workspace_size)
};

std::vector<BadCase> bad_cases() {
  const Device cuda0{DeviceType::cuda, 0};
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  using P = Problem;
  using E = ErrorCode;
  return {
      // --- dtypes
      {"q int32", Op::forward, [](P& p) { p.fwd.q.dtype = DType::int32; }, E::invalid_argument,
       "q: dtype int32"},
      {"k dtype differs", Op::forward, [](P& p) { p.fwd.k.dtype = DType::bfloat16; }, E::invalid_argument,
       "k: dtype bf16 differs from q dtype fp32"},
      {"out dtype differs", Op::forward, [](P& p) { p.fwd.out.dtype = DType::float16; }, E::invalid_argument,
       "out: dtype fp16 differs"},
      {"lse not fp32", Op::forward, [](P& p) { p.fwd.lse.dtype = DType::bfloat16; }, E::invalid_argument,
       "lse: dtype bf16, expected fp32"},
      {"invalid dtype value", Op::forward, [](P& p) { p.fwd.v.dtype = static_cast<DType>(9); },
       E::invalid_argument, "v: invalid dtype value 9"},
      {"cu_seqlens fp32", Op::varlen, [](P& p) { p.varlen.cu_seqlens_q.dtype = DType::float32; },
       E::invalid_argument, "cu_seqlens_q: dtype fp32, expected int32"},
      // --- ranks and shapes
      {"q rank 3", Op::forward, [](P& p) { p.fwd.q.rank = 3; }, E::invalid_argument, "q: rank 3, expected 4"},
      {"q missing", Op::forward, [](P& p) { p.fwd.q = TensorView{}; }, E::invalid_argument, "q: required"},
      {"k head dim", Op::forward,
       [](P& p) {
         p.fwd.k.shape[3] = 72;
         p.fwd.q.shape[3] = 64;
         p.fwd.q.stride[2] = 64;
         p.fwd.q.stride[1] = 64 * P::h;
         p.fwd.q.stride[0] = 64 * P::h * P::sq;
       },
       E::invalid_argument, "k: head dim 72 differs from q head dim 64"},
      {"k batch", Op::forward, [](P& p) { p.fwd.k.shape[0] = 1; }, E::invalid_argument,
       "k: batch 1 differs from q batch 2"},
      {"v keys", Op::forward, [](P& p) { p.fwd.v.shape[1] = 6; }, E::invalid_argument,
       "v: key count 6 differs from k key count 7"},
      {"h not multiple of hk", Op::forward,
       [](P& p) {
         p.fwd.k.shape[2] = 3;
         p.fwd.v.shape[2] = 3;
       },
       E::invalid_argument, "q: 4 heads is not a multiple of k's 3 heads"},
      {"zero kv heads", Op::forward, [](P& p) { p.fwd.k.shape[2] = 0; }, E::invalid_argument,
       "k: the head count is 0"},
      {"out shape", Op::forward, [](P& p) { p.fwd.out.shape[3] = 16; }, E::invalid_argument,
       "out: shape (2, 5, 4, 16), expected (b, sq, h, dv) = (2, 5, 4, 8)"},
      {"lse shape", Op::forward, [](P& p) { p.fwd.lse.shape[2] = 4; }, E::invalid_argument,
       "lse: shape (2, 4, 4)"},
      {"negative size", Op::forward, [](P& p) { p.fwd.q.shape[1] = -3; }, E::invalid_argument,
       "q: size -3 of dim 1 is negative"},
      {"huge size", Op::forward, [](P& p) { p.fwd.k.shape[1] = i64{1} << 40; }, E::invalid_argument,
       "k: size 1099511627776 of dim 1 exceeds"},
      {"last-dim stride", Op::forward, [](P& p) { p.fwd.v.stride[3] = 2; }, E::invalid_argument,
       "v: last-dim stride 2, expected 1"},
      {"stride overflow", Op::forward, [](P& p) { p.fwd.q.stride[0] = i64{1} << 62; }, E::invalid_argument,
       "q: shape (2, 5, 4, 16) with strides"},
      {"null data", Op::forward, [](P& p) { p.fwd.k.data = nullptr; }, E::invalid_argument,
       "k: data is null but the tensor has 448 elements", true},
      {"misaligned data", Op::forward, [](P& p) { p.fwd.q.data = reinterpret_cast<char*>(p.fwd.q.data) + 1; },
       E::invalid_argument, "q: data", true},
      {"out aliases q", Op::forward, [](P& p) { p.fwd.out.data = p.fwd.q.data; }, E::invalid_argument,
       "out: memory overlaps input q", true},
      {"out self-overlap", Op::forward, [](P& p) { p.fwd.out.stride[1] = 0; }, E::invalid_argument,
       "out: strides", true},
      // --- devices and backends
      {"device mix", Op::forward, [cuda0](P& p) { p.fwd.k.device = cuda0; }, E::invalid_argument,
       "k: on cuda:0 but q is on cpu"},
      {"explicit cuda backend on cpu tensors", Op::forward, [](P&) {}, E::invalid_argument,
       "ctx.backend: cuda_sm80 runs on cuda tensors, but the tensors are on cpu"},
      // --- options
      {"window < -1", Op::forward, [](P& p) { p.fwd.options.window.left = -2; }, E::invalid_argument,
       "options.window.left: -2"},
      {"causal with right window", Op::forward,
       [](P& p) {
         p.fwd.options.causal = true;
         p.fwd.options.window.right = 3;
       },
       E::invalid_argument, "options.window.right: 3 contradicts options.causal"},
      {"softcap negative", Op::forward, [](P& p) { p.fwd.options.softcap = -1.f; }, E::invalid_argument,
       "options.softcap: -1"},
      {"softcap inf", Op::forward, [inf](P& p) { p.fwd.options.softcap = inf; }, E::invalid_argument,
       "options.softcap: inf"},
      {"scale nan", Op::forward, [nan](P& p) { p.fwd.options.softmax_scale = nan; }, E::invalid_argument,
       "options.softmax_scale: nan is not finite"},
      {"dropout 1", Op::forward, [](P& p) { p.fwd.options.dropout.p = 1.f; }, E::invalid_argument,
       "options.dropout.p: 1, must be in [0, 1)"},
      {"dropout in kvcache", Op::kvcache, [](P& p) { p.kv.options.dropout.p = 0.1f; }, E::invalid_argument,
       "forward_kvcache does not support dropout"},
      {"alibi shape", Op::forward, [](P& p) { p.fwd.options.alibi_slopes = Problem::f32(p.alibi, {3}); },
       E::invalid_argument, "options.alibi_slopes: shape (3), expected (h) = (4) or (b, h) = (2, 4)"},
      {"alibi dtype", Op::forward,
       [](P& p) {
         p.fwd.options.alibi_slopes = Problem::f32(p.alibi, {2, 4});
         p.fwd.options.alibi_slopes.dtype = DType::float16;
       },
       E::invalid_argument, "options.alibi_slopes: dtype fp16, expected fp32"},
      {"bias rank", Op::forward, [](P& p) { p.fwd.options.bias = Problem::f32(p.bias, {7}); },
       E::invalid_argument, "options.bias: rank 1, expected 4"},
      {"bias keys", Op::forward,
       [](P& p) {
         p.fwd.options.bias = Problem::f32(p.bias, {2, 4, 5, 6});
       },
       E::invalid_argument,
       "options.bias: shape (2, 4, 5, 6), expected (B, H, SQ, sk) with B in {1, 2}, H in {1, 4}, SQ in {1, "
       "5}, "
       "sk = 7"},
      {"bias heads", Op::backward,
       [](P& p) {
         p.bwd.options.bias = Problem::f32(p.bias, {2, 5, 7});
       },
       E::invalid_argument, "options.bias: shape (2, 5, 7), expected (B, H, SQ, sk)"},
      {"bias dtype", Op::forward,
       [](P& p) {
         p.fwd.options.bias = Problem::f32(p.bias, {5, 7});
         p.fwd.options.bias.dtype = DType::int32;
       },
       E::invalid_argument, "options.bias: dtype int32, expected fp32, bool or q's dtype fp32"},
      {"bias stride", Op::forward,
       [](P& p) {
         p.fwd.options.bias = TensorView::strided(p.bias.data(), DType::float32, {5, 7}, {14, 2});
       },
       E::invalid_argument, "options.bias: last-dim stride 2, expected 1"},
      {"bias in varlen", Op::varlen,
       [](P& p) {
         p.varlen.options.bias = Problem::f32(p.bias, {5, 7});
       },
       E::invalid_argument, "options.bias: given, but forward_varlen does not take a bias"},
      {"bias in kvcache", Op::kvcache,
       [](P& p) {
         p.kv.options.bias = Problem::f32(p.bias, {5, 7});
       },
       E::invalid_argument, "options.bias: given, but forward_kvcache does not take a bias"},
      {"bias in varlen backward", Op::varlen_backward,
       [](P& p) {
         p.vbwd.options.bias = Problem::f32(p.bias, {5, 7});
       },
       E::invalid_argument, "options.bias: given, but backward_varlen does not take a bias"},
      {"sink shape", Op::forward, [](P& p) { p.fwd.options.sink = Problem::f32(p.sink, {2}); },
       E::invalid_argument, "options.sink: shape (2), expected (h) = (4)"},
      {"dsink without sink", Op::backward, [](P& p) { p.bwd.dsink = Problem::f32(p.dsink, {4}); },
       E::invalid_argument, "dsink: given without options.sink"},
      {"sink without dsink", Op::backward, [](P& p) { p.bwd.options.sink = Problem::f32(p.sink, {4}); },
       E::invalid_argument, "dsink: required because options.sink is given"},
      {"backward lse missing", Op::backward, [](P& p) { p.bwd.lse = TensorView{}; }, E::invalid_argument,
       "lse: required"},
      {"backward dk shape", Op::backward, [](P& p) { p.bwd.dk.shape[1] = 6; }, E::invalid_argument,
       "dk: shape (2, 6, 2, 16), expected (b, sk, hk, d) = (2, 7, 2, 16)"},
      {"num_threads negative", Op::forward, [](P&) {}, E::invalid_argument, "ctx.num_threads: -1"},
      // --- varlen indices
      {"cu_seqlens_k length", Op::varlen, [](P& p) { p.varlen.cu_seqlens_k.shape[0] = 4; },
       E::invalid_argument, "cu_seqlens_k: 4 entries differs from cu_seqlens_q's 3"},
      {"cu_seqlens_q[0] != 0", Op::varlen, [](P& p) { p.cu_q[0] = 1; }, E::invalid_argument,
       "cu_seqlens_q: entry 0 is 1, expected 0", true},
      {"cu_seqlens decreasing", Op::varlen,
       [](P& p) {
         p.cu_q = {0, 5, 17, 12, 0, 0, 0, 0};
         p.varlen.cu_seqlens_q.shape[0] = 4;
         p.varlen.cu_seqlens_k.shape[0] = 4;
         p.varlen.max_seqlen_q = 100;
       },
       E::invalid_argument, "cu_seqlens_q: not non-decreasing at index 3 (17 > 12)", true},
      {"cu_seqlens past rows", Op::varlen, [](P& p) { p.cu_k[2] = 13; }, E::invalid_argument,
       "cu_seqlens_k: last entry 13 exceeds the 12 rows of k", true},
      {"length > max_seqlen", Op::varlen, [](P& p) { p.varlen.max_seqlen_q = 4; }, E::invalid_argument,
       "cu_seqlens_q: sequence 1 has length 5, more than max_seqlen_q 4", true},
      {"max_seqlen negative", Op::varlen, [](P& p) { p.varlen.max_seqlen_k = -1; }, E::invalid_argument,
       "max_seqlen_k: -1"},
      {"seqused > length", Op::varlen,
       [](P& p) {
         p.varlen.seqused_k = Problem::i32(p.used_k, {2});
         p.used_k[1] = 6;
       },
       E::invalid_argument, "seqused_k: entry 1 is 6, outside [0, 5]", true},
      {"seqused shape", Op::varlen, [](P& p) { p.varlen.seqused_q = Problem::i32(p.used_q, {3}); },
       E::invalid_argument, "seqused_q: shape (3), expected (b) = (2)"},
      {"varlen lse layout", Op::varlen,
       [](P& p) {
         p.varlen.lse = Problem::f32(p.vlse, {P::total_q, P::h});
       },
       E::invalid_argument, "lse: shape (9, 4), expected (h, total_q) = (4, 9)"},
      {"varlen backward cu contents", Op::varlen_backward,
       [](P& p) {
         p.cu_k[1] = 13;
         p.vbwd.max_seqlen_k = 20;
       },
       E::invalid_argument, "cu_seqlens_k: not non-decreasing at index 2 (13 > 12)", true},
      // --- paged KV
      {"paged block out of range", Op::paged, [](P& p) { p.table[1] = 6; }, E::invalid_argument,
       "block_table: entry (0, 1) is 6, outside [0, 6)", true},
      {"paged negative block", Op::paged, [](P& p) { p.table[3] = -1; }, E::invalid_argument,
       "block_table: entry (1, 0) is -1", true},
      {"paged page_size 0", Op::paged,
       [](P& p) {
         p.paged.k_cache.shape[1] = 0;
         p.paged.v_cache.shape[1] = 0;
       },
       E::invalid_argument, "k_cache: page_size (shape[1]) is 0"},
      {"paged block_table dtype", Op::paged, [](P& p) { p.paged.block_table.dtype = DType::float32; },
       E::invalid_argument, "block_table: dtype fp32, expected int32"},
      {"paged with cache_batch_idx", Op::paged,
       [](P& p) { p.paged.cache_batch_idx = Problem::i32(p.batch_idx, {2}); }, E::invalid_argument,
       "cache_batch_idx: not supported with a paged cache"},
      {"varlen paged block", Op::varlen,
       [](P& p) {
         p.varlen.k = Problem::f32(p.pkc, {P::num_blocks, P::page, P::hk, P::d});
         p.varlen.v = Problem::f32(p.pvc, {P::num_blocks, P::page, P::hk, P::dv});
         p.varlen.block_table = Problem::i32(p.table, {P::b, P::max_blocks});
         p.table[4] = 9;
       },
       E::invalid_argument, "block_table: entry (1, 1) is 9", true},
      // --- KV cache
      {"cache overflow", Op::kvcache, [](P& p) { p.cache_seqlens[1] = 15; }, E::invalid_argument,
       "cache_seqlens: entry 1 is 15; with 2 new rows", true},
      {"leftpad > seqlens", Op::kvcache,
       [](P& p) {
         p.kv.cache_leftpad = Problem::i32(p.leftpad, {2});
         p.leftpad[0] = 6;
       },
       E::invalid_argument, "cache_leftpad: entry 0 is 6, outside [0, 5]", true},
      {"k_new without v_new", Op::kvcache, [](P& p) { p.kv.v_new = TensorView{}; }, E::invalid_argument,
       "k_new: given without v_new"},
      {"rotary without k_new", Op::kvcache,
       [](P& p) {
         p.kv.k_new = TensorView{};
         p.kv.v_new = TensorView{};
       },
       E::invalid_argument, "rotary_cos: rotary embedding needs new keys"},
      {"rotary_dim > d", Op::kvcache,
       [](P& p) {
         p.cos.resize(1000);
         p.sin.resize(1000);
         p.kv.rotary_cos = Problem::f32(p.cos, {P::s_cache, 9});
         p.kv.rotary_sin = Problem::f32(p.sin, {P::s_cache, 9});
       },
       E::invalid_argument, "rotary_dim = 2 * 9 columns = 18, must be in [2, head dim 16]"},
      {"cos/sin shape", Op::kvcache, [](P& p) { p.kv.rotary_sin.shape[0] = 8; }, E::invalid_argument,
       "rotary_sin: shape (8, 4), expected rotary_cos's shape = (16, 4)"},
      {"rotary table too short", Op::kvcache,
       [](P& p) {
         p.kv.rotary_cos.shape[0] = 10;
         p.kv.rotary_sin.shape[0] = 10;
       },
       E::invalid_argument, "rotary_cos: 10 rows, but sequence 1 needs positions up to 10", true},
      {"cache_batch_idx out of range", Op::kvcache,
       [](P& p) {
         p.kv.cache_batch_idx = Problem::i32(p.batch_idx, {2});
         p.batch_idx[1] = 2;
       },
       E::invalid_argument, "cache_batch_idx: entry 1 is 2, outside [0, 2)", true},
      {"num_splits negative", Op::kvcache, [](P& p) { p.kv.num_splits = -1; }, E::invalid_argument,
       "num_splits: -1"},
      {"num_splits too large", Op::kvcache, [](P& p) { p.kv.num_splits = 1000; }, E::invalid_argument,
       "num_splits: 1000, must be in [0, 256]"},
      {"forward num_splits negative", Op::forward, [](P& p) { p.fwd.num_splits = -2; }, E::invalid_argument,
       "num_splits: -2, must be in [0, 256] (0 = heuristic, 1 = no split)"},
      {"varlen num_splits too large", Op::varlen, [](P& p) { p.varlen.num_splits = 257; },
       E::invalid_argument, "num_splits: 257"},
      {"append without cache_seqlens", Op::kvcache,
       [](P& p) {
         p.kv.cache_seqlens = TensorView{};
         p.kv.rotary_cos = TensorView{};
         p.kv.rotary_sin = TensorView{};
       },
       E::invalid_argument, "k_new: 2 new rows but no cache_seqlens"},
      {"k_cache batch without idx", Op::kvcache,
       [](P& p) {
         p.kv.k_cache.shape[0] = 1;
         p.kv.v_cache.shape[0] = 1;
       },
       E::invalid_argument, "k_cache: batch 1 differs from q batch 2"},
      {"k_new heads", Op::kvcache, [](P& p) { p.kv.k_new.shape[2] = 1; }, E::invalid_argument,
       "k_new: shape (2, 2, 1, 16), expected (b, s_new, hk, d) = (2, 2, 2, 16)"},
      // --- combine
      {"combine lse_partial shape", Op::combine, [](P& p) { p.comb.lse_partial.shape[0] = 2; },
       E::invalid_argument, "lse_partial: shape (2, 2, 5, 4), expected (splits, b, sq, h) = (3, 2, 5, 4)"},
      {"combine out_partial dtype", Op::combine, [](P& p) { p.comb.out_partial.dtype = DType::bfloat16; },
       E::invalid_argument, "out_partial: dtype bf16, expected fp32"},
      {"combine out shape", Op::combine, [](P& p) { p.comb.out.shape[3] = 4; }, E::invalid_argument,
       "out: shape (2, 5, 4, 4), expected (b, sq, h, dv) = (2, 5, 4, 8)"},
      {"combine zero splits", Op::combine,
       [](P& p) {
         p.comb.out_partial.shape[0] = 0;
         p.comb.lse_partial.shape[0] = 0;
       },
       E::invalid_argument, "out_partial: 0 splits"},
  };
}

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, RejectedWithMessageNamingTheArgument) {
  const BadCase& c = GetParam();
  Problem p;
  const ExecutionContext good_ctx = reference_ctx();
  const Status unbroken = call(c.op, p, good_ctx, false);
  ASSERT_TRUE(unbroken.ok()) << "the unbroken problem must be valid: " << unbroken.message();

  // Rows about the context carry their breakage here.
  ExecutionContext ctx = good_ctx;
  const std::string name = c.name;
  if (name == "explicit cuda backend on cpu tensors") ctx.backend = Backend::cuda_sm80;
  if (name == "num_threads negative") ctx.num_threads = -1;
  Problem broken;
  c.breaks(broken);
  const Status shapes = call(c.op, broken, ctx, /*shapes_only=*/true);
  if (c.contents) {
    EXPECT_TRUE(shapes.ok()) << "workspace_size must not look at pointers or contents: " << shapes.message();
  } else {
    EXPECT_EQ(shapes.code(), c.code) << shapes.message();
    EXPECT_NE(std::string(shapes.message()).find(c.message), std::string::npos)
        << "message: " << shapes.message() << "\nexpected to contain: " << c.message;
  }
  const Status status = call(c.op, broken, ctx, false);
  EXPECT_EQ(status.code(), c.code) << error_code_name(status.code()) << ": " << status.message();
  EXPECT_NE(std::string(status.message()).find(c.message), std::string::npos)
      << "message: " << status.message() << "\nexpected to contain: " << c.message;
}

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) {
  std::string name = info.param.name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Table, BadInput, ::testing::ValuesIn(bad_cases()), case_name);

TEST(Validation, TableIsLarge) { EXPECT_GE(bad_cases().size(), 35u); }

TEST(Validation, ExplicitBackendNotCompiled) {
  if (backend_compiled(Backend::cuda_sm80)) GTEST_SKIP() << "cuda_sm80 is compiled in";
  Problem p;
  for (TensorView* t : {&p.fwd.q, &p.fwd.k, &p.fwd.v, &p.fwd.out, &p.fwd.lse})
    t->device = {DeviceType::cuda, 0};
  ExecutionContext ctx;
  ctx.backend = Backend::cuda_sm80;
  KernelChoice choice;
  Status status = select_kernel(p.fwd, ctx, &choice);
  EXPECT_EQ(status.code(), ErrorCode::unsupported);
  EXPECT_NE(std::string(status.message()).find("cuda_sm80 is not compiled"), std::string::npos)
      << status.message();
  ctx.backend = Backend::automatic;
  status = select_kernel(p.fwd, ctx, &choice);
  EXPECT_EQ(status.code(), ErrorCode::unsupported);
  EXPECT_NE(std::string(choice.reason).find("cuda_sm80"), std::string::npos) << choice.reason;
}

TEST(Validation, WorkspaceTooSmallNamesBothSizes) {
  Problem p;
  ExecutionContext ctx;  // automatic -> cpu_tiled
  std::size_t bytes = 0;
  ASSERT_TRUE(workspace_size(p.kv, ctx, &bytes).ok());
  if (bytes == 0) GTEST_SKIP() << "the backend needs no workspace for this problem";
  Status status = forward_kvcache(p.kv, ctx);
  EXPECT_EQ(status.code(), ErrorCode::invalid_argument);
  EXPECT_NE(std::string(status.message()).find("ctx.workspace: null"), std::string::npos) << status.message();
  alignas(256) static std::uint8_t small[256];
  ctx.workspace = small;
  ctx.workspace_bytes = bytes - 1;
  status = forward_kvcache(p.kv, ctx);
  EXPECT_EQ(status.code(), ErrorCode::invalid_argument);
  const std::string expected = "ctx.workspace_bytes: " + std::to_string(bytes - 1) + " given";
  EXPECT_NE(std::string(status.message()).find(expected), std::string::npos) << status.message();
  EXPECT_NE(std::string(status.message()).find(std::to_string(bytes) + " bytes"), std::string::npos);
  std::vector<std::uint8_t> big(bytes + 512);
  auto base = reinterpret_cast<std::uintptr_t>(big.data());
  ctx.workspace = big.data() + ((256 - base % 256) % 256) + 8;  // misaligned
  ctx.workspace_bytes = bytes;
  status = forward_kvcache(p.kv, ctx);
  EXPECT_NE(std::string(status.message()).find("not 256-byte aligned"), std::string::npos)
      << status.message();
}

TEST(Validation, NullOutParameters) {
  Problem p;
  EXPECT_EQ(workspace_size(p.fwd, ExecutionContext{}, nullptr).code(), ErrorCode::invalid_argument);
  EXPECT_EQ(select_kernel(p.fwd, ExecutionContext{}, nullptr).code(), ErrorCode::invalid_argument);
}

TEST(Validation, MessagesAreTruncatedNotOverflowed) {
  std::string long_text(2000, 'x');
  Status status = Status::error(ErrorCode::invalid_argument, "%s", long_text.c_str());
  EXPECT_EQ(std::strlen(status.message()), Status::kMaxMessage - 1);
  EXPECT_FALSE(status.ok());
  EXPECT_STREQ(error_code_name(ErrorCode::unsupported), "unsupported");
}

// ---------------------------------------------------------------------------
// Good edge cases.

constexpr float kPoison = -12345.f;

TEST(EdgeCases, EmptyBatchAndEmptyQueriesSucceedWithoutWriting) {
  for (Backend backend : {Backend::cpu_reference, Backend::cpu_tiled}) {
    Problem p;
    ExecutionContext ctx;
    ctx.backend = backend;
    std::fill(p.out.begin(), p.out.end(), kPoison);
    std::fill(p.lse.begin(), p.lse.end(), kPoison);
    for (i64 dim : {0, 1}) {
      Problem e;
      std::fill(e.out.begin(), e.out.end(), kPoison);
      e.fwd.q.shape[dim] = 0;
      e.fwd.out.shape[dim] = 0;
      e.fwd.lse.shape[dim == 0 ? 0 : 2] = 0;
      if (dim == 0) {
        e.fwd.k.shape[0] = 0;
        e.fwd.v.shape[0] = 0;
      }
      std::size_t bytes = 1;
      ASSERT_TRUE(workspace_size(e.fwd, ctx, &bytes).ok());
      EXPECT_EQ(bytes, 0u);
      Status status = forward(e.fwd, ctx);
      EXPECT_TRUE(status.ok()) << status.message();
      for (float x : e.out) ASSERT_EQ(x, kPoison);
    }
    // Varlen with b = 0: cu_seqlens has one entry.
    Problem e;
    e.varlen.cu_seqlens_q.shape[0] = 1;
    e.varlen.cu_seqlens_k.shape[0] = 1;
    Status status = forward_varlen(e.varlen, ctx);
    EXPECT_TRUE(status.ok()) << status.message();
  }
}

TEST(EdgeCases, NoKeysGivesZeroOutputAndMinusInfLse) {
  for (Backend backend : {Backend::cpu_reference, Backend::cpu_tiled}) {
    Problem p;
    ExecutionContext ctx;
    ctx.backend = backend;
    p.fwd.k.shape[1] = 0;
    p.fwd.v.shape[1] = 0;
    std::fill(p.out.begin(), p.out.end(), kPoison);
    std::fill(p.lse.begin(), p.lse.end(), kPoison);
    std::size_t bytes = 0;
    ASSERT_TRUE(workspace_size(p.fwd, ctx, &bytes).ok());
    std::vector<std::uint8_t> ws(bytes + 256);
    auto base = reinterpret_cast<std::uintptr_t>(ws.data());
    ctx.workspace = ws.data() + ((256 - base % 256) % 256);
    ctx.workspace_bytes = bytes;
    Status status = forward(p.fwd, ctx);
    ASSERT_TRUE(status.ok()) << backend_name(backend) << ": " << status.message();
    for (float x : p.out) ASSERT_EQ(x, 0.f) << backend_name(backend);
    for (float x : p.lse) ASSERT_EQ(x, -std::numeric_limits<float>::infinity()) << backend_name(backend);
  }
}

TEST(EdgeCases, WindowsAreNormalisedWithoutChangingResults) {
  // A left window reaching key 0 from every query must equal no window.
  Problem a, b;
  b.fwd.options.window.left = Problem::sk - 1;
  b.fwd.options.window.right = Problem::sq + 100;
  ExecutionContext ctx = reference_ctx();
  ASSERT_TRUE(call(Op::forward, a, ctx, false).ok());
  ASSERT_TRUE(call(Op::forward, b, ctx, false).ok());
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.lse, b.lse);
}

// ---------------------------------------------------------------------------
// Inputs are never modified.

std::uint64_t hash(const void* data, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  const auto* p = static_cast<const std::uint8_t*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
template <class T>
std::uint64_t hash(const std::vector<T>& x) {
  return hash(x.data(), x.size() * sizeof(T));
}

TEST(Validation, InputsAreNotModified) {
  for (Backend backend : {Backend::cpu_reference, Backend::cpu_tiled}) {
    Problem p;
    p.fwd.options.alibi_slopes = Problem::f32(p.alibi, {2, 4});
    p.kv.k_new = TensorView{};  // without k_new the cache is an input too
    p.kv.v_new = TensorView{};
    p.kv.rotary_cos = TensorView{};
    p.kv.rotary_sin = TensorView{};
    p.varlen.seqused_q = Problem::i32(p.used_q, {2});
    p.bwd.options.sink = Problem::f32(p.sink, {4});
    p.bwd.dsink = Problem::f32(p.dsink, {4});
    auto inputs = [&] {
      return std::vector<std::uint64_t>{
          hash(p.q),      hash(p.k),  hash(p.v),   hash(p.alibi),         hash(p.sink),
          hash(p.vq),     hash(p.vk), hash(p.vv),  hash(p.cu_q),          hash(p.cu_k),
          hash(p.used_q), hash(p.kc), hash(p.vc),  hash(p.cache_seqlens), hash(p.dout),
          hash(p.op),     hash(p.lp), hash(p.pkc), hash(p.table)};
    };
    const auto before = inputs();
    ExecutionContext ctx;
    ctx.backend = backend;
    for (Op op : {Op::forward, Op::varlen, Op::kvcache, Op::paged, Op::combine}) {
      Status status = call(op, p, ctx, false);
      EXPECT_TRUE(status.ok()) << backend_name(backend) << ": " << status.message();
    }
    // Backward reads the forward's out and lse: produce them first.
    ASSERT_TRUE(call(Op::forward, p, ctx, false).ok());
    const std::uint64_t out_hash = hash(p.out), lse_hash = hash(p.lse);
    Status status = call(Op::backward, p, ctx, false);
    if (status.code() != ErrorCode::unsupported) {
      EXPECT_TRUE(status.ok()) << backend_name(backend) << ": " << status.message();
      EXPECT_EQ(out_hash, hash(p.out));
      EXPECT_EQ(lse_hash, hash(p.lse));
    }
    EXPECT_EQ(before, inputs()) << backend_name(backend);
  }
}

}  // namespace
}  // namespace flashattn
