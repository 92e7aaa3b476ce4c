#include "runner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "api/validate.h"
#include "common/numeric.h"
#include "cpu/reference.h"
#include "timing.h"

namespace flashattn::cli {
namespace {

// Forward FLOPs below which the reference checks every element by default; the
// float64 reference runs at roughly 1 GFLOP/s per core.
constexpr double kFullCheckFlops = 2e9;
// Reference work for a sampled backward check over every row of sequence 0.
constexpr double kSampledBackwardFlops = 2e10;

// ----------------------------------------------------------------------------
// Where the tensors of one call live, and their views.

struct Binding {
  Device device{};
  bool varlen = false;  // call forward_varlen / backward_varlen
  std::int64_t max_q = 0, max_k = 0;
  TensorView q, k, v, dout, out, lse, dq, dk, dv, dsink;
  TensorView cu_q, cu_k, block_table, alibi, sink, bias;
  std::deque<DeviceBuffer> memory;  // behind the views (deque: stable addresses)
  DeviceBuffer *out_mem = nullptr, *dq_mem = nullptr, *dk_mem = nullptr, *dv_mem = nullptr,
               *dsink_mem = nullptr;

  // A new buffer on this binding's device, filled from `host` (or poisoned when null).
  DeviceBuffer* allocate(std::size_t bytes, const void* host) {
    memory.emplace_back(device, bytes);
    if (host != nullptr) {
      memory.back().upload(host);
    } else {
      memory.back().fill_bytes(0xFF);
    }
    return &memory.back();
  }
  TensorView tensor(DType dtype, std::initializer_list<std::int64_t> shape, const void* host,
                    DeviceBuffer** keep = nullptr) {
    std::int64_t numel = 1;
    for (std::int64_t n : shape) numel *= n;
    DeviceBuffer* mem = allocate(static_cast<std::size_t>(numel) * dtype_size(dtype), host);
    if (keep != nullptr) *keep = mem;
    return TensorView::contiguous(mem->data(), dtype, shape, device);
  }
};

void poison_outputs(Binding& b) {
  for (DeviceBuffer* mem : {b.out_mem, b.dq_mem, b.dk_mem, b.dv_mem, b.dsink_mem}) {
    if (mem != nullptr) mem->fill_bytes(0xFF);
  }
}

// The problem as the backend under test sees it: every operand in the problem's
// dtype on `device`, K/V paged when the problem is.
std::int64_t max_length(const std::vector<std::int32_t>& lengths) {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

Binding bind_tested(const HostProblem& p, Device device) {
  const ProblemSpec& s = p.spec;
  Binding b;
  b.device = device;
  b.varlen = s.uses_varlen_api();
  b.max_q = max_length(p.len_q);
  b.max_k = max_length(p.len_k);
  const DType t = s.dtype;
  if (b.varlen) {
    b.q = b.tensor(t, {p.rows_q, s.heads, s.head_dim}, p.q.values.data());
    if (s.page_size > 0) {
      b.k = b.tensor(t, {p.num_blocks, s.page_size, s.heads_kv, s.head_dim}, p.k_paged.data());
      b.v = b.tensor(t, {p.num_blocks, s.page_size, s.heads_kv, s.head_dim_v}, p.v_paged.data());
      b.block_table = b.tensor(DType::int32, {s.batch, p.max_blocks}, p.block_table.data());
    } else {
      b.k = b.tensor(t, {p.rows_k, s.heads_kv, s.head_dim}, p.k.values.data());
      b.v = b.tensor(t, {p.rows_k, s.heads_kv, s.head_dim_v}, p.v.values.data());
    }
    b.out = b.tensor(t, {p.rows_q, s.heads, s.head_dim_v}, nullptr, &b.out_mem);
    b.lse = b.tensor(DType::float32, {s.heads, p.rows_q}, nullptr);
    b.cu_q = b.tensor(DType::int32, {s.batch + 1}, p.cu_q.data());
    b.cu_k = b.tensor(DType::int32, {s.batch + 1}, p.cu_k.data());
    if (s.backward) {
      b.dout = b.tensor(t, {p.rows_q, s.heads, s.head_dim_v}, p.dout.values.data());
      b.dq = b.tensor(t, {p.rows_q, s.heads, s.head_dim}, nullptr, &b.dq_mem);
      b.dk = b.tensor(t, {p.rows_k, s.heads_kv, s.head_dim}, nullptr, &b.dk_mem);
      b.dv = b.tensor(t, {p.rows_k, s.heads_kv, s.head_dim_v}, nullptr, &b.dv_mem);
    }
  } else {
    b.q = b.tensor(t, {s.batch, s.seqlen_q, s.heads, s.head_dim}, p.q.values.data());
    b.k = b.tensor(t, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim}, p.k.values.data());
    b.v = b.tensor(t, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim_v}, p.v.values.data());
    b.out = b.tensor(t, {s.batch, s.seqlen_q, s.heads, s.head_dim_v}, nullptr, &b.out_mem);
    b.lse = b.tensor(DType::float32, {s.batch, s.heads, s.seqlen_q}, nullptr);
    if (s.backward) {
      b.dout = b.tensor(t, {s.batch, s.seqlen_q, s.heads, s.head_dim_v}, p.dout.values.data());
      b.dq = b.tensor(t, {s.batch, s.seqlen_q, s.heads, s.head_dim}, nullptr, &b.dq_mem);
      b.dk = b.tensor(t, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim}, nullptr, &b.dk_mem);
      b.dv = b.tensor(t, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim_v}, nullptr, &b.dv_mem);
    }
  }
  if (s.alibi) b.alibi = b.tensor(DType::float32, {s.heads}, p.alibi_slopes.data());
  if (s.sink) {
    b.sink = b.tensor(DType::float32, {s.heads}, p.sink.data());
    if (s.backward) b.dsink = b.tensor(DType::float32, {s.heads}, nullptr, &b.dsink_mem);
  }
  if (s.key_padding) b.bias = b.tensor(DType::boolean, {s.batch, 1, 1, s.seqlen_k}, p.key_mask.data());
  return b;
}

// Which part of the problem the reference computes.
struct Scope {
  bool whole = true;          // the whole problem, laid out like the call under test
  std::int64_t heads = 0;     // leading q heads (whole GQA groups)
  std::int64_t heads_kv = 0;  // leading kv heads
  std::int64_t rows = 0;      // sampled: last `rows` query rows of sequence 0
  bool keys_checked = true;   // backward: dk/dv compared (they need every query row)
  std::string describe;
};

Scope choose_scope(const HostProblem& p, const RunOptions& o, VerifyMode mode) {
  const ProblemSpec& s = p.spec;
  Scope scope;
  scope.heads = s.heads;
  scope.heads_kv = s.heads_kv;
  scope.rows = p.len_q.empty() ? 0 : p.len_q[0];
  if (mode == VerifyMode::full || s.batch == 0) {
    scope.describe = "all outputs";
    return scope;
  }
  scope.whole = false;
  const std::int64_t group = s.heads / s.heads_kv;
  scope.heads_kv = std::clamp<std::int64_t>((o.sample_heads + group - 1) / group, 1, s.heads_kv);
  scope.heads = scope.heads_kv * group;
  // Dropout draws its mask from (batch, head, row, column): keeping sequence 0
  // and heads from 0 keeps those indices, keeping the last rows would not.
  // The gradients of K and V need every query row; dq's rows are independent,
  // so past kSampledBackwardFlops of reference work only dq is checked, on the
  // last rows.
  bool all_rows = s.dropout > 0.f;
  if (s.backward && !all_rows) {
    const double work = 3.5 * 2.0 * static_cast<double>(scope.heads) * p.len_q[0] * p.len_k[0] *
                        static_cast<double>(s.head_dim + s.head_dim_v);
    all_rows = work <= kSampledBackwardFlops;
  }
  if (!all_rows) scope.rows = std::min<std::int64_t>(o.sample_rows, p.len_q[0]);
  scope.keys_checked = scope.rows == p.len_q[0];
  std::ostringstream d;
  d << "sampled: sequence 0, heads 0-" << scope.heads - 1 << ", "
    << (scope.rows == p.len_q[0] ? std::string("all rows") : "last " + std::to_string(scope.rows) + " rows");
  if (s.backward && !scope.keys_checked)
    d << " (dk, dv need every row: not checked; --verify full checks them)";
  scope.describe = d.str();
  return scope;
}

// The reference's view of the problem: fp32 host copies of the inputs (the same
// values as the low-precision ones), never paged, and fresh fp32 outputs.
Binding bind_reference(const HostProblem& p, const Scope& scope) {
  const ProblemSpec& s = p.spec;
  Binding b;
  b.device = Device{};
  const auto* q32 = static_cast<const float*>(p.q.values_f32.data());
  const auto* k32 = static_cast<const float*>(p.k.values_f32.data());
  const auto* v32 = static_cast<const float*>(p.v.values_f32.data());
  const auto* dout32 = s.backward ? static_cast<const float*>(p.dout.values_f32.data()) : nullptr;
  const DType f = DType::float32;
  if (scope.whole) {
    b.varlen = s.uses_varlen_api();
    b.max_q = max_length(p.len_q);
    b.max_k = max_length(p.len_k);
    if (b.varlen) {
      b.q = b.tensor(f, {p.rows_q, s.heads, s.head_dim}, q32);
      b.k = b.tensor(f, {p.rows_k, s.heads_kv, s.head_dim}, k32);
      b.v = b.tensor(f, {p.rows_k, s.heads_kv, s.head_dim_v}, v32);
      b.out = b.tensor(f, {p.rows_q, s.heads, s.head_dim_v}, nullptr, &b.out_mem);
      b.lse = b.tensor(f, {s.heads, p.rows_q}, nullptr);
      b.cu_q = b.tensor(DType::int32, {s.batch + 1}, p.cu_q.data());
      b.cu_k = b.tensor(DType::int32, {s.batch + 1}, p.cu_k.data());
      if (s.backward) {
        b.dout = b.tensor(f, {p.rows_q, s.heads, s.head_dim_v}, dout32);
        b.dq = b.tensor(f, {p.rows_q, s.heads, s.head_dim}, nullptr, &b.dq_mem);
        b.dk = b.tensor(f, {p.rows_k, s.heads_kv, s.head_dim}, nullptr, &b.dk_mem);
        b.dv = b.tensor(f, {p.rows_k, s.heads_kv, s.head_dim_v}, nullptr, &b.dv_mem);
      }
    } else {
      b.q = b.tensor(f, {s.batch, s.seqlen_q, s.heads, s.head_dim}, q32);
      b.k = b.tensor(f, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim}, k32);
      b.v = b.tensor(f, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim_v}, v32);
      b.out = b.tensor(f, {s.batch, s.seqlen_q, s.heads, s.head_dim_v}, nullptr, &b.out_mem);
      b.lse = b.tensor(f, {s.batch, s.heads, s.seqlen_q}, nullptr);
      if (s.backward) {
        b.dout = b.tensor(f, {s.batch, s.seqlen_q, s.heads, s.head_dim_v}, dout32);
        b.dq = b.tensor(f, {s.batch, s.seqlen_q, s.heads, s.head_dim}, nullptr, &b.dq_mem);
        b.dk = b.tensor(f, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim}, nullptr, &b.dk_mem);
        b.dv = b.tensor(f, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim_v}, nullptr, &b.dv_mem);
      }
    }
    if (s.alibi) b.alibi = b.tensor(f, {s.heads}, p.alibi_slopes.data());
    if (s.sink) {
      b.sink = b.tensor(f, {s.heads}, p.sink.data());
      if (s.backward) b.dsink = b.tensor(f, {s.heads}, nullptr, &b.dsink_mem);
    }
    if (s.key_padding) b.bias = b.tensor(DType::boolean, {s.batch, 1, 1, s.seqlen_k}, p.key_mask.data());
    return b;
  }

  // Sampled: a batch-1 call on sequence 0's last `rows` queries and leading heads,
  // as strided views into the full fp32 inputs.
  const std::int64_t rows = scope.rows, lk = p.len_k[0];
  const std::int64_t hs = scope.heads, hks = scope.heads_kv;
  const std::int64_t row0 = p.len_q[0] - rows;  // sequence 0 starts at row 0
  auto input = [](const float* data, std::int64_t n, std::int64_t h_full, std::int64_t h, std::int64_t dim) {
    return TensorView::strided(const_cast<float*>(data), DType::float32, {1, n, h, dim},
                               {n * h_full * dim, h_full * dim, dim, 1});
  };
  b.varlen = false;
  b.max_q = rows;
  b.max_k = lk;
  b.q = input(q32 + row0 * s.heads * s.head_dim, rows, s.heads, hs, s.head_dim);
  b.k = input(k32, lk, s.heads_kv, hks, s.head_dim);
  b.v = input(v32, lk, s.heads_kv, hks, s.head_dim_v);
  b.out = b.tensor(f, {1, rows, hs, s.head_dim_v}, nullptr, &b.out_mem);
  b.lse = b.tensor(f, {1, hs, rows}, nullptr);
  if (s.backward) {
    b.dout = input(dout32 + row0 * s.heads * s.head_dim_v, rows, s.heads, hs, s.head_dim_v);
    b.dq = b.tensor(f, {1, rows, hs, s.head_dim}, nullptr, &b.dq_mem);
    b.dk = b.tensor(f, {1, lk, hks, s.head_dim}, nullptr, &b.dk_mem);
    b.dv = b.tensor(f, {1, lk, hks, s.head_dim_v}, nullptr, &b.dv_mem);
  }
  if (s.alibi) b.alibi = b.tensor(f, {hs}, p.alibi_slopes.data());
  if (s.sink) {
    b.sink = b.tensor(f, {hs}, p.sink.data());
    if (s.backward) b.dsink = b.tensor(f, {hs}, nullptr, &b.dsink_mem);
  }
  // Sequence 0's mask row (batched problems: its keys are the whole sk).
  if (s.key_padding) b.bias = b.tensor(DType::boolean, {1, 1, 1, lk}, p.key_mask.data());
  return b;
}

// ----------------------------------------------------------------------------
// The API calls of a binding.

AttentionOptions options_of(const ProblemSpec& s, const Binding& b) {
  AttentionOptions o;
  o.causal = s.causal;
  o.window = s.window;
  o.softcap = s.softcap;
  o.alibi_slopes = b.alibi;
  o.dropout = Dropout{s.dropout, s.seed, 0};
  o.sink = b.sink;
  o.bias = b.bias;
  return o;
}

struct Call {
  std::function<Status(const ExecutionContext&)> run;
  std::function<Status(const ExecutionContext&, std::size_t*)> workspace;
  std::function<Status(const ExecutionContext&, KernelChoice*)> select;
  // cpu_reference's precision emulation of the same call.
  std::function<Status(const ExecutionContext&, DType)> emulate;
};

Status invoke(const ForwardArgs& a, const ExecutionContext& c) { return forward(a, c); }
Status invoke(const VarlenForwardArgs& a, const ExecutionContext& c) { return forward_varlen(a, c); }
Status invoke(const BackwardArgs& a, const ExecutionContext& c) { return backward(a, c); }
Status invoke(const VarlenBackwardArgs& a, const ExecutionContext& c) { return backward_varlen(a, c); }

template <class Args>
Call make_call(const Args& args) {
  Call call;
  call.run = [args](const ExecutionContext& c) { return invoke(args, c); };
  call.workspace = [args](const ExecutionContext& c, std::size_t* bytes) {
    return workspace_size(args, c, bytes);
  };
  call.select = [args](const ExecutionContext& c, KernelChoice* k) { return select_kernel(args, c, k); };
  call.emulate = [args](const ExecutionContext& c, DType precision) {
    using Params =
        std::conditional_t<std::is_same_v<Args, ForwardArgs> || std::is_same_v<Args, VarlenForwardArgs>,
                           detail::AttentionParams, detail::BackwardParams>;
    detail::Validated<Params> v;
    FLASHATTN_RETURN_IF_ERROR(detail::validate(args, c, detail::CheckMode::full, &v));
    if (v.nothing_to_do) return Status();
    return detail::cpu_reference::run_emulated(v.params, c, precision);
  };
  return call;
}

Call forward_call(const ProblemSpec& s, const Binding& b) {
  if (b.varlen) {
    VarlenForwardArgs a;
    a.q = b.q, a.k = b.k, a.v = b.v, a.out = b.out, a.lse = b.lse;
    a.cu_seqlens_q = b.cu_q, a.cu_seqlens_k = b.cu_k, a.block_table = b.block_table;
    a.max_seqlen_q = b.max_q, a.max_seqlen_k = b.max_k;
    a.options = options_of(s, b);
    return make_call(a);
  }
  ForwardArgs a;
  a.q = b.q, a.k = b.k, a.v = b.v, a.out = b.out, a.lse = b.lse;
  a.options = options_of(s, b);
  return make_call(a);
}

Call backward_call(const ProblemSpec& s, const Binding& b) {
  if (b.varlen) {
    VarlenBackwardArgs a;
    a.dout = b.dout, a.q = b.q, a.k = b.k, a.v = b.v, a.out = b.out, a.lse = b.lse;
    a.cu_seqlens_q = b.cu_q, a.cu_seqlens_k = b.cu_k;
    a.max_seqlen_q = b.max_q, a.max_seqlen_k = b.max_k;
    a.dq = b.dq, a.dk = b.dk, a.dv = b.dv, a.dsink = b.dsink;
    a.options = options_of(s, b);
    a.deterministic = s.deterministic;
    return make_call(a);
  }
  BackwardArgs a;
  a.dout = b.dout, a.q = b.q, a.k = b.k, a.v = b.v, a.out = b.out, a.lse = b.lse;
  a.dq = b.dq, a.dk = b.dk, a.dv = b.dv, a.dsink = b.dsink;
  a.options = options_of(s, b);
  a.deterministic = s.deterministic;
  return make_call(a);
}

void check(const Status& status, const char* what) {
  if (!status.ok()) {
    throw std::runtime_error(std::string(what) + ": " + error_code_name(status.code()) + ": " +
                             status.message());
  }
}

// Workspace for every call of a binding, on its device (the largest need).
DeviceBuffer workspace_for(const std::vector<const Call*>& calls, ExecutionContext* ctx, Device device) {
  std::size_t bytes = 0;
  for (const Call* call : calls) {
    std::size_t need = 0;
    check(call->workspace(*ctx, &need), "workspace_size");
    bytes = std::max(bytes, need);
  }
  DeviceBuffer workspace(device, bytes);
  ctx->workspace = workspace.data();
  ctx->workspace_bytes = bytes;
  return workspace;
}

// ----------------------------------------------------------------------------
// Comparison.

// NaN elements of a (rows, heads, dim) tensor in the given rows: a sampled check compares a few rows, and
// a kernel that skips a whole tile elsewhere (a tile order that misses one) leaves that tile poisoned.
std::int64_t count_nan(const std::vector<unsigned char>& tested, DType dtype, std::int64_t row0,
                       std::int64_t rows, std::int64_t heads, std::int64_t dim) {
  std::int64_t nan = 0;
  for (std::int64_t i = row0 * heads * dim, end = (row0 + rows) * heads * dim; i < end; ++i) {
    if (std::isnan(detail::load_float(tested.data(), dtype, i))) ++nan;
  }
  return nan;
}

// Rows [tested_row0, tested_row0 + rows) of the tested tensor correspond to rows
// [ref_row0, ...) of the reference's.
struct RowMap {
  std::int64_t tested_row0 = 0, ref_row0 = 0, rows = 0;
};

// A tensor viewed as (rows, heads, dim), row-major.
struct RowLayout {
  std::int64_t tested_heads = 0;   // heads per row in the tested tensor
  std::int64_t ref_heads = 0;      // heads per row in the reference tensors
  std::int64_t checked_heads = 0;  // leading heads compared
  std::int64_t dim = 0;
};

ErrorCheck compare(const std::string& name, const std::vector<unsigned char>& tested, DType tested_dtype,
                   const float* ref, const float* lowp, const std::vector<RowMap>& maps, const RowLayout& l,
                   double factor, double atol, double output_ulps) {
  double max_error = 0.0, lowp_error = 0.0, magnitude = 0.0;
  for (const RowMap& m : maps) {
    for (std::int64_t r = 0; r < m.rows; ++r) {
      for (std::int64_t h = 0; h < l.checked_heads; ++h) {
        const std::int64_t t0 = ((m.tested_row0 + r) * l.tested_heads + h) * l.dim;
        const std::int64_t r0 = ((m.ref_row0 + r) * l.ref_heads + h) * l.dim;
        for (std::int64_t e = 0; e < l.dim; ++e) {
          const double actual = detail::load_float(tested.data(), tested_dtype, t0 + e);
          const double expected = ref[r0 + e];
          const double err = std::fabs(actual - expected);
          // NaN (an unwritten, poisoned element or a real NaN) fails the check.
          max_error = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(max_error, err);
          const double lowp_err = std::fabs(static_cast<double>(lowp[r0 + e]) - expected);
          // A NaN in the emulation would otherwise vanish in std::max and zero the tolerance.
          if (std::isnan(lowp_err)) throw std::runtime_error(name + ": the precision emulation produced NaN");
          lowp_error = std::max(lowp_error, lowp_err);
          magnitude = std::max(magnitude, std::fabs(expected));
        }
      }
    }
  }
  ErrorCheck c;
  c.tensor = name;
  c.max_error = max_error;
  c.lowp_error = lowp_error;
  c.factor = factor;
  c.tolerance = factor * lowp_error + atol * std::max(1.0, magnitude) +
                output_ulps * detail::spacing_at(tested_dtype, magnitude);
  c.passed = max_error <= c.tolerance;
  return c;
}

std::vector<unsigned char> fetch(const DeviceBuffer& mem) {
  std::vector<unsigned char> host(mem.bytes());
  mem.download(host.data());
  return host;
}

const float* floats(const DeviceBuffer* mem) { return static_cast<const float*>(mem->data()); }

}  // namespace

bool parse_verify_mode(const std::string& text, VerifyMode* mode) {
  if (text == "auto") {
    *mode = VerifyMode::automatic;
  } else if (text == "full") {
    *mode = VerifyMode::full;
  } else if (text == "sample") {
    *mode = VerifyMode::sample;
  } else if (text == "none") {
    *mode = VerifyMode::none;
  } else {
    return false;
  }
  return true;
}

bool RunResult::passed() const {
  return unwritten <= 0 &&
         std::all_of(checks.begin(), checks.end(), [](const ErrorCheck& c) { return c.passed; });
}

double RunResult::max_error() const {
  double m = 0.0;
  for (const ErrorCheck& c : checks) m = std::max(m, c.max_error);
  return m;
}

Device device_for(Backend backend) {
  switch (backend) {
    case Backend::cpu_reference:
    case Backend::cpu_tiled:
      return Device{};
    case Backend::cuda_sm80:
    case Backend::cuda_sm90:
      return Device{DeviceType::cuda, 0};
    case Backend::automatic:
      break;
  }
  const bool cuda_compiled = backend_compiled(Backend::cuda_sm80) || backend_compiled(Backend::cuda_sm90);
  return cuda_compiled && cuda_device_count() > 0 ? Device{DeviceType::cuda, 0} : Device{};
}

Status query_support(const HostProblem& p, Backend backend, KernelChoice* choice) {
  Binding b = bind_tested(p, device_for(backend));
  ExecutionContext ctx;
  ctx.backend = backend;
  const Call call = p.spec.backward ? backward_call(p.spec, b) : forward_call(p.spec, b);
  return call.select(ctx, choice);
}

RunResult run_problem(const HostProblem& p, const RunOptions& o) {
  const ProblemSpec& s = p.spec;
  RunResult result;
  result.device = device_for(o.backend);
  result.flops = problem_flops(p);
  if (result.device.type == DeviceType::cuda) {
    // Said up front: the tensors could not even be allocated.
    if (o.backend != Backend::automatic && !backend_compiled(o.backend)) {
      result.message = std::string(backend_name(o.backend)) + " is not compiled into this build of flashattn";
      return result;
    }
    if (cuda_device_count() == 0) {
      result.message = std::string(backend_name(o.backend)) + ": no CUDA device is visible";
      return result;
    }
  }
  if (s.backward && s.page_size > 0) {
    result.message =
        "backward over a paged KV cache is not an operation of the API (drop --paged or --backward)";
    return result;
  }

  // --- The backend under test.
  Stream stream(result.device);
  Binding tested = bind_tested(p, result.device);
  ExecutionContext ctx;
  ctx.backend = o.backend;
  ctx.stream = stream.handle();
  ctx.num_threads = o.threads;
  const Call fwd = forward_call(s, tested);
  const Call bwd = s.backward ? backward_call(s, tested) : Call{};
  const Call& main_call = s.backward ? bwd : fwd;

  KernelChoice choice;
  if (Status st = main_call.select(ctx, &choice); !st.ok()) {
    result.message = st.message();
    return result;
  }
  result.kernel = choice.kernel;
  std::vector<const Call*> calls{&fwd};
  if (s.backward) calls.push_back(&bwd);
  const DeviceBuffer workspace = workspace_for(calls, &ctx, result.device);

  // One call with poisoned outputs: the one that is checked.
  poison_outputs(tested);
  // Uploads and the poisoning memsets ran on the legacy default stream, which a
  // non-blocking stream does not wait for.
  synchronize(result.device);
  check(fwd.run(ctx), s.backward ? "forward (for the backward's inputs)" : "forward");
  if (s.backward) check(bwd.run(ctx), "backward");
  stream.synchronize();

  std::vector<double> samples;
  for (int i = 0; i < o.repeats; ++i) {
    Status st;
    samples.push_back(time_call_ms(stream, result.device, [&] { st = main_call.run(ctx); }));
    check(st, s.backward ? "backward" : "forward");
  }
  if (o.repeats == 0) samples.push_back(0.0);
  result.time_ms = median(samples);
  if (o.host_calls > 0 && result.device.type == DeviceType::cuda) {
    Status st;
    result.host_us = host_time_us(
        stream,
        [&] {
          if (st.ok()) st = main_call.run(ctx);
        },
        o.host_calls, 3);
    check(st, s.backward ? "backward" : "forward");
  }
  result.ran = true;

  // --- Verification against the reference.
  VerifyMode mode = o.verify;
  if (mode == VerifyMode::automatic) {
    const double reference_work = forward_flops(p) * (s.backward ? 3.5 : 1.0);
    mode = reference_work <= kFullCheckFlops ? VerifyMode::full : VerifyMode::sample;
  }
  if (mode == VerifyMode::none) return result;
  const Scope scope = choose_scope(p, o, mode);
  result.verified_scope = scope.describe;

  Binding ref = bind_reference(p, scope);
  Binding lowp = bind_reference(p, scope);
  ExecutionContext ref_ctx;
  ref_ctx.backend = Backend::cpu_reference;
  const Call ref_fwd = forward_call(s, ref);
  const Call ref_bwd = s.backward ? backward_call(s, ref) : Call{};
  const Call lowp_fwd = forward_call(s, lowp);
  const Call lowp_bwd = s.backward ? backward_call(s, lowp) : Call{};
  std::vector<const Call*> ref_calls{&ref_fwd};
  if (s.backward) ref_calls.push_back(&ref_bwd);
  const DeviceBuffer ref_workspace = workspace_for(ref_calls, &ref_ctx, Device{});
  check(ref_fwd.run(ref_ctx), "reference forward");
  if (s.backward) {
    check(ref_bwd.run(ref_ctx), "reference backward");
  }
  // The emulated backward reads its own emulated forward's out and LSE (as the tested
  // backward reads the tested forward's): without them it would read poisoned memory.
  check(lowp_fwd.emulate(ref_ctx, s.dtype), "reference forward, precision emulation");
  if (s.backward) check(lowp_bwd.emulate(ref_ctx, s.dtype), "reference backward, precision emulation");

  // Rows of each sequence that were checked, in the tested and the reference tensors.
  std::vector<RowMap> q_rows, k_rows;
  const std::int64_t sequences = scope.whole ? s.batch : 1;
  for (std::int64_t b = 0; b < sequences; ++b) {
    const std::int64_t rows = scope.whole ? p.len_q[b] : scope.rows;
    const std::int64_t tested_row0 = p.cu_q[b] + p.len_q[b] - rows;
    q_rows.push_back({tested_row0, scope.whole ? tested_row0 : 0, rows});
    k_rows.push_back({p.cu_k[b], scope.whole ? p.cu_k[b] : 0, p.len_k[b]});
  }
  const std::int64_t ref_h = scope.whole ? s.heads : scope.heads;
  const std::int64_t ref_hk = scope.whole ? s.heads_kv : scope.heads_kv;
  // The project's tolerance rule, as the test suites apply it: 2x the input-precision
  // error plus fp32 accumulation noise (relative to max(1, max|ref|)); gradients get 3x
  // for head dims >= 192 or softcap, where fp32 sums of dP - D and tanh' cost more bits.
  const bool wide = std::max(s.head_dim, s.head_dim_v) >= 192 || s.softcap > 0.f;
  const double factor = s.backward && wide ? 3.0 : 2.0;
  const double atol = s.backward ? 1e-4 : 1e-5;
  // Gradients: plus half an output ulp at the largest magnitude (tests/backward_test.cpp says why).
  const double output_ulps = s.backward ? 0.5 : 0.0;
  if (!s.backward) {
    const std::vector<unsigned char> out = fetch(*tested.out_mem);
    result.checks.push_back(compare("out", out, s.dtype, floats(ref.out_mem), floats(lowp.out_mem), q_rows,
                                    {s.heads, ref_h, scope.heads, s.head_dim_v}, factor, atol, output_ulps));
    result.unwritten = 0;
    for (std::int64_t b = 0; b < s.batch; ++b)
      result.unwritten += count_nan(out, s.dtype, p.cu_q[b], p.len_q[b], s.heads, s.head_dim_v);
    return result;
  }
  result.checks.push_back(compare("dq", fetch(*tested.dq_mem), s.dtype, floats(ref.dq_mem),
                                  floats(lowp.dq_mem), q_rows, {s.heads, ref_h, scope.heads, s.head_dim},
                                  factor, atol, output_ulps));
  if (!scope.keys_checked) return result;
  result.checks.push_back(
      compare("dk", fetch(*tested.dk_mem), s.dtype, floats(ref.dk_mem), floats(lowp.dk_mem), k_rows,
              {s.heads_kv, ref_hk, scope.heads_kv, s.head_dim}, factor, atol, output_ulps));
  result.checks.push_back(
      compare("dv", fetch(*tested.dv_mem), s.dtype, floats(ref.dv_mem), floats(lowp.dv_mem), k_rows,
              {s.heads_kv, ref_hk, scope.heads_kv, s.head_dim_v}, factor, atol, output_ulps));
  if (s.sink && scope.whole) {
    result.checks.push_back(compare("dsink", fetch(*tested.dsink_mem), DType::float32, floats(ref.dsink_mem),
                                    floats(lowp.dsink_mem), {{0, 0, 1}}, {s.heads, s.heads, s.heads, 1},
                                    factor, atol, output_ulps));
  }
  return result;
}

}  // namespace flashattn::cli
