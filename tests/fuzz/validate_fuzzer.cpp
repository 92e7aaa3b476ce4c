// libFuzzer target for the API layer: random tensor descriptors must never
// crash, overflow, read or write out of bounds, or break the API's promises.
//
// Each input describes one call: the operation, problem dims, and for every
// tensor its rank, shape (occasionally negative or huge), strides (contiguous,
// padded, zero, negative or huge), dtype, device and placement in a fixed
// arena; index tensors (cu_seqlens, block tables, cache lengths) get fuzzed
// contents. Every input runs workspace_size() and select_kernel(), which only
// validate. The call itself runs only when this harness, by its own
// arithmetic, sees that every tensor it described lies inside an arena and that
// the problem is small: then validation passing must mean the backend stays in
// bounds (AddressSanitizer watches the arena edges) and returns ok.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "flashattn/flashattn.h"

namespace {

using flashattn::Backend;
using flashattn::DType;
using flashattn::ErrorCode;
using flashattn::ExecutionContext;
using flashattn::Status;
using flashattn::TensorView;
using i64 = std::int64_t;

constexpr std::size_t kFloatArenaBytes = 1 << 16;
constexpr std::size_t kIndexArenaEntries = 512;
constexpr std::size_t kWorkspaceBytes = 1 << 20;

// Heap arenas so AddressSanitizer's redzones catch any access past their ends.
unsigned char* g_float_arena = nullptr;
std::int32_t* g_index_arena = nullptr;
unsigned char* g_workspace = nullptr;

#define FUZZ_CHECK(cond)           \
  do {                             \
    if (!(cond)) __builtin_trap(); \
  } while (0)

struct Dims {
  i64 b, sq, sk, h, hk, d, dv, total_q, total_k, splits, s_new, pages, page, max_blocks;
};

class Harness {
 public:
  explicit Harness(FuzzedDataProvider& in) : in_(in) {}

  // True while every described tensor is inside an arena and small.
  bool runnable = true;

  // A size: usually the intended one, sometimes off by a little, negative or huge.
  i64 size(i64 intended) {
    switch (in_.ConsumeIntegralInRange<int>(0, 31)) {
      case 0:
        return -in_.ConsumeIntegralInRange<i64>(1, 3);
      case 1:
        return i64{1} << in_.ConsumeIntegralInRange<int>(20, 62);
      case 2:
        return intended + 1;
      case 3:
        return intended > 0 ? intended - 1 : 0;
      case 4:
        return 0;
      default:
        return intended;
    }
  }

  TensorView tensor(DType dtype, std::initializer_list<i64> intended, bool output) {
    TensorView t;
    t.dtype = dtype;
    const int mode = in_.ConsumeIntegralInRange<int>(0, 63);
    if (mode == 0) return t;  // not given
    if (mode == 1) t.dtype = static_cast<DType>(in_.ConsumeIntegralInRange<int>(0, 5));
    t.rank = static_cast<int>(intended.size());
    if (mode == 2) t.rank = in_.ConsumeIntegralInRange<int>(-1, flashattn::kMaxRank);
    if (t.rank < 0 || t.rank > flashattn::kMaxRank) {
      runnable = false;
      return t;  // rank out of range: validation must refuse without reading shapes
    }
    int dim = 0;
    for (i64 s : intended) {
      if (dim < t.rank) t.shape[dim++] = size(s);
    }
    for (; dim < t.rank; ++dim) t.shape[dim] = in_.ConsumeIntegralInRange<i64>(0, 4);
    // Strides: contiguous, padded, or arbitrary.
    const int stride_mode = in_.ConsumeIntegralInRange<int>(0, 15);
    i64 stride = 1;
    for (int d = t.rank - 1; d >= 0; --d) {
      if (stride_mode == 0) {
        const int pick = in_.ConsumeIntegralInRange<int>(0, 5);
        t.stride[d] = pick == 0   ? 0
                      : pick == 1 ? -in_.ConsumeIntegralInRange<i64>(1, 64)
                      : pick == 2 ? (i64{1} << in_.ConsumeIntegralInRange<int>(30, 62))
                                  : in_.ConsumeIntegralInRange<i64>(1, 256);
      } else {
        t.stride[d] = stride;
      }
      const i64 extent = t.shape[d] > 1 ? t.shape[d] : 1;
      const i64 pad = (stride_mode == 1 && d > 0) ? in_.ConsumeIntegralInRange<i64>(0, 3) : 0;
      if (__builtin_mul_overflow(stride, extent, &stride) || __builtin_add_overflow(stride, pad, &stride))
        stride = 1;
    }
    if (stride_mode == 2 && t.rank > 0) t.stride[t.rank - 1] = in_.ConsumeIntegralInRange<i64>(-1, 3);
    if (in_.ConsumeIntegralInRange<int>(0, 63) == 0) {
      t.device = flashattn::Device{flashattn::DeviceType::cuda, in_.ConsumeIntegralInRange<int>(-1, 1)};
      runnable = false;
    }
    place(t, output);
    return t;
  }

  // Index tensors live in their own arena; their contents are fuzzed, mostly plausible.
  TensorView index(std::initializer_list<i64> intended, int kind) {
    TensorView t = tensor(DType::int32, intended, false);
    if (t.data == nullptr || t.dtype != DType::int32) return t;
    i64 lo, hi;
    if (!extent(t, &lo, &hi) || !inside(t, lo, hi) || reinterpret_cast<std::uintptr_t>(t.data) % 4 != 0)
      return t;
    std::int32_t* base = static_cast<std::int32_t*>(t.data);
    i64 running = 0;
    for (i64 e = lo; e <= hi; ++e) {
      std::int32_t value;
      switch (kind) {
        case 0:  // cumulative sequence offsets
          running += in_.ConsumeIntegralInRange<int>(0, 6);
          value = e == lo ? 0 : static_cast<std::int32_t>(running);
          break;
        case 1:  // a block index
          value = in_.ConsumeIntegralInRange<int>(0, 6);
          break;
        default:  // a length or position
          value = in_.ConsumeIntegralInRange<int>(0, 10);
      }
      if (in_.ConsumeIntegralInRange<int>(0, 31) == 0) value = in_.ConsumeIntegral<std::int32_t>();
      base[e] = value;
    }
    return t;
  }

  i64 scalar(i64 intended) { return size(intended); }

 private:
  static bool extent(const TensorView& t, i64* lo, i64* hi) {
    *lo = 0;
    *hi = 0;
    for (int d = 0; d < t.rank; ++d) {
      if (t.shape[d] < 0) return false;
      if (t.shape[d] == 0) {  // no elements
        *hi = -1;
        return true;
      }
    }
    for (int d = 0; d < t.rank; ++d) {
      i64 reach;
      if (__builtin_mul_overflow(t.stride[d], t.shape[d] - 1, &reach)) return false;
      if (__builtin_add_overflow(reach < 0 ? *lo : *hi, reach, reach < 0 ? lo : hi)) return false;
    }
    // Extents this harness places are small; anything larger is "outside" by definition.
    i64 span;
    return !__builtin_sub_overflow(*hi, *lo, &span) && span < (i64{1} << 40);
  }

  static std::size_t element_size(DType dtype) {
    const std::size_t s = flashattn::dtype_size(dtype);
    return s ? s : 1;
  }

  bool inside(const TensorView& t, i64 lo, i64 hi) const {
    if (hi < lo) return true;  // empty
    const auto p = reinterpret_cast<std::uintptr_t>(t.data);
    const std::size_t es = element_size(t.dtype);
    auto in_arena = [&](const void* arena, std::size_t bytes) {
      const auto a = reinterpret_cast<std::uintptr_t>(arena);
      if (p < a || p >= a + bytes) return false;
      const i64 offset = static_cast<i64>(p - a);
      // Guard the arithmetic: the extent must be small for the check to mean anything.
      if (lo < -(1 << 20) || hi > (1 << 20)) return false;
      return offset + lo * static_cast<i64>(es) >= 0 &&
             offset + (hi + 1) * static_cast<i64>(es) <= static_cast<i64>(bytes);
    };
    return in_arena(g_float_arena, kFloatArenaBytes) ||
           in_arena(g_index_arena, kIndexArenaEntries * sizeof(std::int32_t));
  }

  void place(TensorView& t, bool output) {
    i64 lo = 0, hi = 0;
    const bool sane = extent(t, &lo, &hi);
    i64 numel = 1;
    for (int d = 0; d < t.rank; ++d)
      numel =
          (t.shape[d] >= 0 && t.shape[d] < (1 << 20) && numel < (1 << 20)) ? numel * t.shape[d] : (1 << 20);
    const bool is_index = t.dtype == DType::int32;
    unsigned char* arena = is_index ? reinterpret_cast<unsigned char*>(g_index_arena) : g_float_arena;
    const std::size_t bytes = is_index ? kIndexArenaEntries * sizeof(std::int32_t) : kFloatArenaBytes;
    const std::size_t es = element_size(t.dtype);
    const int where = in_.ConsumeIntegralInRange<int>(0, 31);
    if (where == 0) {
      t.data = nullptr;
    } else if (where == 1 || !sane || hi - lo + 1 > static_cast<i64>(bytes / es)) {
      t.data = arena + in_.ConsumeIntegralInRange<std::size_t>(0, bytes - 1);  // anywhere, maybe misaligned
    } else {
      // Bump allocation (non-overlapping) or a random in-bounds offset (may overlap others).
      const i64 span = (hi - lo + 1) * static_cast<i64>(es);
      std::size_t& cursor = is_index ? index_cursor_ : float_cursor_;
      std::size_t start;
      if (in_.ConsumeBool() && cursor + span <= bytes) {
        start = cursor;
        cursor = (cursor + span + 255) / 256 * 256;
      } else {
        start = in_.ConsumeIntegralInRange<std::size_t>(0, bytes - span) / es * es;
      }
      t.data = arena + start - lo * static_cast<i64>(es);
    }
    (void)output;
    if (!sane || numel > 4096 || !inside(t, lo, hi) || (t.data == nullptr && numel > 0) ||
        reinterpret_cast<std::uintptr_t>(t.data) % es != 0) {
      runnable = false;
    }
  }

  FuzzedDataProvider& in_;
  std::size_t float_cursor_ = 0, index_cursor_ = 0;
};

DType pick_dtype(FuzzedDataProvider& in) {
  const DType dtypes[] = {DType::float32, DType::float16, DType::bfloat16};
  return dtypes[in.ConsumeIntegralInRange<int>(0, 2)];
}

flashattn::AttentionOptions options(FuzzedDataProvider& in, Harness& hz, const Dims& d, bool backward) {
  flashattn::AttentionOptions o;
  if (in.ConsumeBool()) o.softmax_scale = in.ConsumeFloatingPoint<float>();
  o.causal = in.ConsumeBool();
  if (in.ConsumeBool()) {
    o.window.left = in.ConsumeIntegralInRange<i64>(-3, 12);
    o.window.right = in.ConsumeIntegralInRange<i64>(-3, 12);
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0)
    o.softcap = in.ConsumeFloatingPointInRange<float>(-1.f, 50.f);
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    o.dropout.p = in.ConsumeProbability<float>() * 1.1f;
    o.dropout.seed = in.ConsumeIntegral<std::uint64_t>();
    o.dropout.offset = in.ConsumeIntegral<std::uint64_t>();
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    o.alibi_slopes = in.ConsumeBool() ? hz.tensor(DType::float32, {d.h}, false)
                                      : hz.tensor(DType::float32, {d.b, d.h}, false);
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) o.sink = hz.tensor(DType::float32, {d.h}, false);
  (void)backward;
  return o;
}

template <class Args>
void exercise(const Args& args, FuzzedDataProvider& in, bool runnable,
              Status (*run)(const Args&, const ExecutionContext&) noexcept) {
  ExecutionContext ctx;
  ctx.num_threads = in.ConsumeIntegralInRange<int>(-1, 2);
  const int backend = in.ConsumeIntegralInRange<int>(0, 15);
  ctx.backend = backend < 6    ? Backend::cpu_tiled
                : backend < 12 ? Backend::cpu_reference
                : backend < 14 ? Backend::automatic
                               : static_cast<Backend>(backend - 11);  // incl. cuda and invalid

  std::size_t bytes = 0;
  const Status ws = flashattn::workspace_size(args, ctx, &bytes);
  flashattn::KernelChoice choice;
  const Status sel = flashattn::select_kernel(args, ctx, &choice);
  // Both validate the same shapes: they agree, and failures say why.
  FUZZ_CHECK(ws.ok() == sel.ok());
  FUZZ_CHECK(ws.ok() || (ws.message()[0] != '\0' && std::strlen(ws.message()) < Status::kMaxMessage));
  FUZZ_CHECK(sel.ok() ? choice.kernel[0] != '\0'
                      : std::strcmp(choice.reason, sel.message()) == 0 ||
                            std::strlen(choice.reason) == sizeof choice.reason - 1);
  if (!runnable || ctx.num_threads < 0) return;
  if (ws.ok() && bytes > kWorkspaceBytes) return;
  if (bytes > 0 && in.ConsumeIntegralInRange<int>(0, 15) != 0) {
    ctx.workspace = g_workspace;
    ctx.workspace_bytes = kWorkspaceBytes;
  }
  const Status status = run(args, ctx);
#ifdef FLASHATTN_FUZZ_STATS  // -DFLASHATTN_FUZZ_STATS: how many calls reach a backend and succeed
  static long calls = 0, succeeded = 0;
  ++calls;
  succeeded += status.ok();
  if ((calls & (calls - 1)) == 0)
    std::fprintf(stderr, "[stats] run %ld calls, %ld ok; last: %s\n", calls, succeeded, status.message());
#endif
  // A shape-level rejection is also a call-level rejection.
  if (!ws.ok() && ws.code() == ErrorCode::invalid_argument) FUZZ_CHECK(!status.ok());
  FUZZ_CHECK(status.code() != ErrorCode::internal);
  if (ws.ok() && (bytes == 0 || ctx.workspace != nullptr)) {
    // Anything the call rejects beyond shapes is about pointers or index contents.
    FUZZ_CHECK(status.ok() || status.code() == ErrorCode::invalid_argument ||
               status.code() == ErrorCode::unsupported);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_float_arena = new unsigned char[kFloatArenaBytes];
  g_index_arena = new std::int32_t[kIndexArenaEntries];
  g_workspace = new (std::align_val_t{256}) unsigned char[kWorkspaceBytes];
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  // Finite values everywhere, refreshed per input (outputs of the last run overwrote some).
  for (std::size_t i = 0; i < kFloatArenaBytes / 4; ++i) {
    const float value = static_cast<float>(static_cast<int>(i * 2654435761u % 2001) - 1000) / 1000.f;
    std::memcpy(g_float_arena + 4 * i, &value, 4);
  }
  std::memset(g_index_arena, 0, kIndexArenaEntries * sizeof(std::int32_t));

  Harness hz(in);
  Dims d;
  d.b = in.ConsumeIntegralInRange<i64>(0, 3);
  d.sq = in.ConsumeIntegralInRange<i64>(0, 9);
  d.sk = in.ConsumeIntegralInRange<i64>(0, 9);
  d.hk = in.ConsumeIntegralInRange<i64>(1, 2);
  d.h = d.hk * in.ConsumeIntegralInRange<i64>(1, 3);
  d.d = in.ConsumeIntegralInRange<i64>(1, 12);
  d.dv = in.ConsumeBool() ? d.d : in.ConsumeIntegralInRange<i64>(1, 12);
  d.total_q = in.ConsumeIntegralInRange<i64>(0, 20);
  d.total_k = in.ConsumeIntegralInRange<i64>(0, 20);
  d.splits = in.ConsumeIntegralInRange<i64>(1, 4);
  d.s_new = in.ConsumeIntegralInRange<i64>(0, 3);
  d.pages = in.ConsumeIntegralInRange<i64>(1, 6);
  d.page = in.ConsumeIntegralInRange<i64>(1, 5);
  d.max_blocks = in.ConsumeIntegralInRange<i64>(0, 4);
  const DType dt = pick_dtype(in);
  const int op = in.ConsumeIntegralInRange<int>(0, 6);
  if (d.b * d.h * (d.sq + d.total_q + 1) * (d.sk + d.total_k + d.max_blocks * d.page + 1) > (1 << 16))
    hz.runnable = false;

  switch (op) {
    case 0: {
      flashattn::ForwardArgs a;
      a.q = hz.tensor(dt, {d.b, d.sq, d.h, d.d}, false);
      a.k = hz.tensor(dt, {d.b, d.sk, d.hk, d.d}, false);
      a.v = hz.tensor(dt, {d.b, d.sk, d.hk, d.dv}, false);
      a.out = hz.tensor(dt, {d.b, d.sq, d.h, d.dv}, true);
      a.lse = hz.tensor(DType::float32, {d.b, d.h, d.sq}, true);
      a.options = options(in, hz, d, false);
      exercise(a, in, hz.runnable, &flashattn::forward);
      break;
    }
    case 1:
    case 2: {
      const bool paged = op == 2;
      flashattn::VarlenForwardArgs a;
      a.q = hz.tensor(dt, {d.total_q, d.h, d.d}, false);
      a.k = paged ? hz.tensor(dt, {d.pages, d.page, d.hk, d.d}, false)
                  : hz.tensor(dt, {d.total_k, d.hk, d.d}, false);
      a.v = paged ? hz.tensor(dt, {d.pages, d.page, d.hk, d.dv}, false)
                  : hz.tensor(dt, {d.total_k, d.hk, d.dv}, false);
      a.cu_seqlens_q = hz.index({d.b + 1}, 0);
      a.cu_seqlens_k = hz.index({d.b + 1}, 0);
      a.max_seqlen_q = hz.scalar(in.ConsumeIntegralInRange<i64>(0, 12));
      a.max_seqlen_k = hz.scalar(in.ConsumeIntegralInRange<i64>(0, 12));
      if (a.max_seqlen_q > 64 || a.max_seqlen_k > 64) hz.runnable = false;
      if (in.ConsumeBool()) a.seqused_q = hz.index({d.b}, 2);
      if (in.ConsumeBool()) a.seqused_k = hz.index({d.b}, 2);
      if (paged) a.block_table = hz.index({d.b, d.max_blocks}, 1);
      a.out = hz.tensor(dt, {d.total_q, d.h, d.dv}, true);
      a.lse = hz.tensor(DType::float32, {d.h, d.total_q}, true);
      a.options = options(in, hz, d, false);
      exercise(a, in, hz.runnable, &flashattn::forward_varlen);
      break;
    }
    case 3: {
      flashattn::KVCacheForwardArgs a;
      const bool paged = in.ConsumeBool();
      const i64 capacity = in.ConsumeIntegralInRange<i64>(0, 10);
      a.q = hz.tensor(dt, {d.b, d.sq, d.h, d.d}, false);
      a.k_cache = paged ? hz.tensor(dt, {d.pages, d.page, d.hk, d.d}, true)
                        : hz.tensor(dt, {d.b, capacity, d.hk, d.d}, true);
      a.v_cache = paged ? hz.tensor(dt, {d.pages, d.page, d.hk, d.dv}, true)
                        : hz.tensor(dt, {d.b, capacity, d.hk, d.dv}, true);
      if (paged) a.block_table = hz.index({d.b, d.max_blocks}, 1);
      if (in.ConsumeBool()) a.cache_seqlens = hz.index({d.b}, 2);
      if (in.ConsumeIntegralInRange<int>(0, 3) == 0) a.cache_batch_idx = hz.index({d.b}, 1);
      if (in.ConsumeIntegralInRange<int>(0, 3) == 0) a.cache_leftpad = hz.index({d.b}, 2);
      if (in.ConsumeBool()) {
        a.k_new = hz.tensor(dt, {d.b, d.s_new, d.hk, d.d}, false);
        a.v_new = hz.tensor(dt, {d.b, d.s_new, d.hk, d.dv}, false);
      }
      if (in.ConsumeIntegralInRange<int>(0, 2) == 0) {
        const i64 rows = in.ConsumeIntegralInRange<i64>(0, 16),
                  half = in.ConsumeIntegralInRange<i64>(0, (d.d + 1) / 2);
        a.rotary_cos = hz.tensor(dt, {rows, half}, false);
        a.rotary_sin = hz.tensor(dt, {rows, half}, false);
        a.rotary_interleaved = in.ConsumeBool();
      }
      a.num_splits = in.ConsumeIntegralInRange<int>(-1, 5);
      a.out = hz.tensor(dt, {d.b, d.sq, d.h, d.dv}, true);
      a.lse = hz.tensor(DType::float32, {d.b, d.h, d.sq}, true);
      a.options = options(in, hz, d, false);
      exercise(a, in, hz.runnable, &flashattn::forward_kvcache);
      break;
    }
    case 4: {
      flashattn::BackwardArgs a;
      a.dout = hz.tensor(dt, {d.b, d.sq, d.h, d.dv}, false);
      a.q = hz.tensor(dt, {d.b, d.sq, d.h, d.d}, false);
      a.k = hz.tensor(dt, {d.b, d.sk, d.hk, d.d}, false);
      a.v = hz.tensor(dt, {d.b, d.sk, d.hk, d.dv}, false);
      a.out = hz.tensor(dt, {d.b, d.sq, d.h, d.dv}, false);
      a.lse = hz.tensor(DType::float32, {d.b, d.h, d.sq}, false);
      a.dq = hz.tensor(dt, {d.b, d.sq, d.h, d.d}, true);
      a.dk = hz.tensor(dt, {d.b, d.sk, d.hk, d.d}, true);
      a.dv = hz.tensor(dt, {d.b, d.sk, d.hk, d.dv}, true);
      a.options = options(in, hz, d, true);
      if (a.options.sink.defined() || in.ConsumeIntegralInRange<int>(0, 7) == 0) {
        a.dsink = hz.tensor(DType::float32, {d.h}, true);
      }
      a.deterministic = in.ConsumeBool();
      exercise(a, in, hz.runnable, &flashattn::backward);
      break;
    }
    case 5: {
      flashattn::VarlenBackwardArgs a;
      a.dout = hz.tensor(dt, {d.total_q, d.h, d.dv}, false);
      a.q = hz.tensor(dt, {d.total_q, d.h, d.d}, false);
      a.k = hz.tensor(dt, {d.total_k, d.hk, d.d}, false);
      a.v = hz.tensor(dt, {d.total_k, d.hk, d.dv}, false);
      a.out = hz.tensor(dt, {d.total_q, d.h, d.dv}, false);
      a.lse = hz.tensor(DType::float32, {d.h, d.total_q}, false);
      a.cu_seqlens_q = hz.index({d.b + 1}, 0);
      a.cu_seqlens_k = hz.index({d.b + 1}, 0);
      a.max_seqlen_q = hz.scalar(in.ConsumeIntegralInRange<i64>(0, 12));
      a.max_seqlen_k = hz.scalar(in.ConsumeIntegralInRange<i64>(0, 12));
      if (a.max_seqlen_q > 64 || a.max_seqlen_k > 64) hz.runnable = false;
      if (in.ConsumeBool()) a.seqused_q = hz.index({d.b}, 2);
      if (in.ConsumeBool()) a.seqused_k = hz.index({d.b}, 2);
      a.dq = hz.tensor(dt, {d.total_q, d.h, d.d}, true);
      a.dk = hz.tensor(dt, {d.total_k, d.hk, d.d}, true);
      a.dv = hz.tensor(dt, {d.total_k, d.hk, d.dv}, true);
      a.options = options(in, hz, d, true);
      if (a.options.sink.defined()) a.dsink = hz.tensor(DType::float32, {d.h}, true);
      exercise(a, in, hz.runnable, &flashattn::backward_varlen);
      break;
    }
    default: {
      flashattn::CombineArgs a;
      a.out_partial = hz.tensor(DType::float32, {d.splits, d.b, d.sq, d.h, d.dv}, false);
      a.lse_partial = hz.tensor(DType::float32, {d.splits, d.b, d.sq, d.h}, false);
      a.out = hz.tensor(dt, {d.b, d.sq, d.h, d.dv}, true);
      a.lse = hz.tensor(DType::float32, {d.b, d.sq, d.h}, true);
      exercise(a, in, hz.runnable, &flashattn::combine);
      break;
    }
  }
  return 0;
}
