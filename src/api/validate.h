// Argument checking: the caller's TensorViews and options -> validated params.
//
// Every rule of include/flashattn/attention.h that can be checked on the host
// without synchronising is checked here, and every message names the argument
// and the values ("k: head dim 72 differs from q head dim 64"). Backends then
// only compute: they may trust every shape, stride, dtype and option in the
// params they receive.
//
// Index tensors (cu_seqlens, seqused, block_table, cache_seqlens,
// cache_batch_idx, cache_leftpad) are checked element by element only when
// they live in host memory (device cpu). On a CUDA device reading them would
// need a device->host copy and a stream synchronisation, which the library
// never does. A CUDA backend must therefore clip every index it reads to the
// valid range (sequence offsets to the tensor's rows, lengths to max_seqlen or
// the cache capacity, block ids to [0, num_blocks)), so that bad contents give
// wrong numbers, never out-of-bounds access.
#pragma once

#include <cstdint>

#include "common/params.h"
#include "flashattn/attention.h"

namespace flashattn::detail {

// How far validation may reach beyond shapes, dtypes and options.
enum class CheckMode {
  // A real call: data pointers (null, alignment, overlap between outputs and
  // inputs) and, on the CPU, the contents of index tensors are checked too.
  full,
  // workspace_size() and select_kernel(): they depend on shapes only and may be
  // called before the data exists, so pointers and contents are not touched.
  shapes,
};

enum class Operation : std::uint8_t {
  forward,
  forward_varlen,
  forward_kvcache,
  backward,
  backward_varlen,
  combine,
};
const char* operation_name(Operation op) noexcept;

template <class Params>
struct Validated {
  Params params{};
  Operation operation = Operation::forward;
  Device device{};               // where every tensor of the call lives
  DType dtype = DType::float32;  // inputs' dtype (combine: the output's)
  std::int64_t head_dim = 0;     // d (combine: 0)
  std::int64_t head_dim_v = 0;   // dv
  // Every output is empty (e.g. b == 0 or sq == 0 in a forward): the call
  // succeeds without reaching a backend, so none has to handle empty grids.
  bool nothing_to_do = false;
};

// Each returns ok and fills *out, or an invalid_argument Status.
Status validate(const ForwardArgs& args, const ExecutionContext& ctx, CheckMode mode,
                Validated<AttentionParams>* out) noexcept;
Status validate(const VarlenForwardArgs& args, const ExecutionContext& ctx, CheckMode mode,
                Validated<AttentionParams>* out) noexcept;
Status validate(const KVCacheForwardArgs& args, const ExecutionContext& ctx, CheckMode mode,
                Validated<AttentionParams>* out) noexcept;
Status validate(const BackwardArgs& args, const ExecutionContext& ctx, CheckMode mode,
                Validated<BackwardParams>* out) noexcept;
Status validate(const VarlenBackwardArgs& args, const ExecutionContext& ctx, CheckMode mode,
                Validated<BackwardParams>* out) noexcept;
Status validate(const CombineArgs& args, const ExecutionContext& ctx, CheckMode mode,
                Validated<CombineParams>* out) noexcept;

}  // namespace flashattn::detail
