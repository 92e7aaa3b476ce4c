// Argument checking for every entry point; see validate.h for the contract.
//
// Layout of this file: generic tensor checks (rank, sizes, strides, dtype,
// pointer, device, overlap), then option resolution (scale, softcap, window,
// ALiBi, sink, dropout), then index-tensor contents, then one validate() per
// operation that strings these together and fills the params.
#include "api/validate.h"

#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace flashattn::detail {

const char* operation_name(Operation op) noexcept {
  switch (op) {
    case Operation::forward:
      return "forward";
    case Operation::forward_varlen:
      return "forward_varlen";
    case Operation::forward_kvcache:
      return "forward_kvcache";
    case Operation::backward:
      return "backward";
    case Operation::backward_varlen:
      return "backward_varlen";
    case Operation::combine:
      return "combine";
  }
  return "invalid-operation";
}

namespace {

using i64 = std::int64_t;
using ll = long long;

// Every size fits in int32: sequence offsets, block tables and cache lengths are
// int32 tensors, and CUDA grids index with 32-bit block counts. Element offsets
// (products of sizes and strides) stay 64-bit.
constexpr i64 kMaxSize = INT32_MAX;
constexpr int kMaxSplits = 256;

#define INVALID(...) ::flashattn::Status::error(::flashattn::ErrorCode::invalid_argument, __VA_ARGS__)
#define RETURN_IF_ERROR FLASHATTN_RETURN_IF_ERROR

// ---------------------------------------------------------------------------
// Text for messages (fixed buffers: the error path allocates nothing).

struct Text {
  char s[160];
};

Text dims_text(const i64* dims, int rank) {
  Text text{};
  int used = std::snprintf(text.s, sizeof text.s, "(");
  for (int i = 0; i < rank && used > 0 && used < static_cast<int>(sizeof text.s); ++i) {
    used +=
        std::snprintf(text.s + used, sizeof text.s - used, i ? ", %lld" : "%lld", static_cast<ll>(dims[i]));
  }
  if (used > 0 && used < static_cast<int>(sizeof text.s))
    std::snprintf(text.s + used, sizeof text.s - used, ")");
  return text;
}

Text device_text(Device device) {
  Text text{};
  if (device.type == DeviceType::cpu) {
    std::snprintf(text.s, sizeof text.s, "cpu");
  } else if (device.type == DeviceType::cuda) {
    std::snprintf(text.s, sizeof text.s, "cuda:%d", device.index);
  } else {
    std::snprintf(text.s, sizeof text.s, "invalid-device-type-%d", static_cast<int>(device.type));
  }
  return text;
}

bool same_device(Device a, Device b) {
  return a.type == b.type && (a.type == DeviceType::cpu || a.index == b.index);
}

bool valid_dtype(DType dtype) { return dtype_size(dtype) != 0; }

// ---------------------------------------------------------------------------
// One tensor on its own.

// [lo, hi] element offsets a view reaches (relative to data), when it has elements.
// False when the arithmetic overflows 64 bits.
bool element_extent(const TensorView& t, i64* lo, i64* hi) {
  *lo = 0;
  *hi = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0) continue;
    i64 reach;
    if (__builtin_mul_overflow(t.stride[d], t.shape[d] - 1, &reach)) return false;
    if (reach < 0 ? __builtin_add_overflow(*lo, reach, lo) : __builtin_add_overflow(*hi, reach, hi))
      return false;
  }
  return true;
}

i64 numel_of(const TensorView& t) {
  i64 n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[d];  // sizes are checked to be in [0, 2^31) first
  return n;
}

// Byte range [begin, end) a view touches; empty when it has no elements.
struct Span {
  std::uintptr_t begin = 0, end = 0;
  bool empty() const { return begin == end; }
};

Span byte_span(const TensorView& t) {
  Span span;
  if (!t.defined() || numel_of(t) == 0) return span;
  i64 lo, hi;
  element_extent(t, &lo, &hi);  // checked not to overflow by check_view
  const i64 size = static_cast<i64>(dtype_size(t.dtype));
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(t.data);
  span.begin = base + static_cast<std::uintptr_t>(lo * size);
  span.end = base + static_cast<std::uintptr_t>((hi + 1) * size);
  return span;
}

// The rank, sizes, strides and pointer of a view (not its dtype). Layout names
// the dims for messages, e.g. "(b, sq, h, d)".
Status check_view(const TensorView& t, const char* name, int rank, const char* layout, CheckMode mode) {
  if (!t.defined()) return INVALID("%s: required but not given (expected %s)", name, layout);
  if (t.rank != rank) return INVALID("%s: rank %d, expected %d %s", name, t.rank, rank, layout);
  if (!valid_dtype(t.dtype)) return INVALID("%s: invalid dtype value %d", name, static_cast<int>(t.dtype));
  for (int d = 0; d < rank; ++d) {
    if (t.shape[d] < 0) {
      return INVALID("%s: size %lld of dim %d is negative (shape %s)", name, static_cast<ll>(t.shape[d]), d,
                     dims_text(t.shape, rank).s);
    }
    if (t.shape[d] > kMaxSize) {
      return INVALID("%s: size %lld of dim %d exceeds %lld (shape %s)", name, static_cast<ll>(t.shape[d]), d,
                     static_cast<ll>(kMaxSize), dims_text(t.shape, rank).s);
    }
  }
  if (t.stride[rank - 1] != 1) {
    return INVALID("%s: last-dim stride %lld, expected 1 (the last dim must be contiguous)", name,
                   static_cast<ll>(t.stride[rank - 1]));
  }
  // Element count and byte extent must fit in 64 bits, so that every offset a
  // backend computes from these shapes and strides is free of overflow.
  i64 numel = 1;
  for (int d = 0; d < rank; ++d) {
    if (__builtin_mul_overflow(numel, t.shape[d], &numel)) {
      return INVALID("%s: shape %s has more than 2^63 elements", name, dims_text(t.shape, rank).s);
    }
  }
  i64 lo, hi, reach, bytes;
  if (!element_extent(t, &lo, &hi) || __builtin_sub_overflow(hi, lo, &reach) ||
      __builtin_add_overflow(reach, 1, &reach) ||
      __builtin_mul_overflow(reach, static_cast<i64>(dtype_size(t.dtype)), &bytes)) {
    return INVALID("%s: shape %s with strides %s overflows 64-bit offsets", name, dims_text(t.shape, rank).s,
                   dims_text(t.stride, rank).s);
  }
  if (mode == CheckMode::full) {
    if (t.data == nullptr && numel > 0) {
      return INVALID("%s: data is null but the tensor has %lld elements", name, static_cast<ll>(numel));
    }
    const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(t.data);
    if (base % dtype_size(t.dtype) != 0) {
      return INVALID("%s: data %p is not aligned to its %zu-byte %s elements", name, t.data,
                     dtype_size(t.dtype), dtype_name(t.dtype));
    }
    const i64 size = static_cast<i64>(dtype_size(t.dtype));
    if (numel > 0 && (static_cast<std::uintptr_t>(-lo) * size > base ||
                      static_cast<std::uintptr_t>(hi + 1) * size > UINTPTR_MAX - base)) {
      return INVALID("%s: strides %s reach outside the address space from data %p", name,
                     dims_text(t.stride, rank).s, t.data);
    }
  }
  return Status();
}

bool is_float(DType dtype) {
  return dtype == DType::float16 || dtype == DType::bfloat16 || dtype == DType::float32;
}

Status check_float_dtype(const TensorView& t, const char* name) {
  if (!is_float(t.dtype))
    return INVALID("%s: dtype %s, expected fp16, bf16 or fp32", name, dtype_name(t.dtype));
  return Status();
}

Status check_dtype(const TensorView& t, const char* name, DType expected) {
  if (t.dtype != expected) {
    return INVALID("%s: dtype %s, expected %s", name, dtype_name(t.dtype), dtype_name(expected));
  }
  return Status();
}

Status check_same_dtype(const TensorView& t, const char* name, const TensorView& ref, const char* ref_name) {
  if (t.dtype != ref.dtype) {
    return INVALID("%s: dtype %s differs from %s dtype %s", name, dtype_name(t.dtype), ref_name,
                   dtype_name(ref.dtype));
  }
  return Status();
}

// "k: head dim 72 differs from q head dim 64"
Status check_size(const TensorView& t, const char* name, int dim, const char* what, i64 expected,
                  const char* source) {
  if (t.shape[dim] != expected) {
    return INVALID("%s: %s %lld differs from %s %s %lld", name, what, static_cast<ll>(t.shape[dim]), source,
                   what, static_cast<ll>(expected));
  }
  return Status();
}

// Whole-shape check for derived tensors (outputs, lse): "out: shape (2, 5, 4, 64), expected (b, sq, h, dv) =
// (2, 5, 4, 32)".
Status check_shape(const TensorView& t, const char* name, const char* layout,
                   std::initializer_list<i64> expected) {
  i64 dims[kMaxRank] = {};
  int rank = 0;
  for (i64 size : expected) dims[rank++] = size;
  bool equal = t.rank == rank;
  for (int d = 0; equal && d < rank; ++d) equal = t.shape[d] == dims[d];
  if (!equal) {
    return INVALID("%s: shape %s, expected %s = %s", name, dims_text(t.shape, t.rank).s, layout,
                   dims_text(dims, rank).s);
  }
  return Status();
}

Status check_positive(const TensorView& t, const char* name, int dim, const char* what) {
  if (t.shape[dim] < 1)
    return INVALID("%s: %s is %lld, must be at least 1", name, what, static_cast<ll>(t.shape[dim]));
  return Status();
}

// Outputs must not write one memory location twice (a race on parallel backends
// and a meaningless result). Sufficient test: ordered by stride, every dim steps
// past everything the smaller dims reach. Broadcast (stride 0) dims of size > 1 fail it.
Status check_no_self_overlap(const TensorView& t, const char* name) {
  int order[kMaxRank];
  int n = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] > 1) order[n++] = d;
  }
  auto magnitude = [&](int d) { return t.stride[d] < 0 ? -t.stride[d] : t.stride[d]; };
  for (int i = 1; i < n; ++i) {  // insertion sort by |stride|; at most 5 dims
    for (int j = i; j > 0 && magnitude(order[j]) < magnitude(order[j - 1]); --j) {
      const int tmp = order[j];
      order[j] = order[j - 1];
      order[j - 1] = tmp;
    }
  }
  i64 reach = 0;  // largest offset the smaller dims reach
  for (int i = 0; i < n; ++i) {
    const int d = order[i];
    if (magnitude(d) <= reach) {
      return INVALID(
          "%s: strides %s for shape %s make distinct elements share memory (outputs must not overlap)", name,
          dims_text(t.stride, t.rank).s, dims_text(t.shape, t.rank).s);
    }
    reach += magnitude(d) * (t.shape[d] - 1);  // no overflow: check_view bounded the extent
  }
  return Status();
}

// ---------------------------------------------------------------------------
// All tensors of a call together: one device, and outputs disjoint from inputs.

struct Role {
  const TensorView* tensor;
  const char* name;
  bool output;
};

constexpr int kMaxRoles = 24;

struct Roles {
  Role items[kMaxRoles];
  int count = 0;
  void add(const TensorView& t, const char* name, bool output) {
    if (t.defined() && count < kMaxRoles) items[count++] = Role{&t, name, output};
  }
};

Status check_devices_and_memory(const Roles& roles, CheckMode mode, Device* device) {
  const Role& first = roles.items[0];
  *device = first.tensor->device;
  if (device->type != DeviceType::cpu && device->type != DeviceType::cuda) {
    return INVALID("%s: invalid device type %d", first.name, static_cast<int>(device->type));
  }
  if (device->type == DeviceType::cuda && device->index < 0) {
    return INVALID("%s: device cuda:%d has a negative index", first.name, device->index);
  }
  for (int i = 1; i < roles.count; ++i) {
    const Role& role = roles.items[i];
    if (!same_device(role.tensor->device, *device)) {
      return INVALID("%s: on %s but %s is on %s (all tensors of a call must share one device)", role.name,
                     device_text(role.tensor->device).s, first.name, device_text(*device).s);
    }
  }
#if FLASHATTN_WITH_CUDA
  // The kernels run on the calling thread's current device, on the caller's stream: tensors of another device
  // would be reached through unified addressing (a fault without peer access) and sized for this device's
  // SMs. Without a usable device the check is left to the backends, which refuse the call.
  if (device->type == DeviceType::cuda) {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) {
      (void)cudaGetLastError();  // not left behind for the caller's next launch check
    } else if (current != device->index) {
      return INVALID(
          "%s: on cuda:%d but the current CUDA device is %d (make cuda:%d current, cudaSetDevice, "
          "and pass a stream of it)",
          first.name, device->index, current, device->index);
    }
  }
#endif
  if (mode != CheckMode::full) return Status();
  for (int i = 0; i < roles.count; ++i) {
    const Role& out = roles.items[i];
    if (!out.output) continue;
    RETURN_IF_ERROR(check_no_self_overlap(*out.tensor, out.name));
    const Span out_span = byte_span(*out.tensor);
    if (out_span.empty()) continue;
    // Output/output pairs are not compared: packed gradients (dq, dk, dv
    // interleaved in one buffer) share a byte range without sharing elements.
    for (int j = 0; j < roles.count; ++j) {
      const Role& in = roles.items[j];
      if (in.output) continue;
      const Span in_span = byte_span(*in.tensor);
      if (in_span.empty()) continue;
      if (out_span.begin < in_span.end && in_span.begin < out_span.end) {
        return INVALID("%s: memory overlaps input %s (outputs must not alias inputs)", out.name, in.name);
      }
    }
  }
  return Status();
}

Status check_context(const ExecutionContext& ctx) {
  if (ctx.num_threads < 0)
    return INVALID("ctx.num_threads: %d, must be >= 0 (0 = all hardware threads)", ctx.num_threads);
  return Status();
}

// ---------------------------------------------------------------------------
// Options.

struct OptionRules {
  bool dropout_allowed = true;
  const char* operation = "";
  // Exact window normalisation is skipped when rotary positions depend on the
  // call being local (KV cache with rotary): see resolve_window.
  bool normalise_window = true;
  bool bias_allowed = false;  // options.bias: the batched forward and backward only
};

// Dims of the problem that options are checked against.
struct Dims {
  i64 b = 0, sq = 0, sk = 0, h = 0, hk = 0, d = 0, dv = 0;
  DType dtype = DType::float32;  // of q
};

// Windows, the FlashAttention-3 way (which, unlike FlashAttention-2's
// "w >= sk -> unbounded" for both sides, never changes which keys are visible):
//   causal sets right = 0 (a right window > 0 together with causal is rejected as contradictory);
//   left >= sk - 1 reaches key 0 from every query, so it becomes -1 (unbounded);
//   right >= sq - 1 reaches the last key from every query, so it becomes -1.
// sq/sk here are the call's bounds (max_seqlen_* for varlen, the cache capacity
// for the KV cache), at least every sequence's own length, so the rewrite holds
// per sequence. Unbounded sides let backends skip masking work.
Status resolve_window(const AttentionOptions& o, const Dims& dims, const OptionRules& rules,
                      MaskParams* mask) {
  if (o.window.left < -1)
    return INVALID("options.window.left: %lld, must be >= -1 (-1 = unbounded)",
                   static_cast<ll>(o.window.left));
  if (o.window.right < -1)
    return INVALID("options.window.right: %lld, must be >= -1 (-1 = unbounded)",
                   static_cast<ll>(o.window.right));
  mask->window_left = o.window.left;
  mask->window_right = o.window.right;
  if (o.causal) {
    if (o.window.right > 0) {
      return INVALID("options.window.right: %lld contradicts options.causal, which sets it to 0",
                     static_cast<ll>(o.window.right));
    }
    mask->window_right = 0;
  }
  if (rules.normalise_window) {
    if (mask->window_left >= 0 && mask->window_left >= dims.sk - 1) mask->window_left = -1;
    if (mask->window_right >= 0 && mask->window_right >= dims.sq - 1) mask->window_right = -1;
  }
  return Status();
}

// options.bias: (B, H, SQ, sk) with its leading dims optional (rank 2-4, aligned to the right), B in {1, b},
// H in {1, h}, SQ in {1, sq}; a dim of size 1 gets stride 0 (broadcast) whatever the caller's stride.
Status resolve_bias(const TensorView& bias, const Dims& dims, const OptionRules& rules, CheckMode mode,
                    AttentionParams* p) {
  if (!bias.defined()) return Status();
  if (!rules.bias_allowed) {
    return INVALID("options.bias: given, but %s does not take a bias (the batched forward and backward do)",
                   rules.operation);
  }
  const int rank = bias.rank >= 2 && bias.rank <= 4 ? bias.rank : 4;
  RETURN_IF_ERROR(check_view(bias, "options.bias", rank, "(B, H, SQ, sk), (H, SQ, sk) or (SQ, sk)", mode));
  if (bias.dtype != DType::float32 && bias.dtype != DType::boolean && bias.dtype != dims.dtype) {
    return INVALID("options.bias: dtype %s, expected fp32, bool or q's dtype %s", dtype_name(bias.dtype),
                   dtype_name(dims.dtype));
  }
  // Right-aligned: shape4[0..3] = (B, H, SQ, sk), the missing leading dims of size 1.
  i64 shape4[4] = {1, 1, 1, 1}, stride4[4] = {0, 0, 0, 0};
  for (int d = 0; d < rank; ++d) {
    shape4[4 - rank + d] = bias.shape[d];
    stride4[4 - rank + d] = bias.stride[d];
  }
  const i64 full[4] = {dims.b, dims.h, dims.sq, dims.sk};
  const bool ok = (shape4[0] == 1 || shape4[0] == full[0]) && (shape4[1] == 1 || shape4[1] == full[1]) &&
                  (shape4[2] == 1 || shape4[2] == full[2]) && shape4[3] == full[3];
  if (!ok) {
    return INVALID(
        "options.bias: shape %s, expected (B, H, SQ, sk) with B in {1, %lld}, H in {1, %lld}, SQ in {1, "
        "%lld}, "
        "sk = %lld (leading dims may be left out)",
        dims_text(bias.shape, bias.rank).s, static_cast<ll>(dims.b), static_cast<ll>(dims.h),
        static_cast<ll>(dims.sq), static_cast<ll>(dims.sk));
  }
  p->bias = bias.data;
  p->bias_dtype = bias.dtype;
  p->bias_batch_stride = shape4[0] == 1 ? 0 : stride4[0];
  p->bias_head_stride = shape4[1] == 1 ? 0 : stride4[1];
  p->bias_row_stride = shape4[2] == 1 ? 0 : stride4[2];
  return Status();
}

Status resolve_options(const AttentionOptions& o, const Dims& dims, const OptionRules& rules, CheckMode mode,
                       AttentionParams* p) {
  if (o.softmax_scale.has_value() && !std::isfinite(*o.softmax_scale)) {
    return INVALID("options.softmax_scale: %g is not finite", static_cast<double>(*o.softmax_scale));
  }
  p->scale = o.softmax_scale.has_value() ? *o.softmax_scale
                                         : static_cast<float>(1.0 / std::sqrt(static_cast<double>(dims.d)));
  if (!std::isfinite(o.softcap) || o.softcap < 0.f) {
    return INVALID("options.softcap: %g, must be finite and >= 0 (0 = off)", static_cast<double>(o.softcap));
  }
  p->softcap = o.softcap;
  RETURN_IF_ERROR(resolve_window(o, dims, rules, &p->mask));

  if (!(o.dropout.p >= 0.f && o.dropout.p < 1.f)) {
    return INVALID("options.dropout.p: %g, must be in [0, 1)", static_cast<double>(o.dropout.p));
  }
  if (o.dropout.p > 0.f && !rules.dropout_allowed) {
    return INVALID("options.dropout.p: %g, but %s does not support dropout (must be 0)",
                   static_cast<double>(o.dropout.p), rules.operation);
  }
  p->dropout_p = o.dropout.p;
  p->dropout_seed = o.dropout.seed;
  p->dropout_offset = o.dropout.offset;

  if (o.alibi_slopes.defined()) {
    const TensorView& a = o.alibi_slopes;
    const int rank = a.rank == 2 ? 2 : 1;
    RETURN_IF_ERROR(check_view(a, "options.alibi_slopes", rank, "(h) or (b, h)", mode));
    RETURN_IF_ERROR(check_dtype(a, "options.alibi_slopes", DType::float32));
    const bool ok = rank == 1 ? a.shape[0] == dims.h : (a.shape[0] == dims.b && a.shape[1] == dims.h);
    if (!ok) {
      return INVALID("options.alibi_slopes: shape %s, expected (h) = (%lld) or (b, h) = (%lld, %lld)",
                     dims_text(a.shape, a.rank).s, static_cast<ll>(dims.h), static_cast<ll>(dims.b),
                     static_cast<ll>(dims.h));
    }
    p->alibi_slopes = static_cast<const float*>(a.data);
    p->alibi_batch_stride = rank == 2 ? a.stride[0] : 0;
  }
  RETURN_IF_ERROR(resolve_bias(o.bias, dims, rules, mode, p));
  if (o.sink.defined()) {
    RETURN_IF_ERROR(check_view(o.sink, "options.sink", 1, "(h)", mode));
    RETURN_IF_ERROR(check_dtype(o.sink, "options.sink", DType::float32));
    RETURN_IF_ERROR(check_shape(o.sink, "options.sink", "(h)", {dims.h}));
    p->sink = static_cast<const float*>(o.sink.data);
  }
  return Status();
}

void add_option_roles(const AttentionOptions& o, Roles* roles) {
  roles->add(o.alibi_slopes, "options.alibi_slopes", false);
  roles->add(o.sink, "options.sink", false);
  roles->add(o.bias, "options.bias", false);
}

// ---------------------------------------------------------------------------
// q, k, v.

Operand operand_bshd(const TensorView& t) { return Operand{t.data, t.stride[0], t.stride[1], t.stride[2]}; }
Operand operand_thd(const TensorView& t) { return Operand{t.data, 0, t.stride[0], t.stride[1]}; }

// q (b, sq, h, d), k (b, sk, hk, d), v (b, sk, hk, dv): the batched layout.
Status check_qkv_batched(const TensorView& q, const TensorView& k, const TensorView& v, CheckMode mode,
                         Dims* dims) {
  RETURN_IF_ERROR(check_view(q, "q", 4, "(b, sq, h, d)", mode));
  RETURN_IF_ERROR(check_float_dtype(q, "q"));
  RETURN_IF_ERROR(check_view(k, "k", 4, "(b, sk, hk, d)", mode));
  RETURN_IF_ERROR(check_same_dtype(k, "k", q, "q"));
  RETURN_IF_ERROR(check_view(v, "v", 4, "(b, sk, hk, dv)", mode));
  RETURN_IF_ERROR(check_same_dtype(v, "v", q, "q"));
  RETURN_IF_ERROR(check_positive(q, "q", 2, "the head count"));
  RETURN_IF_ERROR(check_positive(q, "q", 3, "the head dim"));
  RETURN_IF_ERROR(check_size(k, "k", 0, "batch", q.shape[0], "q"));
  RETURN_IF_ERROR(check_size(k, "k", 3, "head dim", q.shape[3], "q"));
  RETURN_IF_ERROR(check_positive(k, "k", 2, "the head count"));
  RETURN_IF_ERROR(check_size(v, "v", 0, "batch", k.shape[0], "k"));
  RETURN_IF_ERROR(check_size(v, "v", 1, "key count", k.shape[1], "k"));
  RETURN_IF_ERROR(check_size(v, "v", 2, "head count", k.shape[2], "k"));
  RETURN_IF_ERROR(check_positive(v, "v", 3, "the head dim"));
  if (q.shape[2] % k.shape[2] != 0) {
    return INVALID("q: %lld heads is not a multiple of k's %lld heads", static_cast<ll>(q.shape[2]),
                   static_cast<ll>(k.shape[2]));
  }
  *dims = Dims{q.shape[0], q.shape[1], k.shape[1], q.shape[2], k.shape[2], q.shape[3], v.shape[3], q.dtype};
  return Status();
}

// q (total_q, h, d); k, v (total_k, hk, d/dv) or, paged, (num_blocks, page_size, hk, d/dv).
Status check_qkv_varlen(const TensorView& q, const TensorView& k, const TensorView& v, bool paged,
                        CheckMode mode, Dims* dims) {
  RETURN_IF_ERROR(check_view(q, "q", 3, "(total_q, h, d)", mode));
  RETURN_IF_ERROR(check_float_dtype(q, "q"));
  const int kv_rank = paged ? 4 : 3;
  RETURN_IF_ERROR(check_view(
      k, "k", kv_rank,
      paged ? "(num_blocks, page_size, hk, d) (paged: block_table given)" : "(total_k, hk, d)", mode));
  RETURN_IF_ERROR(check_same_dtype(k, "k", q, "q"));
  RETURN_IF_ERROR(check_view(
      v, "v", kv_rank,
      paged ? "(num_blocks, page_size, hk, dv) (paged: block_table given)" : "(total_k, hk, dv)", mode));
  RETURN_IF_ERROR(check_same_dtype(v, "v", q, "q"));
  RETURN_IF_ERROR(check_positive(q, "q", 1, "the head count"));
  RETURN_IF_ERROR(check_positive(q, "q", 2, "the head dim"));
  const int kh = kv_rank - 2;  // head dim of k/v
  RETURN_IF_ERROR(check_size(k, "k", kh + 1, "head dim", q.shape[2], "q"));
  RETURN_IF_ERROR(check_positive(k, "k", kh, "the head count"));
  if (paged) {
    RETURN_IF_ERROR(check_size(v, "v", 0, "block count", k.shape[0], "k"));
    if (k.shape[1] < 1)
      return INVALID("k: page_size (shape[1]) is %lld, must be at least 1", static_cast<ll>(k.shape[1]));
    RETURN_IF_ERROR(check_size(v, "v", 1, "page_size", k.shape[1], "k"));
  } else {
    RETURN_IF_ERROR(check_size(v, "v", 0, "row count", k.shape[0], "k"));
  }
  RETURN_IF_ERROR(check_size(v, "v", kh, "head count", k.shape[kh], "k"));
  RETURN_IF_ERROR(check_positive(v, "v", kh + 1, "the head dim"));
  if (q.shape[1] % k.shape[kh] != 0) {
    return INVALID("q: %lld heads is not a multiple of k's %lld heads", static_cast<ll>(q.shape[1]),
                   static_cast<ll>(k.shape[kh]));
  }
  dims->h = q.shape[1];
  dims->hk = k.shape[kh];
  dims->d = q.shape[2];
  dims->dv = v.shape[kh + 1];
  return Status();
}

// ---------------------------------------------------------------------------
// Index tensors: shapes always, contents when host-readable.

bool host_readable(const TensorView& t, CheckMode mode) {
  return mode == CheckMode::full && t.defined() && t.device.type == DeviceType::cpu;
}

std::int32_t index_at(const TensorView& t, i64 i) { return static_cast<const std::int32_t*>(t.data)[i]; }

Status check_index_vector(const TensorView& t, const char* name, const char* layout, i64 length,
                          CheckMode mode) {
  RETURN_IF_ERROR(check_view(t, name, 1, layout, mode));
  RETURN_IF_ERROR(check_dtype(t, name, DType::int32));
  return check_shape(t, name, layout, {length});
}

// cu_seqlens: cu[0] == 0, non-decreasing, cu[b] <= rows (rows < 0: no bound, paged
// keys), every length <= max_seqlen.
Status check_cu_seqlens_contents(const TensorView& cu, const char* name, i64 rows, const char* rows_owner,
                                 i64 max_seqlen, const char* max_name) {
  const i64 entries = cu.shape[0];
  if (index_at(cu, 0) != 0) return INVALID("%s: entry 0 is %d, expected 0", name, index_at(cu, 0));
  for (i64 i = 1; i < entries; ++i) {
    const std::int32_t prev = index_at(cu, i - 1), cur = index_at(cu, i);
    if (cur < prev)
      return INVALID("%s: not non-decreasing at index %lld (%d > %d)", name, static_cast<ll>(i), prev, cur);
    if (cur - prev > max_seqlen) {
      return INVALID("%s: sequence %lld has length %d, more than %s %lld", name, static_cast<ll>(i - 1),
                     cur - prev, max_name, static_cast<ll>(max_seqlen));
    }
  }
  if (rows >= 0 && index_at(cu, entries - 1) > rows) {
    return INVALID("%s: last entry %d exceeds the %lld rows of %s", name, index_at(cu, entries - 1),
                   static_cast<ll>(rows), rows_owner);
  }
  return Status();
}

// seqused[s] in [0, length of sequence s].
Status check_seqused_contents(const TensorView& used, const char* name, const TensorView& cu,
                              const char* cu_name) {
  for (i64 s = 0; s < used.shape[0]; ++s) {
    const i64 length = static_cast<i64>(index_at(cu, s + 1)) - index_at(cu, s);
    const std::int32_t u = index_at(used, s);
    if (u < 0 || u > length) {
      return INVALID("%s: entry %lld is %d, outside [0, %lld] (the length %s gives sequence %lld)", name,
                     static_cast<ll>(s), u, static_cast<ll>(length), cu_name, static_cast<ll>(s));
    }
  }
  return Status();
}

// Block-table entries that cover cache positions [first, end) of sequence s must
// name a block in [0, num_blocks). Entries past the sequence's end are never
// read and may hold anything (e.g. -1 padding).
Status check_block_row(const TensorView& table, i64 s, i64 first, i64 end, i64 page_size, i64 num_blocks) {
  if (end <= first) return Status();
  const std::int32_t* row = static_cast<const std::int32_t*>(table.data) + s * table.stride[0];
  for (i64 blk = first / page_size; blk < (end + page_size - 1) / page_size; ++blk) {
    if (row[blk] < 0 || row[blk] >= num_blocks) {
      return INVALID("block_table: entry (%lld, %lld) is %d, outside [0, %lld) (the blocks of k)",
                     static_cast<ll>(s), static_cast<ll>(blk), row[blk], static_cast<ll>(num_blocks));
    }
  }
  return Status();
}

// Varlen sequence descriptors shared by forward and backward.
struct VarlenIndex {
  const TensorView& cu_q;
  const TensorView& cu_k;
  i64 max_q, max_k;
  const TensorView& used_q;
  const TensorView& used_k;
};

Status check_varlen_index(const VarlenIndex& ix, CheckMode mode, i64* batch) {
  RETURN_IF_ERROR(check_view(ix.cu_q, "cu_seqlens_q", 1, "(b + 1)", mode));
  RETURN_IF_ERROR(check_dtype(ix.cu_q, "cu_seqlens_q", DType::int32));
  if (ix.cu_q.shape[0] < 1) return INVALID("cu_seqlens_q: 0 entries, expected b + 1 >= 1");
  const i64 b = ix.cu_q.shape[0] - 1;
  RETURN_IF_ERROR(check_view(ix.cu_k, "cu_seqlens_k", 1, "(b + 1)", mode));
  RETURN_IF_ERROR(check_dtype(ix.cu_k, "cu_seqlens_k", DType::int32));
  if (ix.cu_k.shape[0] != b + 1) {
    return INVALID("cu_seqlens_k: %lld entries differs from cu_seqlens_q's %lld (b + 1)",
                   static_cast<ll>(ix.cu_k.shape[0]), static_cast<ll>(b + 1));
  }
  if (ix.max_q < 0 || ix.max_q > kMaxSize)
    return INVALID("max_seqlen_q: %lld, must be in [0, %lld]", static_cast<ll>(ix.max_q),
                   static_cast<ll>(kMaxSize));
  if (ix.max_k < 0 || ix.max_k > kMaxSize)
    return INVALID("max_seqlen_k: %lld, must be in [0, %lld]", static_cast<ll>(ix.max_k),
                   static_cast<ll>(kMaxSize));
  if (ix.used_q.defined()) RETURN_IF_ERROR(check_index_vector(ix.used_q, "seqused_q", "(b)", b, mode));
  if (ix.used_k.defined()) RETURN_IF_ERROR(check_index_vector(ix.used_k, "seqused_k", "(b)", b, mode));
  *batch = b;
  return Status();
}

// Contents; k_rows < 0 when keys are paged (cu_seqlens_k then only gives lengths).
Status check_varlen_contents(const VarlenIndex& ix, CheckMode mode, i64 q_rows, i64 k_rows) {
  if (host_readable(ix.cu_q, mode)) {
    RETURN_IF_ERROR(
        check_cu_seqlens_contents(ix.cu_q, "cu_seqlens_q", q_rows, "q", ix.max_q, "max_seqlen_q"));
    if (host_readable(ix.used_q, mode))
      RETURN_IF_ERROR(check_seqused_contents(ix.used_q, "seqused_q", ix.cu_q, "cu_seqlens_q"));
  }
  if (host_readable(ix.cu_k, mode)) {
    RETURN_IF_ERROR(
        check_cu_seqlens_contents(ix.cu_k, "cu_seqlens_k", k_rows, "k", ix.max_k, "max_seqlen_k"));
    if (host_readable(ix.used_k, mode))
      RETURN_IF_ERROR(check_seqused_contents(ix.used_k, "seqused_k", ix.cu_k, "cu_seqlens_k"));
  }
  return Status();
}

void fill_varlen_index(const VarlenIndex& ix, AttentionParams* p) {
  p->cu_seqlens_q = static_cast<const std::int32_t*>(ix.cu_q.data);
  p->cu_seqlens_k = static_cast<const std::int32_t*>(ix.cu_k.data);
  p->seqused_q = static_cast<const std::int32_t*>(ix.used_q.data);
  p->seqused_k = static_cast<const std::int32_t*>(ix.used_k.data);
  p->seqlen_q = ix.max_q;
  p->seqlen_k = ix.max_k;
}

void fill_dims(const Dims& dims, DType dtype, AttentionParams* p) {
  p->dtype = dtype;
  p->batch = dims.b;
  p->heads = dims.h;
  p->heads_kv = dims.hk;
  p->head_dim = dims.d;
  p->head_dim_v = dims.dv;
  p->seqlen_q = dims.sq;
  p->seqlen_k = dims.sk;
  // The forwards then set the caller's request (0: the backend's heuristic). Backward does not split keys.
  p->num_splits = 0;
}

template <class P>
void fill_validated(Validated<P>* out, Operation op, Device device, DType dtype, const Dims& dims) {
  out->operation = op;
  out->device = device;
  out->dtype = dtype;
  out->head_dim = dims.d;
  out->head_dim_v = dims.dv;
}

// lse (b, h, sq) of the batched layouts.
void fill_lse_bhs(const TensorView& lse, AttentionParams* p) {
  p->lse = static_cast<float*>(lse.data);
  if (lse.defined()) {
    p->lse_batch_stride = lse.stride[0];
    p->lse_head_stride = lse.stride[1];
    p->lse_row_stride = lse.stride[2];
  }
}

// lse (h, total_q) of the varlen layouts: rows are global, so no batch stride.
void fill_lse_ht(const TensorView& lse, AttentionParams* p) {
  p->lse = static_cast<float*>(lse.data);
  if (lse.defined()) {
    p->lse_batch_stride = 0;
    p->lse_head_stride = lse.stride[0];
    p->lse_row_stride = lse.stride[1];
  }
}

// 256 bounds the combine pass as in FlashAttention 3; a larger request is an error, not a silent clamp.
Status check_num_splits(int num_splits) {
  if (num_splits < 0 || num_splits > kMaxSplits) {
    return INVALID("num_splits: %d, must be in [0, %d] (0 = heuristic, 1 = no split)", num_splits,
                   kMaxSplits);
  }
  return Status();
}

}  // namespace

// ===========================================================================
// forward

Status validate(const ForwardArgs& a, const ExecutionContext& ctx, CheckMode mode,
                Validated<AttentionParams>* out) noexcept {
  *out = Validated<AttentionParams>{};
  RETURN_IF_ERROR(check_context(ctx));
  Dims dims;
  RETURN_IF_ERROR(check_qkv_batched(a.q, a.k, a.v, mode, &dims));
  RETURN_IF_ERROR(check_num_splits(a.num_splits));
  RETURN_IF_ERROR(check_view(a.out, "out", 4, "(b, sq, h, dv)", mode));
  RETURN_IF_ERROR(check_same_dtype(a.out, "out", a.q, "q"));
  RETURN_IF_ERROR(check_shape(a.out, "out", "(b, sq, h, dv)", {dims.b, dims.sq, dims.h, dims.dv}));
  if (a.lse.defined()) {
    RETURN_IF_ERROR(check_view(a.lse, "lse", 3, "(b, h, sq)", mode));
    RETURN_IF_ERROR(check_dtype(a.lse, "lse", DType::float32));
    RETURN_IF_ERROR(check_shape(a.lse, "lse", "(b, h, sq)", {dims.b, dims.h, dims.sq}));
  }
  AttentionParams& p = out->params;
  RETURN_IF_ERROR(resolve_options(a.options, dims, OptionRules{true, "forward", true, true}, mode, &p));

  Roles roles;
  roles.add(a.q, "q", false);
  roles.add(a.k, "k", false);
  roles.add(a.v, "v", false);
  add_option_roles(a.options, &roles);
  roles.add(a.out, "out", true);
  roles.add(a.lse, "lse", true);
  Device device;
  RETURN_IF_ERROR(check_devices_and_memory(roles, mode, &device));

  fill_dims(dims, a.q.dtype, &p);
  p.num_splits = a.num_splits;
  p.q = operand_bshd(a.q);
  p.k = operand_bshd(a.k);
  p.v = operand_bshd(a.v);
  p.out = operand_bshd(a.out);
  fill_lse_bhs(a.lse, &p);
  fill_validated(out, Operation::forward, device, a.q.dtype, dims);
  out->nothing_to_do = dims.b == 0 || dims.sq == 0;
  return Status();
}

// ===========================================================================
// forward_varlen

Status validate(const VarlenForwardArgs& a, const ExecutionContext& ctx, CheckMode mode,
                Validated<AttentionParams>* out) noexcept {
  *out = Validated<AttentionParams>{};
  RETURN_IF_ERROR(check_context(ctx));
  const bool paged = a.block_table.defined();
  Dims dims;
  RETURN_IF_ERROR(check_qkv_varlen(a.q, a.k, a.v, paged, mode, &dims));
  const VarlenIndex ix{a.cu_seqlens_q, a.cu_seqlens_k, a.max_seqlen_q,
                       a.max_seqlen_k, a.seqused_q,    a.seqused_k};
  RETURN_IF_ERROR(check_varlen_index(ix, mode, &dims.b));
  RETURN_IF_ERROR(check_num_splits(a.num_splits));
  dims.sq = a.max_seqlen_q;
  dims.sk = a.max_seqlen_k;
  const i64 total_q = a.q.shape[0];
  i64 page_size = 0, max_blocks = 0;
  if (paged) {
    RETURN_IF_ERROR(check_view(a.block_table, "block_table", 2, "(b, max_blocks_per_seq)", mode));
    RETURN_IF_ERROR(check_dtype(a.block_table, "block_table", DType::int32));
    RETURN_IF_ERROR(check_size(a.block_table, "block_table", 0, "batch", dims.b, "cu_seqlens_q's"));
    page_size = a.k.shape[1];
    max_blocks = a.block_table.shape[1];
  }
  RETURN_IF_ERROR(check_view(a.out, "out", 3, "(total_q, h, dv)", mode));
  RETURN_IF_ERROR(check_same_dtype(a.out, "out", a.q, "q"));
  RETURN_IF_ERROR(check_shape(a.out, "out", "(total_q, h, dv)", {total_q, dims.h, dims.dv}));
  if (a.lse.defined()) {
    RETURN_IF_ERROR(check_view(a.lse, "lse", 2, "(h, total_q)", mode));
    RETURN_IF_ERROR(check_dtype(a.lse, "lse", DType::float32));
    RETURN_IF_ERROR(check_shape(a.lse, "lse", "(h, total_q)", {dims.h, total_q}));
  }
  AttentionParams& p = out->params;
  RETURN_IF_ERROR(resolve_options(a.options, dims, OptionRules{true, "forward_varlen", true}, mode, &p));

  Roles roles;
  roles.add(a.q, "q", false);
  roles.add(a.k, "k", false);
  roles.add(a.v, "v", false);
  roles.add(a.cu_seqlens_q, "cu_seqlens_q", false);
  roles.add(a.cu_seqlens_k, "cu_seqlens_k", false);
  roles.add(a.seqused_q, "seqused_q", false);
  roles.add(a.seqused_k, "seqused_k", false);
  roles.add(a.block_table, "block_table", false);
  add_option_roles(a.options, &roles);
  roles.add(a.out, "out", true);
  roles.add(a.lse, "lse", true);
  Device device;
  RETURN_IF_ERROR(check_devices_and_memory(roles, mode, &device));

  RETURN_IF_ERROR(check_varlen_contents(ix, mode, total_q, paged ? -1 : a.k.shape[0]));
  if (paged && host_readable(a.block_table, mode)) {
    for (i64 s = 0; s < dims.b; ++s) {
      const i64 length = static_cast<i64>(index_at(a.cu_seqlens_k, s + 1)) - index_at(a.cu_seqlens_k, s);
      if (length > max_blocks * page_size) {
        return INVALID("cu_seqlens_k: sequence %lld has %lld keys, but block_table holds %lld blocks of %lld",
                       static_cast<ll>(s), static_cast<ll>(length), static_cast<ll>(max_blocks),
                       static_cast<ll>(page_size));
      }
      const i64 used = host_readable(a.seqused_k, mode) ? index_at(a.seqused_k, s) : length;
      RETURN_IF_ERROR(check_block_row(a.block_table, s, 0, used, page_size, a.k.shape[0]));
    }
  }

  fill_dims(dims, a.q.dtype, &p);
  p.num_splits = a.num_splits;
  fill_varlen_index(ix, &p);
  p.q = operand_thd(a.q);
  p.out = operand_thd(a.out);
  p.q_rows = total_q;
  if (paged) {
    p.k = operand_bshd(a.k);  // batch_stride steps one block
    p.v = operand_bshd(a.v);
    p.block_table = static_cast<const std::int32_t*>(a.block_table.data);
    p.block_table_batch_stride = a.block_table.stride[0];
    p.page_size = page_size;
    p.kv_blocks = a.k.shape[0];
    p.table_cols = max_blocks;
  } else {
    p.k = operand_thd(a.k);
    p.v = operand_thd(a.v);
    p.k_rows = a.k.shape[0];
  }
  fill_lse_ht(a.lse, &p);
  fill_validated(out, Operation::forward_varlen, device, a.q.dtype, dims);
  out->nothing_to_do = dims.b == 0 || total_q == 0 || a.max_seqlen_q == 0;
  return Status();
}

// ===========================================================================
// forward_kvcache

Status validate(const KVCacheForwardArgs& a, const ExecutionContext& ctx, CheckMode mode,
                Validated<AttentionParams>* out) noexcept {
  *out = Validated<AttentionParams>{};
  RETURN_IF_ERROR(check_context(ctx));
  const bool paged = a.block_table.defined();
  RETURN_IF_ERROR(check_view(a.q, "q", 4, "(b, sq, h, d)", mode));
  RETURN_IF_ERROR(check_float_dtype(a.q, "q"));
  RETURN_IF_ERROR(check_positive(a.q, "q", 2, "the head count"));
  RETURN_IF_ERROR(check_positive(a.q, "q", 3, "the head dim"));
  const char* k_layout =
      paged ? "(num_blocks, page_size, hk, d) (paged: block_table given)" : "(b_cache, s_cache, hk, d)";
  const char* v_layout =
      paged ? "(num_blocks, page_size, hk, dv) (paged: block_table given)" : "(b_cache, s_cache, hk, dv)";
  RETURN_IF_ERROR(check_view(a.k_cache, "k_cache", 4, k_layout, mode));
  RETURN_IF_ERROR(check_same_dtype(a.k_cache, "k_cache", a.q, "q"));
  RETURN_IF_ERROR(check_view(a.v_cache, "v_cache", 4, v_layout, mode));
  RETURN_IF_ERROR(check_same_dtype(a.v_cache, "v_cache", a.q, "q"));
  RETURN_IF_ERROR(check_size(a.k_cache, "k_cache", 3, "head dim", a.q.shape[3], "q"));
  RETURN_IF_ERROR(check_positive(a.k_cache, "k_cache", 2, "the head count"));
  RETURN_IF_ERROR(
      check_size(a.v_cache, "v_cache", 0, paged ? "block count" : "batch", a.k_cache.shape[0], "k_cache"));
  RETURN_IF_ERROR(
      check_size(a.v_cache, "v_cache", 1, paged ? "page_size" : "capacity", a.k_cache.shape[1], "k_cache"));
  RETURN_IF_ERROR(check_size(a.v_cache, "v_cache", 2, "head count", a.k_cache.shape[2], "k_cache"));
  RETURN_IF_ERROR(check_positive(a.v_cache, "v_cache", 3, "the head dim"));
  if (a.q.shape[2] % a.k_cache.shape[2] != 0) {
    return INVALID("q: %lld heads is not a multiple of k_cache's %lld heads", static_cast<ll>(a.q.shape[2]),
                   static_cast<ll>(a.k_cache.shape[2]));
  }
  Dims dims{a.q.shape[0], a.q.shape[1],      0, a.q.shape[2], a.k_cache.shape[2],
            a.q.shape[3], a.v_cache.shape[3]};
  const i64 b = dims.b;

  i64 capacity = 0, page_size = 0;
  if (paged) {
    RETURN_IF_ERROR(check_view(a.block_table, "block_table", 2, "(b, max_blocks_per_seq)", mode));
    RETURN_IF_ERROR(check_dtype(a.block_table, "block_table", DType::int32));
    RETURN_IF_ERROR(check_size(a.block_table, "block_table", 0, "batch", b, "q"));
    page_size = a.k_cache.shape[1];
    if (page_size < 1)
      return INVALID("k_cache: page_size (shape[1]) is %lld, must be at least 1", static_cast<ll>(page_size));
    if (a.cache_batch_idx.defined()) {
      return INVALID(
          "cache_batch_idx: not supported with a paged cache (block_table already maps each sequence)");
    }
    capacity = a.block_table.shape[1] * page_size;  // both < 2^31: no overflow
  } else {
    capacity = a.k_cache.shape[1];
    if (!a.cache_batch_idx.defined()) {
      RETURN_IF_ERROR(check_size(a.k_cache, "k_cache", 0, "batch", b, "q"));
    } else if (b > 0 && a.k_cache.shape[0] < 1) {
      return INVALID("k_cache: batch 0, but cache_batch_idx selects rows for %lld sequences",
                     static_cast<ll>(b));
    }
  }
  dims.sk = capacity;
  if (a.cache_seqlens.defined())
    RETURN_IF_ERROR(check_index_vector(a.cache_seqlens, "cache_seqlens", "(b)", b, mode));
  if (a.cache_batch_idx.defined())
    RETURN_IF_ERROR(check_index_vector(a.cache_batch_idx, "cache_batch_idx", "(b)", b, mode));
  if (a.cache_leftpad.defined())
    RETURN_IF_ERROR(check_index_vector(a.cache_leftpad, "cache_leftpad", "(b)", b, mode));

  // New keys/values to append.
  const bool append = a.k_new.defined() || a.v_new.defined();
  i64 s_new = 0;
  if (append) {
    if (!a.k_new.defined()) return INVALID("v_new: given without k_new (both or neither)");
    if (!a.v_new.defined()) return INVALID("k_new: given without v_new (both or neither)");
    RETURN_IF_ERROR(check_view(a.k_new, "k_new", 4, "(b, s_new, hk, d)", mode));
    RETURN_IF_ERROR(check_same_dtype(a.k_new, "k_new", a.q, "q"));
    RETURN_IF_ERROR(check_view(a.v_new, "v_new", 4, "(b, s_new, hk, dv)", mode));
    RETURN_IF_ERROR(check_same_dtype(a.v_new, "v_new", a.q, "q"));
    s_new = a.k_new.shape[1];
    RETURN_IF_ERROR(check_shape(a.k_new, "k_new", "(b, s_new, hk, d)", {b, s_new, dims.hk, dims.d}));
    RETURN_IF_ERROR(check_shape(a.v_new, "v_new", "(b, s_new, hk, dv)", {b, s_new, dims.hk, dims.dv}));
    if (!a.cache_seqlens.defined() && s_new > 0) {
      return INVALID(
          "k_new: %lld new rows but no cache_seqlens: without it every sequence fills the cache "
          "(capacity %lld) and there is no room to append",
          static_cast<ll>(s_new), static_cast<ll>(capacity));
    }
    if (s_new > capacity) {
      return INVALID("k_new: %lld new rows exceed the cache capacity %lld", static_cast<ll>(s_new),
                     static_cast<ll>(capacity));
    }
  }

  // Rotary embedding of the new keys and of q.
  const bool rotary = a.rotary_cos.defined() || a.rotary_sin.defined();
  i64 rotary_dim = 0;
  if (rotary) {
    if (!a.rotary_cos.defined()) return INVALID("rotary_sin: given without rotary_cos (both or neither)");
    if (!a.rotary_sin.defined()) return INVALID("rotary_cos: given without rotary_sin (both or neither)");
    if (!append) return INVALID("rotary_cos: rotary embedding needs new keys (k_new/v_new) to rotate");
    RETURN_IF_ERROR(check_view(a.rotary_cos, "rotary_cos", 2, "(s_rotary, rotary_dim / 2)", mode));
    RETURN_IF_ERROR(check_same_dtype(a.rotary_cos, "rotary_cos", a.q, "q"));
    RETURN_IF_ERROR(check_view(a.rotary_sin, "rotary_sin", 2, "(s_rotary, rotary_dim / 2)", mode));
    RETURN_IF_ERROR(check_same_dtype(a.rotary_sin, "rotary_sin", a.q, "q"));
    RETURN_IF_ERROR(check_shape(a.rotary_sin, "rotary_sin", "rotary_cos's shape",
                                {a.rotary_cos.shape[0], a.rotary_cos.shape[1]}));
    // rotary_dim = 2 * columns is even by construction; it must rotate something and fit in d.
    rotary_dim = 2 * a.rotary_cos.shape[1];
    if (rotary_dim < 2 || rotary_dim > dims.d) {
      return INVALID("rotary_cos: rotary_dim = 2 * %lld columns = %lld, must be in [2, head dim %lld]",
                     static_cast<ll>(a.rotary_cos.shape[1]), static_cast<ll>(rotary_dim),
                     static_cast<ll>(dims.d));
    }
  }
  RETURN_IF_ERROR(check_num_splits(a.num_splits));

  RETURN_IF_ERROR(check_view(a.out, "out", 4, "(b, sq, h, dv)", mode));
  RETURN_IF_ERROR(check_same_dtype(a.out, "out", a.q, "q"));
  RETURN_IF_ERROR(check_shape(a.out, "out", "(b, sq, h, dv)", {b, dims.sq, dims.h, dims.dv}));
  if (a.lse.defined()) {
    RETURN_IF_ERROR(check_view(a.lse, "lse", 3, "(b, h, sq)", mode));
    RETURN_IF_ERROR(check_dtype(a.lse, "lse", DType::float32));
    RETURN_IF_ERROR(check_shape(a.lse, "lse", "(b, h, sq)", {b, dims.h, dims.sq}));
  }
  AttentionParams& p = out->params;
  // With rotary, q's positions depend on whether the call is local (causal or
  // windowed), so the window is kept exactly as requested.
  RETURN_IF_ERROR(resolve_options(a.options, dims, OptionRules{false, "forward_kvcache", !rotary}, mode, &p));

  Roles roles;
  roles.add(a.q, "q", false);
  roles.add(a.k_cache, "k_cache", append);  // written in place when appending
  roles.add(a.v_cache, "v_cache", append);
  roles.add(a.block_table, "block_table", false);
  roles.add(a.cache_seqlens, "cache_seqlens", false);
  roles.add(a.cache_batch_idx, "cache_batch_idx", false);
  roles.add(a.cache_leftpad, "cache_leftpad", false);
  roles.add(a.k_new, "k_new", false);
  roles.add(a.v_new, "v_new", false);
  roles.add(a.rotary_cos, "rotary_cos", false);
  roles.add(a.rotary_sin, "rotary_sin", false);
  add_option_roles(a.options, &roles);
  roles.add(a.out, "out", true);
  roles.add(a.lse, "lse", true);
  Device device;
  RETURN_IF_ERROR(check_devices_and_memory(roles, mode, &device));

  // Contents of the host-readable index tensors, sequence by sequence.
  const bool local = p.mask.window_left >= 0 || p.mask.window_right >= 0;
  const i64 b_cache = a.k_cache.shape[0];
  for (i64 s = 0; s < b && mode == CheckMode::full && device.type == DeviceType::cpu; ++s) {
    if (a.cache_batch_idx.defined()) {
      const std::int32_t row = index_at(a.cache_batch_idx, s);
      if (row < 0 || row >= b_cache) {
        return INVALID("cache_batch_idx: entry %lld is %d, outside [0, %lld) (k_cache's batch)",
                       static_cast<ll>(s), row, static_cast<ll>(b_cache));
      }
    }
    i64 end = capacity;  // cache position where new keys go
    if (a.cache_seqlens.defined()) {
      end = index_at(a.cache_seqlens, s);
      if (end < 0 || end + s_new > capacity) {
        return INVALID(
            "cache_seqlens: entry %lld is %lld; with %lld new rows it must be in [0, %lld] (cache capacity "
            "%lld)",
            static_cast<ll>(s), static_cast<ll>(end), static_cast<ll>(s_new),
            static_cast<ll>(capacity - s_new), static_cast<ll>(capacity));
      }
    }
    i64 leftpad = 0;
    if (a.cache_leftpad.defined()) {
      leftpad = index_at(a.cache_leftpad, s);
      if (leftpad < 0 || leftpad > end) {
        return INVALID("cache_leftpad: entry %lld is %lld, outside [0, %lld] (the sequence's cache_seqlens)",
                       static_cast<ll>(s), static_cast<ll>(leftpad), static_cast<ll>(end));
      }
    }
    if (paged)
      RETURN_IF_ERROR(check_block_row(a.block_table, s, leftpad, end + s_new, page_size, a.k_cache.shape[0]));
    if (rotary) {
      // New key t sits at end + t; query i at end + i when local, else at end.
      i64 needed = end + s_new;
      if (dims.sq > 0) {
        const i64 q_last = end + (local ? dims.sq - 1 : 0);
        if (q_last + 1 > needed) needed = q_last + 1;
      }
      if (needed > a.rotary_cos.shape[0]) {
        return INVALID(
            "rotary_cos: %lld rows, but sequence %lld needs positions up to %lld (cache_seqlens %lld, "
            "%lld new rows, %lld queries)",
            static_cast<ll>(a.rotary_cos.shape[0]), static_cast<ll>(s), static_cast<ll>(needed - 1),
            static_cast<ll>(end), static_cast<ll>(s_new), static_cast<ll>(dims.sq));
      }
    }
  }

  fill_dims(dims, a.q.dtype, &p);
  p.q = operand_bshd(a.q);
  p.k = operand_bshd(a.k_cache);  // dense: batch stride; paged: block stride
  p.v = operand_bshd(a.v_cache);
  p.out = operand_bshd(a.out);
  fill_lse_bhs(a.lse, &p);
  if (paged) {
    p.block_table = static_cast<const std::int32_t*>(a.block_table.data);
    p.block_table_batch_stride = a.block_table.stride[0];
    p.page_size = page_size;
    p.table_cols = a.block_table.shape[1];
  }
  p.kv_blocks = a.k_cache.shape[0];  // paged: num_blocks; dense: b_cache
  p.is_kvcache = true;
  p.cache_seqlens = static_cast<const std::int32_t*>(a.cache_seqlens.data);
  p.cache_batch_idx = static_cast<const std::int32_t*>(a.cache_batch_idx.data);
  p.leftpad_k = static_cast<const std::int32_t*>(a.cache_leftpad.data);
  p.cache_capacity = capacity;
  if (append) {
    p.k_new = operand_bshd(a.k_new);
    p.v_new = operand_bshd(a.v_new);
    p.seqlen_new = s_new;
  }
  if (rotary) {
    p.rotary_cos = a.rotary_cos.data;
    p.rotary_sin = a.rotary_sin.data;
    p.rotary_rows = a.rotary_cos.shape[0];
    p.rotary_dim = rotary_dim;
    p.rotary_cos_row_stride = a.rotary_cos.stride[0];
    p.rotary_sin_row_stride = a.rotary_sin.stride[0];
  }
  p.rotary_interleaved = a.rotary_interleaved;
  p.num_splits = a.num_splits;  // 0: the backend's heuristic picks (it resolves to >= 1 before launch)
  fill_validated(out, Operation::forward_kvcache, device, a.q.dtype, dims);
  out->nothing_to_do = b == 0 || dims.sq == 0;
  return Status();
}

// ===========================================================================
// backward

namespace {

// dout/out/dq/dk/dv share q's dtype; lse is fp32; dsink accompanies sink.
Status check_dsink(const TensorView& dsink, const AttentionOptions& o, i64 h, CheckMode mode) {
  if (o.sink.defined() && !dsink.defined()) return INVALID("dsink: required because options.sink is given");
  if (!o.sink.defined() && dsink.defined()) return INVALID("dsink: given without options.sink");
  if (dsink.defined()) {
    RETURN_IF_ERROR(check_view(dsink, "dsink", 1, "(h)", mode));
    RETURN_IF_ERROR(check_dtype(dsink, "dsink", DType::float32));
    RETURN_IF_ERROR(check_shape(dsink, "dsink", "(h)", {h}));
  }
  return Status();
}

Status check_like(const TensorView& t, const char* name, int rank, const char* layout, const TensorView& q,
                  std::initializer_list<i64> shape, CheckMode mode) {
  RETURN_IF_ERROR(check_view(t, name, rank, layout, mode));
  RETURN_IF_ERROR(check_same_dtype(t, name, q, "q"));
  return check_shape(t, name, layout, shape);
}

// What the batched and the variable-length backward share: the roles of their tensors (inputs
// first; the caller adds its index tensors and the options between these two) and the
// operands of the params, read through the layout's operand function.
template <class Args>
void add_backward_inputs(const Args& a, Roles* roles) {
  roles->add(a.q, "q", false);
  roles->add(a.k, "k", false);
  roles->add(a.v, "v", false);
  roles->add(a.dout, "dout", false);
  roles->add(a.out, "out", false);
  roles->add(a.lse, "lse", false);
}

template <class Args>
void add_backward_gradients(const Args& a, Roles* roles) {
  roles->add(a.dq, "dq", true);
  roles->add(a.dk, "dk", true);
  roles->add(a.dv, "dv", true);
  roles->add(a.dsink, "dsink", true);
}

template <class Args, class ToOperand>
void fill_backward_tensors(const Args& a, ToOperand operand, BackwardParams* p) {
  p->q = operand(a.q);
  p->k = operand(a.k);
  p->v = operand(a.v);
  p->out = operand(a.out);
  p->dout = operand(a.dout);
  p->dq = operand(a.dq);
  p->dk = operand(a.dk);
  p->dv = operand(a.dv);
  p->dsink = static_cast<float*>(a.dsink.data);
  p->deterministic = a.deterministic;
  p->num_splits = 1;
}

}  // namespace

Status validate(const BackwardArgs& a, const ExecutionContext& ctx, CheckMode mode,
                Validated<BackwardParams>* out) noexcept {
  *out = Validated<BackwardParams>{};
  RETURN_IF_ERROR(check_context(ctx));
  Dims dims;
  RETURN_IF_ERROR(check_qkv_batched(a.q, a.k, a.v, mode, &dims));
  RETURN_IF_ERROR(
      check_like(a.dout, "dout", 4, "(b, sq, h, dv)", a.q, {dims.b, dims.sq, dims.h, dims.dv}, mode));
  RETURN_IF_ERROR(
      check_like(a.out, "out", 4, "(b, sq, h, dv)", a.q, {dims.b, dims.sq, dims.h, dims.dv}, mode));
  RETURN_IF_ERROR(check_view(a.lse, "lse", 3, "(b, h, sq)", mode));
  RETURN_IF_ERROR(check_dtype(a.lse, "lse", DType::float32));
  RETURN_IF_ERROR(check_shape(a.lse, "lse", "(b, h, sq)", {dims.b, dims.h, dims.sq}));
  RETURN_IF_ERROR(check_like(a.dq, "dq", 4, "(b, sq, h, d)", a.q, {dims.b, dims.sq, dims.h, dims.d}, mode));
  RETURN_IF_ERROR(check_like(a.dk, "dk", 4, "(b, sk, hk, d)", a.q, {dims.b, dims.sk, dims.hk, dims.d}, mode));
  RETURN_IF_ERROR(
      check_like(a.dv, "dv", 4, "(b, sk, hk, dv)", a.q, {dims.b, dims.sk, dims.hk, dims.dv}, mode));
  RETURN_IF_ERROR(check_dsink(a.dsink, a.options, dims.h, mode));
  BackwardParams& p = out->params;
  RETURN_IF_ERROR(resolve_options(a.options, dims, OptionRules{true, "backward", true, true}, mode, &p));

  Roles roles;
  add_backward_inputs(a, &roles);
  add_option_roles(a.options, &roles);
  add_backward_gradients(a, &roles);
  Device device;
  RETURN_IF_ERROR(check_devices_and_memory(roles, mode, &device));

  fill_dims(dims, a.q.dtype, &p);
  fill_backward_tensors(a, operand_bshd, &p);
  fill_lse_bhs(a.lse, &p);
  fill_validated(out, Operation::backward, device, a.q.dtype, dims);
  // dq/dk/dv/dsink are fully overwritten, so only a call with none of them has nothing to do
  // (sq == 0 still zeroes dk and dv; sk == 0 still zeroes dq).
  out->nothing_to_do = (dims.b == 0 || (dims.sq == 0 && dims.sk == 0)) && !a.dsink.defined();
  return Status();
}

Status validate(const VarlenBackwardArgs& a, const ExecutionContext& ctx, CheckMode mode,
                Validated<BackwardParams>* out) noexcept {
  *out = Validated<BackwardParams>{};
  RETURN_IF_ERROR(check_context(ctx));
  Dims dims;
  RETURN_IF_ERROR(check_qkv_varlen(a.q, a.k, a.v, /*paged=*/false, mode, &dims));
  const VarlenIndex ix{a.cu_seqlens_q, a.cu_seqlens_k, a.max_seqlen_q,
                       a.max_seqlen_k, a.seqused_q,    a.seqused_k};
  RETURN_IF_ERROR(check_varlen_index(ix, mode, &dims.b));
  dims.sq = a.max_seqlen_q;
  dims.sk = a.max_seqlen_k;
  const i64 total_q = a.q.shape[0], total_k = a.k.shape[0];
  RETURN_IF_ERROR(check_like(a.dout, "dout", 3, "(total_q, h, dv)", a.q, {total_q, dims.h, dims.dv}, mode));
  RETURN_IF_ERROR(check_like(a.out, "out", 3, "(total_q, h, dv)", a.q, {total_q, dims.h, dims.dv}, mode));
  RETURN_IF_ERROR(check_view(a.lse, "lse", 2, "(h, total_q)", mode));
  RETURN_IF_ERROR(check_dtype(a.lse, "lse", DType::float32));
  RETURN_IF_ERROR(check_shape(a.lse, "lse", "(h, total_q)", {dims.h, total_q}));
  RETURN_IF_ERROR(check_like(a.dq, "dq", 3, "(total_q, h, d)", a.q, {total_q, dims.h, dims.d}, mode));
  RETURN_IF_ERROR(check_like(a.dk, "dk", 3, "(total_k, hk, d)", a.q, {total_k, dims.hk, dims.d}, mode));
  RETURN_IF_ERROR(check_like(a.dv, "dv", 3, "(total_k, hk, dv)", a.q, {total_k, dims.hk, dims.dv}, mode));
  RETURN_IF_ERROR(check_dsink(a.dsink, a.options, dims.h, mode));
  BackwardParams& p = out->params;
  RETURN_IF_ERROR(resolve_options(a.options, dims, OptionRules{true, "backward_varlen", true}, mode, &p));

  Roles roles;
  add_backward_inputs(a, &roles);
  roles.add(a.cu_seqlens_q, "cu_seqlens_q", false);
  roles.add(a.cu_seqlens_k, "cu_seqlens_k", false);
  roles.add(a.seqused_q, "seqused_q", false);
  roles.add(a.seqused_k, "seqused_k", false);
  add_option_roles(a.options, &roles);
  add_backward_gradients(a, &roles);
  Device device;
  RETURN_IF_ERROR(check_devices_and_memory(roles, mode, &device));
  RETURN_IF_ERROR(check_varlen_contents(ix, mode, total_q, total_k));

  fill_dims(dims, a.q.dtype, &p);
  fill_varlen_index(ix, &p);
  fill_backward_tensors(a, operand_thd, &p);
  p.q_rows = total_q;
  p.k_rows = total_k;
  fill_lse_ht(a.lse, &p);
  fill_validated(out, Operation::backward_varlen, device, a.q.dtype, dims);
  // Rows outside the used ranges are zeroed, so even b == 0 writes dq/dk/dv when they have rows.
  out->nothing_to_do = total_q == 0 && total_k == 0 && !a.dsink.defined();
  return Status();
}

// ===========================================================================
// combine

Status validate(const CombineArgs& a, const ExecutionContext& ctx, CheckMode mode,
                Validated<CombineParams>* out) noexcept {
  *out = Validated<CombineParams>{};
  RETURN_IF_ERROR(check_context(ctx));
  const TensorView& op = a.out_partial;
  RETURN_IF_ERROR(check_view(op, "out_partial", 5, "(splits, b, sq, h, dv)", mode));
  RETURN_IF_ERROR(check_dtype(op, "out_partial", DType::float32));
  if (op.shape[0] < 1)
    return INVALID("out_partial: %lld splits, must be at least 1", static_cast<ll>(op.shape[0]));
  RETURN_IF_ERROR(check_positive(op, "out_partial", 3, "the head count"));
  RETURN_IF_ERROR(check_positive(op, "out_partial", 4, "the head dim"));
  const i64 splits = op.shape[0], b = op.shape[1], sq = op.shape[2], h = op.shape[3], dv = op.shape[4];
  RETURN_IF_ERROR(check_view(a.lse_partial, "lse_partial", 4, "(splits, b, sq, h)", mode));
  RETURN_IF_ERROR(check_dtype(a.lse_partial, "lse_partial", DType::float32));
  RETURN_IF_ERROR(check_shape(a.lse_partial, "lse_partial", "(splits, b, sq, h)", {splits, b, sq, h}));
  RETURN_IF_ERROR(check_view(a.out, "out", 4, "(b, sq, h, dv)", mode));
  RETURN_IF_ERROR(check_float_dtype(a.out, "out"));
  RETURN_IF_ERROR(check_shape(a.out, "out", "(b, sq, h, dv)", {b, sq, h, dv}));
  if (a.lse.defined()) {
    RETURN_IF_ERROR(check_view(a.lse, "lse", 3, "(b, sq, h)", mode));
    RETURN_IF_ERROR(check_dtype(a.lse, "lse", DType::float32));
    RETURN_IF_ERROR(check_shape(a.lse, "lse", "(b, sq, h)", {b, sq, h}));
  }
  Roles roles;
  roles.add(a.out_partial, "out_partial", false);
  roles.add(a.lse_partial, "lse_partial", false);
  roles.add(a.out, "out", true);
  roles.add(a.lse, "lse", true);
  Device device;
  RETURN_IF_ERROR(check_devices_and_memory(roles, mode, &device));

  CombineParams& p = out->params;
  p.splits = splits;
  p.batch = b;
  p.seqlen = sq;
  p.heads = h;
  p.head_dim_v = dv;
  p.out_partial = static_cast<const float*>(op.data);
  p.op_split_stride = op.stride[0];
  p.op_batch_stride = op.stride[1];
  p.op_row_stride = op.stride[2];
  p.op_head_stride = op.stride[3];
  const TensorView& lp = a.lse_partial;
  p.lse_partial = static_cast<const float*>(lp.data);
  p.lp_split_stride = lp.stride[0];
  p.lp_batch_stride = lp.stride[1];
  p.lp_row_stride = lp.stride[2];
  p.lp_head_stride = lp.stride[3];
  p.out_dtype = a.out.dtype;
  p.out = operand_bshd(a.out);
  p.lse = static_cast<float*>(a.lse.data);
  if (a.lse.defined()) {
    p.lse_batch_stride = a.lse.stride[0];
    p.lse_row_stride = a.lse.stride[1];
    p.lse_head_stride = a.lse.stride[2];
  }
  out->operation = Operation::combine;
  out->device = device;
  out->dtype = a.out.dtype;
  out->head_dim = 0;
  out->head_dim_v = dv;
  out->nothing_to_do = b == 0 || sq == 0;
  return Status();
}

}  // namespace flashattn::detail
