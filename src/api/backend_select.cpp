// Backend selection; see backend_select.h.
#include "api/backend_select.h"

#include <cstdio>

#include "flashattn/info.h"

namespace flashattn::detail {
namespace {

template <class Params>
struct BackendRow {
  Backend backend;
  DeviceType device;
  bool automatic;                 // Backend::automatic may choose it
  const BackendOps<Params>* ops;  // null: not compiled into this build
  const char* absent;             // why it is missing when ops is null
};

// One table per params type, generated from the same list so the order of
// preference is written once. The function pointers resolve the overloads of
// each backend namespace for Params.
template <class Params>
struct Table {
  static constexpr BackendOps<Params> cpu_reference_ops{&cpu_reference::unsupported_reason,
                                                        &cpu_reference::workspace_size, &cpu_reference::run};
  static constexpr BackendOps<Params> cpu_tiled_ops{&cpu_tiled::unsupported_reason,
                                                    &cpu_tiled::workspace_size, &cpu_tiled::run};
#if FLASHATTN_WITH_CUDA
  static constexpr BackendOps<Params> cuda_sm80_ops{&cuda_sm80::unsupported_reason,
                                                    &cuda_sm80::workspace_size, &cuda_sm80::run};
#endif
#if FLASHATTN_WITH_SM90
  static constexpr BackendOps<Params> cuda_sm90_ops{&cuda_sm90::unsupported_reason,
                                                    &cuda_sm90::workspace_size, &cuda_sm90::run};
#endif

  // Order = preference of Backend::automatic on each device.
  static constexpr BackendRow<Params> rows[] = {
#if FLASHATTN_WITH_SM90
      {Backend::cuda_sm90, DeviceType::cuda, true, &cuda_sm90_ops, nullptr},
#else
      {Backend::cuda_sm90, DeviceType::cuda, true, nullptr, "not compiled into this build"},
#endif
#if FLASHATTN_WITH_CUDA
      {Backend::cuda_sm80, DeviceType::cuda, true, &cuda_sm80_ops, nullptr},
#else
      {Backend::cuda_sm80, DeviceType::cuda, true, nullptr,
       "not compiled into this build (FLASHATTN_CUDA=OFF)"},
#endif
      {Backend::cpu_tiled, DeviceType::cpu, true, &cpu_tiled_ops, nullptr},
      {Backend::cpu_reference, DeviceType::cpu, false, &cpu_reference_ops, nullptr},
  };
};

const char* device_type_name(DeviceType type) { return type == DeviceType::cuda ? "cuda" : "cpu"; }

// Appends to a fixed buffer, truncating.
struct Appender {
  char* buffer;
  std::size_t size;
  std::size_t used = 0;
  template <class... T>
  void add(const char* format, T... values) {
    if (used + 1 >= size) return;
    const int n = std::snprintf(buffer + used, size - used, format, values...);
    if (n > 0)
      used = used + static_cast<std::size_t>(n) < size ? used + static_cast<std::size_t>(n) : size - 1;
  }
};

}  // namespace

template <class Params>
Status select_backend(const Validated<Params>& call, const ExecutionContext& ctx,
                      BackendChoice<Params>* choice) noexcept {
  *choice = BackendChoice<Params>{};
  const char* op = operation_name(call.operation);
  const DeviceType device = call.device.type;
  const auto& rows = Table<Params>::rows;

  if (ctx.backend != Backend::automatic) {
    for (const BackendRow<Params>& row : rows) {
      if (row.backend != ctx.backend) continue;
      if (row.device != device) {
        return Status::error(
            ErrorCode::invalid_argument, "ctx.backend: %s runs on %s tensors, but the tensors are on %s",
            backend_name(row.backend), device_type_name(row.device), device_type_name(device));
      }
      if (row.ops == nullptr) {
        return Status::error(ErrorCode::unsupported, "ctx.backend: %s is %s", backend_name(row.backend),
                             row.absent);
      }
      if (const char* why = row.ops->unsupported_reason(call.params)) {
        return Status::error(ErrorCode::unsupported, "ctx.backend: %s cannot run this %s: %s",
                             backend_name(row.backend), op, why);
      }
      choice->backend = row.backend;
      choice->ops = row.ops;
      std::snprintf(choice->reason, sizeof choice->reason, "requested by ctx.backend");
      return Status();
    }
    return Status::error(ErrorCode::invalid_argument, "ctx.backend: invalid value %d",
                         static_cast<int>(ctx.backend));
  }

  // Automatic: the first eligible backend of the device that supports the call.
  // The reasons of those passed over are kept for the message.
  char skipped[256] = {};
  Appender why_not{skipped, sizeof skipped};
  for (const BackendRow<Params>& row : rows) {
    if (row.device != device || !row.automatic) continue;
    const char* why = row.ops == nullptr ? row.absent : row.ops->unsupported_reason(call.params);
    if (why != nullptr) {
      why_not.add("%s%s: %s", why_not.used ? "; " : "", backend_name(row.backend), why);
      continue;
    }
    choice->backend = row.backend;
    choice->ops = row.ops;
    Appender reason{choice->reason, sizeof choice->reason};
    reason.add("automatic: first backend for %s tensors that supports this %s", device_type_name(device), op);
    if (why_not.used) reason.add(" (passed over %.160s)", skipped);
    return Status();
  }
  return Status::error(ErrorCode::unsupported, "no backend can run this %s on %s tensors: %s", op,
                       device_type_name(device), why_not.used ? skipped : "none is compiled for this device");
}

template Status select_backend(const Validated<AttentionParams>&, const ExecutionContext&,
                               BackendChoice<AttentionParams>*) noexcept;
template Status select_backend(const Validated<BackwardParams>&, const ExecutionContext&,
                               BackendChoice<BackwardParams>*) noexcept;
template Status select_backend(const Validated<CombineParams>&, const ExecutionContext&,
                               BackendChoice<CombineParams>*) noexcept;

}  // namespace flashattn::detail
