#include "support/oracle.h"

#include "api/validate.h"
#include "cpu/reference.h"

namespace flashattn::test {

namespace {

template <class Args, class Params>
Status emulate(const Args& args, DType precision) {
  ExecutionContext ctx;
  ctx.backend = Backend::cpu_reference;
  detail::Validated<Params> validated;
  FLASHATTN_RETURN_IF_ERROR(detail::validate(args, ctx, detail::CheckMode::full, &validated));
  if (validated.nothing_to_do) return Status();
  const std::size_t bytes = detail::cpu_reference::workspace_size(validated.params, detail::cpu_threads(ctx));
  DeviceMemory workspace;
  if (bytes > 0) {
    workspace = DeviceMemory(Backend::cpu_reference, bytes);
    ctx.workspace = workspace.data();
    ctx.workspace_bytes = bytes;
  }
  return detail::cpu_reference::run_emulated(validated.params, ctx, precision);
}

}  // namespace

Status run_reference_emulated(const ForwardArgs& a, DType p) {
  return emulate<ForwardArgs, detail::AttentionParams>(a, p);
}
Status run_reference_emulated(const VarlenForwardArgs& a, DType p) {
  return emulate<VarlenForwardArgs, detail::AttentionParams>(a, p);
}
Status run_reference_emulated(const KVCacheForwardArgs& a, DType p) {
  return emulate<KVCacheForwardArgs, detail::AttentionParams>(a, p);
}
Status run_reference_emulated(const BackwardArgs& a, DType p) {
  return emulate<BackwardArgs, detail::BackwardParams>(a, p);
}
Status run_reference_emulated(const VarlenBackwardArgs& a, DType p) {
  return emulate<VarlenBackwardArgs, detail::BackwardParams>(a, p);
}

}  // namespace flashattn::test
