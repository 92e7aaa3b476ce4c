// flashattn: exact attention of the FlashAttention family.
//
// One entry point per operation. Every call
//   * takes non-owning TensorViews (the caller owns all memory),
//   * takes an explicit ExecutionContext (backend, stream, workspace),
//   * allocates nothing, synchronises nothing with the host, keeps no global
//     mutable state (calls may be captured in a CUDA graph and made from many
//     threads at once),
//   * returns a Status whose message names the bad argument and its values.
// Nothing the caller passed is written except the outputs, and the KV cache in
// forward_kvcache when new k/v are given.
//
// Notation: b batch, sq/sk query/key lengths, h query heads, hk key/value heads
// (h % hk == 0; query head i reads kv head i / (h / hk)), d the q/k head dim,
// dv the v head dim. i indexes queries, j keys, both from 0 within a sequence.
//
// Semantics shared by all operations (the CPU reference backend defines them):
//   S_ij    = scale * q_i . k_j                       (scale defaults to 1/sqrt(d))
//   softcap: S_ij = softcap * tanh(S_ij / softcap)     when softcap > 0, before masking
//   ALiBi:   S_ij -= slope * |i + sk - sq - j|         slopes fp32 (h) or (b, h)
//   bias:    S_ij += bias[b][head][i][j]               a float tensor, after softcap and ALiBi;
//            a bool tensor instead hides key j where it is false (as S_ij = -inf)
//   mask:    key j is visible to query i iff
//              i + sk - sq - left <= j <= i + sk - sq + right   (bottom-right aligned)
//            with left/right = window (-1 = unbounded); causal sets right = 0.
//   sink:    per-head logit s_h (fp32, natural-log units, not scaled) joins the
//            softmax denominator only:  O_i = sum_j e^{S_ij} v_j / (sum_j e^{S_ij} + e^{s_h})
//   LSE_i  = log(sum_j e^{S_ij} [+ e^{s_h}])           natural log, fp32
//   dropout: element (b, head, i, j) is dropped iff philox(seed, offset, b, head, i, j)
//            says so (see philox.h in the sources); kept P is scaled by 1/(1-p). The
//            same (seed, offset) drops the same elements on every backend.
// Edge cases: a query row with no visible key (fully masked, or sk == 0) gets
// output 0 and LSE -inf (with a sink: LSE = s_h), never NaN. b == 0 or sq == 0
// succeeds and writes nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "flashattn/status.h"
#include "flashattn/tensor.h"

namespace flashattn {

// ----------------------------------------------------------------------------
// Where and how a call runs.

enum class Backend : std::uint8_t {
  automatic,      // the fastest compiled backend that supports the problem on the tensors' device
  cpu_reference,  // float64 math over whole score rows: the oracle, slow
  cpu_tiled,      // the FlashAttention algorithm on the CPU (online softmax over KV tiles)
  cuda_sm80,      // mma.sync kernels, compute capability 8.0+
  cuda_sm90,      // wgmma/TMA kernels, sm_90a
};
const char* backend_name(Backend backend) noexcept;

struct ExecutionContext {
  Backend backend = Backend::automatic;
  // cudaStream_t for CUDA backends (nullptr = legacy default stream); ignored on the CPU. CUDA tensors
  // must be on the calling thread's current device (cudaSetDevice), and the stream one of its streams:
  // tensors of another device are refused (invalid_argument).
  void* stream = nullptr;
  // Scratch memory on the tensors' device, at least workspace_size() bytes, aligned to 256
  // bytes. May be null when workspace_size() is 0.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // CPU backends: worker threads (0 = all hardware threads).
  int num_threads = 0;
};

// ----------------------------------------------------------------------------
// Options.

struct Window {
  std::int64_t left = -1;   // -1: unbounded
  std::int64_t right = -1;  // -1: unbounded
};

struct Dropout {
  float p = 0.f;  // probability of dropping, in [0, 1)
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;  // advances the random stream between calls with one seed
};

struct AttentionOptions {
  std::optional<float> softmax_scale;  // default 1/sqrt(d)
  bool causal = false;                 // same as window.right = 0 (bottom-right aligned)
  Window window{};
  float softcap = 0.f;      // > 0 enables softcap * tanh(S / softcap)
  TensorView alibi_slopes;  // optional fp32 (h) or (b, h)
  Dropout dropout{};        // forward and backward of batched/varlen attention only
  TensorView sink;          // optional fp32 (h): learnable per-head sink logit
  // Optional score bias or mask, batched forward and backward only (no gradient is computed for it):
  // (B, H, SQ, sk), or with leading dims left out (H, SQ, sk) / (SQ, sk), where B is 1 or b, H is 1 or
  // h (query heads) and SQ is 1 or sq; a dim of size 1 is broadcast (a key-padding mask is (b, 1, 1, sk)).
  // The last dim must be contiguous; the other strides are free. dtype fp32 or q's dtype: added to the
  // scores (-inf hides a key; +inf or NaN make the row's output NaN); bool (DType::boolean): true keeps
  // the key, false hides it, as PyTorch's scaled_dot_product_attention reads a bool attn_mask. A row
  // whose every key is hidden follows the edge-case rule above (output 0, LSE -inf).
  TensorView bias;
};

// ----------------------------------------------------------------------------
// Forward, batched.
//
// num_splits (here, in VarlenForwardArgs and KVCacheForwardArgs): how many parts the keys of a query tile may
// be split into, each part's partial result combined afterwards. 0: the library's choice, which when decoding
// splits as the GPU's size and the batch suggest (every tile of few over many keys; of more tiles than the
// GPU runs at once, those of the last, partial round) and picks a decode kernel by the batch's size (two CTAs
// a SM where its tiles fill one to two waves), so that a sequence's result may differ in its last bits with
// the batch it runs in and with its place in it. 1: never split: a sequence's result then does not
// depend on the batch's size through the split (what batch-invariant decoding asks for; kernels are still
// chosen by the problem's shape, and variable-length calls by their longest sequence). n > 1: n parts
// where a kernel splits (at most one per key block); the forwards without key splitting ignore it.
struct ForwardArgs {
  TensorView q;    // (b, sq, h, d)
  TensorView k;    // (b, sk, hk, d)
  TensorView v;    // (b, sk, hk, dv)
  TensorView out;  // (b, sq, h, dv), same dtype as q
  TensorView lse;  // optional fp32 (b, h, sq)
  AttentionOptions options;
  int num_splits = 0;  // 0: the library's choice; 1: never split the keys (see above)
};

// Forward, variable length: sequences packed along the first dimension.
// Sequence s owns rows [cu_seqlens_q[s], cu_seqlens_q[s+1]) of q (likewise k/v);
// with seqused_q/k only the first seqused[s] of them take part (the rest of out
// is left untouched, the rest of lse is left untouched).
// With block_table, k/v are paged: (num_blocks, page_size, hk, d) and
// cu_seqlens_k only gives lengths (its values must still increase).
// Index tensors on a CUDA device are not validated (that would need a host
// sync): out-of-range values give wrong results, never an out-of-bounds
// access -- the CUDA kernels clamp every index they read (cu_seqlens to the
// rows of q/k, lengths to max_seqlen_q / the block table, seqused to the
// sequence's length, block ids to [0, num_blocks); see
// src/cuda/sm80/clipped_indices.h). Likewise for the KV cache below
// (cache_seqlens, cache_leftpad, cache_batch_idx, block_table, rotary rows).
struct VarlenForwardArgs {
  TensorView q;                   // (total_q, h, d)
  TensorView k;                   // (total_k, hk, d)  or paged (num_blocks, page_size, hk, d)
  TensorView v;                   // (total_k, hk, dv) or paged (num_blocks, page_size, hk, dv)
  TensorView cu_seqlens_q;        // int32 (b + 1), non-decreasing, cu[0] == 0
  TensorView cu_seqlens_k;        // int32 (b + 1), non-decreasing, cu[0] == 0
  std::int64_t max_seqlen_q = 0;  // >= every q length (a bound, used for scheduling)
  std::int64_t max_seqlen_k = 0;  // >= every k length
  TensorView seqused_q;           // optional int32 (b)
  TensorView seqused_k;           // optional int32 (b)
  TensorView block_table;         // optional int32 (b, max_blocks_per_seq)
  TensorView out;                 // (total_q, h, dv)
  TensorView lse;                 // optional fp32 (h, total_q)
  AttentionOptions options;
  int num_splits = 0;  // as ForwardArgs's
};

// Forward over a KV cache (decoding and chunked prefill).
// The cache is dense (b_cache, s_cache, hk, d) or, with block_table, paged
// (num_blocks, page_size, hk, d) with any page_size >= 1. Sequence s's keys sit
// at cache positions [leftpad, cache_seqlens[s]) of cache row cache_batch_idx[s]
// (or s). When k_new/v_new are given, they are first written in place at
// positions [cache_seqlens[s], cache_seqlens[s] + s_new) -- rotated if rotary
// tables are given -- and attention then runs over cache_seqlens[s] + s_new - leftpad keys.
// Rotary (rotary_dim = 2 * rotary_cos.shape[1] <= d): new k row t is rotated at
// position cache_seqlens[s] + t; q row t at cache_seqlens[s] + t when causal or
// windowed, else every q row at cache_seqlens[s]. Interleaved (GPT-J) rotates
// pairs (2m, 2m+1); otherwise (GPT-NeoX) pairs (m, m + rotary_dim/2).
struct KVCacheForwardArgs {
  TensorView q;                // (b, sq, h, d)
  TensorView k_cache;          // (b_cache, s_cache, hk, d) or (num_blocks, page_size, hk, d)
  TensorView v_cache;          // (b_cache, s_cache, hk, dv) or (num_blocks, page_size, hk, dv)
  TensorView block_table;      // optional int32 (b, max_blocks_per_seq): paged cache
  TensorView cache_seqlens;    // optional int32 (b); absent: every sequence fills the cache
  TensorView cache_batch_idx;  // optional int32 (b): cache row of each sequence (dense cache only)
  TensorView cache_leftpad;    // optional int32 (b): first valid cache position
  TensorView k_new;            // optional (b, s_new, hk, d)
  TensorView v_new;            // optional (b, s_new, hk, dv); given iff k_new is
  TensorView rotary_cos;       // optional (s_rotary, rotary_dim / 2), dtype of q
  TensorView rotary_sin;       // optional, like rotary_cos
  bool rotary_interleaved = true;
  int num_splits = 0;        // as ForwardArgs's (0: heuristic, 1: no split)
  TensorView out;            // (b, sq, h, dv)
  TensorView lse;            // optional fp32 (b, h, sq)
  AttentionOptions options;  // dropout must be 0
};

// ----------------------------------------------------------------------------
// Backward. Recomputes P from q, k and the forward's LSE; dk/dv are summed over
// the q heads of each GQA group. dq/dk/dv are fully overwritten.
struct BackwardArgs {
  TensorView dout;             // (b, sq, h, dv)
  TensorView q;                // (b, sq, h, d)
  TensorView k;                // (b, sk, hk, d)
  TensorView v;                // (b, sk, hk, dv)
  TensorView out;              // (b, sq, h, dv): the forward's output
  TensorView lse;              // fp32 (b, h, sq): the forward's LSE
  TensorView dq;               // (b, sq, h, d)
  TensorView dk;               // (b, sk, hk, d)
  TensorView dv;               // (b, sk, hk, dv)
  TensorView dsink;            // fp32 (h): required iff options.sink is given; overwritten
  AttentionOptions options;    // the forward's options
  bool deterministic = false;  // bitwise-identical results run to run
};

struct VarlenBackwardArgs {
  TensorView dout;          // (total_q, h, dv)
  TensorView q;             // (total_q, h, d)
  TensorView k;             // (total_k, hk, d)
  TensorView v;             // (total_k, hk, dv)
  TensorView out;           // (total_q, h, dv)
  TensorView lse;           // fp32 (h, total_q)
  TensorView cu_seqlens_q;  // int32 (b + 1)
  TensorView cu_seqlens_k;  // int32 (b + 1)
  std::int64_t max_seqlen_q = 0;
  std::int64_t max_seqlen_k = 0;
  TensorView seqused_q;  // optional int32 (b)
  TensorView seqused_k;  // optional int32 (b)
  TensorView dq;         // (total_q, h, d); rows outside used ranges are zeroed
  TensorView dk;         // (total_k, hk, d); likewise
  TensorView dv;         // (total_k, hk, dv); likewise
  TensorView dsink;      // fp32 (h), iff options.sink
  AttentionOptions options;
  bool deterministic = false;
};

// ----------------------------------------------------------------------------
// Combine split-KV partial results: out = sum_s e^{lse_s - lse} out_s,
// lse = log sum_s e^{lse_s}. Splits with lse = -inf contribute nothing; a row
// whose splits are all -inf gets out 0 and lse -inf.
struct CombineArgs {
  TensorView out_partial;  // fp32 (splits, b, sq, h, dv)
  TensorView lse_partial;  // fp32 (splits, b, sq, h)
  TensorView out;          // (b, sq, h, dv), fp16/bf16/fp32
  TensorView lse;          // optional fp32 (b, sq, h)
};

Status forward(const ForwardArgs& args, const ExecutionContext& ctx) noexcept;
Status forward_varlen(const VarlenForwardArgs& args, const ExecutionContext& ctx) noexcept;
Status forward_kvcache(const KVCacheForwardArgs& args, const ExecutionContext& ctx) noexcept;
Status backward(const BackwardArgs& args, const ExecutionContext& ctx) noexcept;
Status backward_varlen(const VarlenBackwardArgs& args, const ExecutionContext& ctx) noexcept;
Status combine(const CombineArgs& args, const ExecutionContext& ctx) noexcept;

// Scratch each call needs, in bytes, for the backend ctx selects. Depends only on
// shapes, dtypes and options and, for the CUDA backends, on the current device's SM
// count (split-KV decoding, the Hopper kernels' split tail); never on tensor contents,
// so it is safe to call before the data exists and the same size serves every call of
// that shape on that GPU.
Status workspace_size(const ForwardArgs& args, const ExecutionContext& ctx, std::size_t* bytes) noexcept;
Status workspace_size(const VarlenForwardArgs& args, const ExecutionContext& ctx,
                      std::size_t* bytes) noexcept;
Status workspace_size(const KVCacheForwardArgs& args, const ExecutionContext& ctx,
                      std::size_t* bytes) noexcept;
Status workspace_size(const BackwardArgs& args, const ExecutionContext& ctx, std::size_t* bytes) noexcept;
Status workspace_size(const VarlenBackwardArgs& args, const ExecutionContext& ctx,
                      std::size_t* bytes) noexcept;
Status workspace_size(const CombineArgs& args, const ExecutionContext& ctx, std::size_t* bytes) noexcept;

// ----------------------------------------------------------------------------
// Capability query: which backend and kernel would run this problem, or why
// none can (the returned Status then says why, and choice->reason repeats it).
struct KernelChoice {
  Backend backend = Backend::automatic;
  char kernel[128] = {};  // e.g. "cpu_tiled/forward/bf16/d128"
  char reason[256] = {};  // why this backend was chosen, or why none could be
};

Status select_kernel(const ForwardArgs& args, const ExecutionContext& ctx, KernelChoice* choice) noexcept;
Status select_kernel(const VarlenForwardArgs& args, const ExecutionContext& ctx,
                     KernelChoice* choice) noexcept;
Status select_kernel(const KVCacheForwardArgs& args, const ExecutionContext& ctx,
                     KernelChoice* choice) noexcept;
Status select_kernel(const BackwardArgs& args, const ExecutionContext& ctx, KernelChoice* choice) noexcept;
Status select_kernel(const VarlenBackwardArgs& args, const ExecutionContext& ctx,
                     KernelChoice* choice) noexcept;
Status select_kernel(const CombineArgs& args, const ExecutionContext& ctx, KernelChoice* choice) noexcept;

}  // namespace flashattn
