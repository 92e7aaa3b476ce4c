// Which backend runs a validated call.
//
// A table (backend_select.cpp) lists every backend with the device it runs on,
// whether Backend::automatic may pick it, and its entry points for one params
// type (null when not compiled in). Automatic selection walks the table in
// order of preference: on the CPU cpu_tiled (the reference is only used when
// asked for), on CUDA cuda_sm90 then cuda_sm80, each taken when it is compiled
// and its unsupported_reason() is null.
#pragma once

#include <cstddef>

#include "api/validate.h"
#include "backend.h"

namespace flashattn::detail {

template <class Params>
struct BackendOps {
  const char* (*unsupported_reason)(const Params&) noexcept;
  std::size_t (*workspace_size)(const Params&, int threads) noexcept;
  Status (*run)(const Params&, const ExecutionContext&) noexcept;
};

template <class Params>
struct BackendChoice {
  Backend backend = Backend::automatic;
  const BackendOps<Params>* ops = nullptr;
  char reason[256] = {};  // why this backend was chosen
};

// Ok and *choice filled, or invalid_argument (bad ctx.backend, or an explicit
// backend on the wrong device) or unsupported (the reasons, backend by backend).
template <class Params>
Status select_backend(const Validated<Params>& call, const ExecutionContext& ctx,
                      BackendChoice<Params>* choice) noexcept;

extern template Status select_backend(const Validated<AttentionParams>&, const ExecutionContext&,
                                      BackendChoice<AttentionParams>*) noexcept;
extern template Status select_backend(const Validated<BackwardParams>&, const ExecutionContext&,
                                      BackendChoice<BackwardParams>*) noexcept;
extern template Status select_backend(const Validated<CombineParams>&, const ExecutionContext&,
                                      BackendChoice<CombineParams>*) noexcept;

}  // namespace flashattn::detail
