// The internal interface every backend implements.
//
// The API layer validates the caller's arguments, resolves options and builds
// the params (common/params.h); a backend only computes. Each backend exposes
// the same set of functions in its own namespace:
//
//   const char* unsupported_reason(const P&)  -> nullptr when it can run P, else why not
//   std::size_t workspace_size(const P&, int threads)
//   Status run(const P&, const ExecutionContext&)
//
// for P in {AttentionParams (forward: batched, varlen, KV cache), BackwardParams,
// CombineParams}. workspace_size must not read tensor contents (shapes only).
// run may assume that unsupported_reason returned nullptr and that
// ctx.workspace holds workspace_size bytes.
#pragma once

#include <cstddef>

#include "common/params.h"
#include "flashattn/attention.h"

// Set (to 1) by the CUDA build when the Hopper backend is compiled in.
#ifndef FLASHATTN_WITH_SM90
#define FLASHATTN_WITH_SM90 0
#endif

namespace flashattn::detail {

#define FLASHATTN_DECLARE_BACKEND(ns)                                         \
  namespace ns {                                                              \
  const char* unsupported_reason(const AttentionParams& p) noexcept;          \
  const char* unsupported_reason(const BackwardParams& p) noexcept;           \
  const char* unsupported_reason(const CombineParams& p) noexcept;            \
  std::size_t workspace_size(const AttentionParams& p, int threads) noexcept; \
  std::size_t workspace_size(const BackwardParams& p, int threads) noexcept;  \
  std::size_t workspace_size(const CombineParams& p, int threads) noexcept;   \
  Status run(const AttentionParams& p, const ExecutionContext& ctx) noexcept; \
  Status run(const BackwardParams& p, const ExecutionContext& ctx) noexcept;  \
  Status run(const CombineParams& p, const ExecutionContext& ctx) noexcept;   \
  }

FLASHATTN_DECLARE_BACKEND(cpu_reference)
FLASHATTN_DECLARE_BACKEND(cpu_tiled)
#if FLASHATTN_WITH_CUDA
FLASHATTN_DECLARE_BACKEND(cuda_sm80)
#endif
#if FLASHATTN_WITH_SM90
FLASHATTN_DECLARE_BACKEND(cuda_sm90)
#endif

#undef FLASHATTN_DECLARE_BACKEND

// Worker threads a CPU backend uses for ctx (ctx.num_threads, or all hardware threads).
int cpu_threads(const ExecutionContext& ctx) noexcept;

}  // namespace flashattn::detail
