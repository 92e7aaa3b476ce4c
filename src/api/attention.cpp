// The public entry points: validate -> params -> backend -> workspace -> run.
//
// Every call goes through the same three steps, written once in run_call,
// workspace_call and select_call below; the per-operation functions only name
// their argument type.
//
// Empty problems: when validation finds that the call has no output element to
// write (b == 0 or sq == 0 in a forward or combine; no dq/dk/dv row and no
// dsink in a backward), the call succeeds after validation and backend choice
// without reaching the backend, so no backend has to handle empty grids. In
// forward_kvcache this includes sq == 0 with k_new: as documented for every
// operation, b == 0 or sq == 0 writes nothing, the cache included.
#include "flashattn/attention.h"

#include <cstdint>
#include <cstdio>

#include "api/backend_select.h"
#include "api/validate.h"
#include "backend.h"
#include "flashattn/info.h"

namespace flashattn {
namespace {

using detail::BackendChoice;
using detail::CheckMode;
using detail::Validated;

// The params type each argument struct validates into.
template <class Args>
struct ParamsOf;
template <>
struct ParamsOf<ForwardArgs> {
  using type = detail::AttentionParams;
};
template <>
struct ParamsOf<VarlenForwardArgs> {
  using type = detail::AttentionParams;
};
template <>
struct ParamsOf<KVCacheForwardArgs> {
  using type = detail::AttentionParams;
};
template <>
struct ParamsOf<BackwardArgs> {
  using type = detail::BackwardParams;
};
template <>
struct ParamsOf<VarlenBackwardArgs> {
  using type = detail::BackwardParams;
};
template <>
struct ParamsOf<CombineArgs> {
  using type = detail::CombineParams;
};

constexpr std::uintptr_t kWorkspaceAlignment = 256;

Status check_workspace(std::size_t needed, const ExecutionContext& ctx, Backend backend) {
  if (needed == 0) return Status();
  if (ctx.workspace == nullptr) {
    return Status::error(ErrorCode::invalid_argument,
                         "ctx.workspace: null, but %s needs %zu bytes for this call (query workspace_size)",
                         backend_name(backend), needed);
  }
  if (ctx.workspace_bytes < needed) {
    return Status::error(
        ErrorCode::invalid_argument,
        "ctx.workspace_bytes: %zu given, but %s needs %zu bytes for this call (query workspace_size)",
        ctx.workspace_bytes, backend_name(backend), needed);
  }
  if (reinterpret_cast<std::uintptr_t>(ctx.workspace) % kWorkspaceAlignment != 0) {
    return Status::error(ErrorCode::invalid_argument, "ctx.workspace: %p is not 256-byte aligned",
                         ctx.workspace);
  }
  return Status();
}

template <class Args>
Status run_call(const Args& args, const ExecutionContext& ctx) noexcept {
  using Params = typename ParamsOf<Args>::type;
  Validated<Params> call;
  FLASHATTN_RETURN_IF_ERROR(detail::validate(args, ctx, CheckMode::full, &call));
  BackendChoice<Params> choice;
  FLASHATTN_RETURN_IF_ERROR(detail::select_backend(call, ctx, &choice));
  if (call.nothing_to_do) return Status();
  const std::size_t needed = choice.ops->workspace_size(call.params, detail::cpu_threads(ctx));
  FLASHATTN_RETURN_IF_ERROR(check_workspace(needed, ctx, choice.backend));
  return choice.ops->run(call.params, ctx);
}

template <class Args>
Status workspace_call(const Args& args, const ExecutionContext& ctx, std::size_t* bytes) noexcept {
  using Params = typename ParamsOf<Args>::type;
  if (bytes == nullptr) return Status::error(ErrorCode::invalid_argument, "bytes: null pointer");
  *bytes = 0;
  Validated<Params> call;
  FLASHATTN_RETURN_IF_ERROR(detail::validate(args, ctx, CheckMode::shapes, &call));
  BackendChoice<Params> choice;
  FLASHATTN_RETURN_IF_ERROR(detail::select_backend(call, ctx, &choice));
  if (!call.nothing_to_do) *bytes = choice.ops->workspace_size(call.params, detail::cpu_threads(ctx));
  return Status();
}

// "cpu_tiled/forward/bf16/d128", "cuda_sm80/backward/fp16/d192v128", "cpu_tiled/combine/bf16/dv64".
void kernel_name(const char* backend, detail::Operation op, DType dtype, std::int64_t d, std::int64_t dv,
                 char* out, std::size_t size) {
  const char* op_name = detail::operation_name(op);
  if (op == detail::Operation::combine) {
    std::snprintf(out, size, "%s/%s/%s/dv%lld", backend, op_name, dtype_name(dtype),
                  static_cast<long long>(dv));
  } else if (d == dv) {
    std::snprintf(out, size, "%s/%s/%s/d%lld", backend, op_name, dtype_name(dtype),
                  static_cast<long long>(d));
  } else {
    std::snprintf(out, size, "%s/%s/%s/d%lldv%lld", backend, op_name, dtype_name(dtype),
                  static_cast<long long>(d), static_cast<long long>(dv));
  }
}

// Truncating copy into a fixed buffer.
void copy_text(const char* text, char* out, std::size_t size) {
  std::size_t n = 0;
  for (; n + 1 < size && text[n] != '\0'; ++n) out[n] = text[n];
  out[n] = '\0';
}

template <class Args>
Status select_call(const Args& args, const ExecutionContext& ctx, KernelChoice* out) noexcept {
  using Params = typename ParamsOf<Args>::type;
  if (out == nullptr) return Status::error(ErrorCode::invalid_argument, "choice: null pointer");
  *out = KernelChoice{};
  Validated<Params> call;
  Status status = detail::validate(args, ctx, CheckMode::shapes, &call);
  BackendChoice<Params> choice;
  if (status.ok()) status = detail::select_backend(call, ctx, &choice);
  if (!status.ok()) {
    copy_text(status.message(), out->reason, sizeof out->reason);
    return status;
  }
  out->backend = choice.backend;
  kernel_name(backend_name(choice.backend), call.operation, call.dtype, call.head_dim, call.head_dim_v,
              out->kernel, sizeof out->kernel);
  copy_text(choice.reason, out->reason, sizeof out->reason);
  return Status();
}

}  // namespace

Status forward(const ForwardArgs& args, const ExecutionContext& ctx) noexcept { return run_call(args, ctx); }
Status forward_varlen(const VarlenForwardArgs& args, const ExecutionContext& ctx) noexcept {
  return run_call(args, ctx);
}
Status forward_kvcache(const KVCacheForwardArgs& args, const ExecutionContext& ctx) noexcept {
  return run_call(args, ctx);
}
Status backward(const BackwardArgs& args, const ExecutionContext& ctx) noexcept {
  return run_call(args, ctx);
}
Status backward_varlen(const VarlenBackwardArgs& args, const ExecutionContext& ctx) noexcept {
  return run_call(args, ctx);
}
Status combine(const CombineArgs& args, const ExecutionContext& ctx) noexcept { return run_call(args, ctx); }

Status workspace_size(const ForwardArgs& args, const ExecutionContext& ctx, std::size_t* bytes) noexcept {
  return workspace_call(args, ctx, bytes);
}
Status workspace_size(const VarlenForwardArgs& args, const ExecutionContext& ctx,
                      std::size_t* bytes) noexcept {
  return workspace_call(args, ctx, bytes);
}
Status workspace_size(const KVCacheForwardArgs& args, const ExecutionContext& ctx,
                      std::size_t* bytes) noexcept {
  return workspace_call(args, ctx, bytes);
}
Status workspace_size(const BackwardArgs& args, const ExecutionContext& ctx, std::size_t* bytes) noexcept {
  return workspace_call(args, ctx, bytes);
}
Status workspace_size(const VarlenBackwardArgs& args, const ExecutionContext& ctx,
                      std::size_t* bytes) noexcept {
  return workspace_call(args, ctx, bytes);
}
Status workspace_size(const CombineArgs& args, const ExecutionContext& ctx, std::size_t* bytes) noexcept {
  return workspace_call(args, ctx, bytes);
}

Status select_kernel(const ForwardArgs& args, const ExecutionContext& ctx, KernelChoice* choice) noexcept {
  return select_call(args, ctx, choice);
}
Status select_kernel(const VarlenForwardArgs& args, const ExecutionContext& ctx,
                     KernelChoice* choice) noexcept {
  return select_call(args, ctx, choice);
}
Status select_kernel(const KVCacheForwardArgs& args, const ExecutionContext& ctx,
                     KernelChoice* choice) noexcept {
  return select_call(args, ctx, choice);
}
Status select_kernel(const BackwardArgs& args, const ExecutionContext& ctx, KernelChoice* choice) noexcept {
  return select_call(args, ctx, choice);
}
Status select_kernel(const VarlenBackwardArgs& args, const ExecutionContext& ctx,
                     KernelChoice* choice) noexcept {
  return select_call(args, ctx, choice);
}
Status select_kernel(const CombineArgs& args, const ExecutionContext& ctx, KernelChoice* choice) noexcept {
  return select_call(args, ctx, choice);
}

}  // namespace flashattn
