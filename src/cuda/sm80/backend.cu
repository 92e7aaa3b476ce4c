// flashattn::detail::cuda_sm80: the backend interface (src/backend.h) over the
// compute-capability-8.0 kernels. Host code only: capability checks, workspace
// layout, the split-KV heuristic, and the launch sequence of a forward call
//   [append k_new/v_new into the cache] -> [rotate q into the workspace] ->
//   forward (or forward split into fp32 partials -> combine).
// Everything is enqueued on ctx.stream; nothing allocates or synchronises.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "backend.h"
#include "cuda/sm80/forward_config.h"
#include "cuda/sm80/forward_launch.h"
#include "cuda/sm80/kernel_args.h"
#include "cuda/sm80/kvcache_kernels.h"
#include "cuda/sm80/sm80_kernel_list.h"  // generated: FLASHATTN_SM80_FOR_EACH_KERNEL

namespace flashattn::detail::cuda_sm80 {

FLASHATTN_SM80_FOR_EACH_KERNEL(FLASHATTN_SM80_DECLARE_FORWARD)

namespace {

constexpr std::size_t kAlignment = 256;
constexpr std::size_t align_up(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

int head_dim_bucket(std::int64_t head_dim) {
  const int bucket = static_cast<int>((head_dim + 31) / 32 * 32);
  return bucket < 32 ? 32 : bucket;
}

int bucket_of(const AttentionParams& p) { return head_dim_bucket(std::max(p.head_dim, p.head_dim_v)); }

bool bucket_compiled(int bucket, DType dtype) {
#define FLASHATTN_SM80_MATCH(head_dim, element, ...)                                                       \
  if (bucket == head_dim && dtype == (std::is_same_v<element, __half> ? DType::float16 : DType::bfloat16)) \
    return true;
  FLASHATTN_SM80_FOR_EACH_KERNEL(FLASHATTN_SM80_MATCH)
#undef FLASHATTN_SM80_MATCH
  return false;
}

int device_max_smem() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return 0;
  return bytes;
}

// Which row of the tuning table (sm80_kernel_list.h) runs p: problems with a
// right window (causal, local) take the causal row, or a short-sequence row of
// the same kind when seqlen_q is within its limit; a tuned shape that needs
// more shared memory than this GPU has falls back to the portable row.
struct KernelChoice {
  int role = 2;  // 0 non-causal, 1 causal, 2 portable, 3...: short-sequence rows
  TileShape shape;
  int order = -1;  // a short row's tile order: -1 the rule of heads_fastest_order, 0 m fastest, 1 heads
                   // fastest, 2 grouped heads fastest (head_group_of)
};

// The kGeneral kernel (forward_kernel.h): per-element score modifiers (softcap, ALiBi, a bias tensor)
// or dropout (a dropout_p below 2^-16 drops nothing and runs the plain kernel).
bool needs_general(const AttentionParams& p) {
  const bool dropout = p.dropout_p > 0.f && dropout_threshold(p.dropout_p) > 0;
  return p.softcap > 0.f || p.alibi_slopes != nullptr || p.bias != nullptr || dropout || !(p.scale > 0.f);
}

KernelChoice choose_kernel(const AttentionParams& p) {
  const int bucket = bucket_of(p);
  const bool causal = p.mask.window_right >= 0;
  const bool general = needs_general(p);
  int wanted = causal ? 1 : 0, order = -1;
  bool matched = false;
#define FLASHATTN_SM80_SHORT(head_dim, element, role, is_causal, max_seqlen_q, only_general, tile_order) \
  if (!matched && bucket == head_dim && causal == is_causal &&                                           \
      (max_seqlen_q < 0 || p.seqlen_q <= max_seqlen_q) && (only_general < 0 || general) &&               \
      p.dtype == (std::is_same_v<element, __half> ? DType::float16 : DType::bfloat16)) {                 \
    matched = true, wanted = role, order = tile_order;                                                   \
  }
  FLASHATTN_SM80_FOR_EACH_SHORT(FLASHATTN_SM80_SHORT)
#undef FLASHATTN_SM80_SHORT
  const int max_smem = device_max_smem();
  KernelChoice choice;
#define FLASHATTN_SM80_CHOOSE(head_dim, element, role, ...)                                           \
  if (bucket == head_dim &&                                                                           \
      p.dtype == (std::is_same_v<element, __half> ? DType::float16 : DType::bfloat16)) {              \
    using Cfg = ForwardConfig<head_dim, element, TileShape{__VA_ARGS__}>;                             \
    if (role == wanted && Cfg::kSmemBytes <= max_smem) return KernelChoice{role, Cfg::kShape, order}; \
    if (role == 2) choice = KernelChoice{role, Cfg::kShape};                                          \
  }
  FLASHATTN_SM80_FOR_EACH_KERNEL(FLASHATTN_SM80_CHOOSE)
#undef FLASHATTN_SM80_CHOOSE
  return choice;
}
int block_m(const AttentionParams& p) { return block_m_of(choose_kernel(p).shape); }
int block_n(const AttentionParams& p) { return choose_kernel(p).shape.block_n; }

// Tile order (tile_scheduler.h). With a causal mask (a right window and no left one) the work of a
// query tile grows with its index, and handing out every head's last tiles first (heads fastest)
// is a longest-first schedule whose last wave is short: measured 5-12% faster than keeping a
// head's tiles together for causal s >= 1k on the H200 (docs/kernel-notes.md, v7). Otherwise tiles
// cost the same, and keeping a head's tiles side by side shares its K/V in L2 (1-2% at s = 512).
// A short-sequence row of the table may name its order instead (measured per shape: at d256 causal
// s = 512 the 64-row tiles ran 8% faster with a head's tiles together).
bool heads_fastest_order(const AttentionParams& p) {
  const int order = choose_kernel(p).order;
  if (order >= 0) return order >= 1;
  return p.mask.window_right >= 0 && p.mask.window_left < 0;
}

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }
bool operand_aligned(const Operand& op, bool paged_or_batched = true) {
  (void)paged_or_batched;
  return aligned16(op.data) && op.batch_stride % 8 == 0 && op.row_stride % 8 == 0 && op.head_stride % 8 == 0;
}

int device_sm_count() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 108;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 108;
  return count;
}

// A table row with the grouped order (tile_scheduler.h): heads fastest within groups sized from the
// CTA slots (SMs x the shape's CTAs per SM); kGroupedOrderFactor as measured (docs/kernel-notes.md, v12).
constexpr int kGroupedOrderFactor = 2;
int head_group_of(const AttentionParams& p, int m_blocks, int num_splits) {
#ifdef FLASHATTN_SM80_TEST_HEAD_GROUP
  // Test builds only: every heads-fastest problem in groups this small, so that the suites' small
  // problems (one group would hold all of their triples) run the grouped decode, a short last group too.
  (void)m_blocks, (void)num_splits;
  return heads_fastest_order(p) ? FLASHATTN_SM80_TEST_HEAD_GROUP : 0;
#endif
  const KernelChoice choice = choose_kernel(p);
  if (choice.order != 2) return 0;
  const std::int64_t slots = static_cast<std::int64_t>(device_sm_count()) * choice.shape.min_blocks_per_sm;
  return grouped_head_count(p.batch * p.heads * num_splits, m_blocks, slots, kGroupedOrderFactor);
}

bool rotates_q(const AttentionParams& p) { return p.is_kvcache && p.rotary_dim > 0; }

// Decoding with grouped K/V heads (GQA/MQA, one query row): the group's query heads become the rows of one
// tile over their shared K/V head (FlashAttention 2's seqlenq_ngroups_swapped), so that each K/V head is read
// once per split instead of once per query head and a tile computes `group` useful rows instead of one. A
// pure change of view: q / out / lse rows step one head, their heads a group of heads. Only where every row
// of the group sees the same keys with the same scores: no mask (a causal mask on one row masks nothing and
// arrives here dropped), no per-head ALiBi slope or sink. Rotary q is rotated before the view (run), at its
// position. Measured on an H200 (GQA 32/8, d128, batch 1-8 over 4096-16384 keys): before it, cuda_sm80 read
// 0.14-0.75 TB/s whatever the split count (bench/integration/s44_decode_splits.py).
bool groups_as_rows(const AttentionParams& p) {
  return p.is_kvcache && p.seqlen_q == 1 && p.heads_kv > 0 && p.heads > p.heads_kv &&
         p.cu_seqlens_q == nullptr && p.seqused_q == nullptr && p.mask.window_left < 0 &&
         p.mask.window_right < 0 && p.alibi_slopes == nullptr && p.sink == nullptr && p.dropout_p == 0.f;
}

AttentionParams with_groups_as_rows(AttentionParams p) {
  if (!groups_as_rows(p)) return p;
  const std::int64_t group = p.heads / p.heads_kv;
  p.seqlen_q = group;
  p.heads = p.heads_kv;
  p.q.row_stride = p.q.head_stride;
  p.q.head_stride *= group;
  p.out.row_stride = p.out.head_stride;
  p.out.head_stride *= group;
  p.lse_row_stride = p.lse_head_stride;
  p.lse_head_stride *= group;
  return p;
}

// Split-KV only pays when the query tiles alone cannot fill the GPU (decoding).
// FlashAttention 2's rule: choose the fewest splits whose wave efficiency is
// within 85% of the best.
int resolve_splits(const AttentionParams& p) {
  if (!p.is_kvcache || p.cu_seqlens_q != nullptr) return 1;
  const std::int64_t n_blocks = (p.seqlen_k + block_n(p) - 1) / block_n(p);
  const std::int64_t m_blocks = (p.seqlen_q + block_m(p) - 1) / block_m(p);
  if (p.num_splits >= 1)
    return static_cast<int>(std::clamp<std::int64_t>(
        p.num_splits, 1, std::max<std::int64_t>(1, std::min<std::int64_t>(n_blocks, 128))));
  const std::int64_t tiles = p.batch * p.heads * m_blocks;
  const int sms = device_sm_count();
  if (tiles >= sms * 8 / 10 || n_blocks <= 1) return 1;
  const int max_splits = static_cast<int>(std::min<std::int64_t>({128, sms, n_blocks}));
  double efficiency[129] = {};
  double best = 0;
  for (int s = 1; s <= max_splits; ++s) {
    const double waves = static_cast<double>(tiles * s) / sms;
    efficiency[s] = waves / std::ceil(waves);
    best = std::max(best, efficiency[s]);
  }
  for (int s = 1; s <= max_splits; ++s) {
    // Splits that leave some split without a key block do no useful work.
    const std::int64_t per_split = (n_blocks + s - 1) / s;
    if ((s - 1) * per_split >= n_blocks) continue;
    if (efficiency[s] >= 0.85 * best) return s;
  }
  return 1;
}

struct WorkspaceLayout {
  std::size_t q_rotated = 0, out_partial = 0, lse_partial = 0, total = 0;
};

WorkspaceLayout workspace_layout(const AttentionParams& p) {
  WorkspaceLayout w;
  std::size_t offset = 0;
  if (rotates_q(p)) {
    w.q_rotated = offset;
    offset += align_up(static_cast<std::size_t>(p.batch * p.seqlen_q * p.heads * p.head_dim) * 2);
  }
  const int splits = resolve_splits(with_groups_as_rows(p));
  if (splits > 1) {
    const auto rows = static_cast<std::size_t>(splits * p.batch * p.seqlen_q * p.heads);
    w.out_partial = offset;
    offset += align_up(rows * static_cast<std::size_t>(p.head_dim_v) * sizeof(float));
    w.lse_partial = offset;
    offset += align_up(rows * sizeof(float));
  }
  w.total = offset;
  return w;
}

Status cuda_status(cudaError_t error, const char* what) {
  return Status::error(ErrorCode::cuda_error, "cuda_sm80: %s failed: %s", what, cudaGetErrorString(error));
}

cudaError_t dispatch_forward(const ForwardKernelArgs& args, bool general, cudaStream_t stream) {
  const int bucket = bucket_of(args.p);
  const int chosen = choose_kernel(args.p).role;
#define FLASHATTN_SM80_LAUNCH(head_dim, element, role, ...)                                 \
  if (bucket == head_dim && chosen == role &&                                               \
      args.p.dtype == (std::is_same_v<element, __half> ? DType::float16 : DType::bfloat16)) \
    return launch_forward<ForwardConfig<head_dim, element, TileShape{__VA_ARGS__}>>(args, general, stream);
  FLASHATTN_SM80_FOR_EACH_KERNEL(FLASHATTN_SM80_LAUNCH)
#undef FLASHATTN_SM80_LAUNCH
  return cudaErrorInvalidDeviceFunction;
}

}  // namespace

const char* unsupported_reason(const AttentionParams& p) noexcept {
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16)
    return "cuda_sm80 runs fp16 and bf16 inputs only";
  if (p.head_dim > 256 || p.head_dim_v > 256) return "cuda_sm80 supports head dims up to 256";
  if (p.head_dim % 8 != 0 || p.head_dim_v % 8 != 0)
    return "cuda_sm80 needs head dims that are multiples of 8";
  if (!bucket_compiled(bucket_of(p), p.dtype)) {
    return "cuda_sm80: the head-dim bucket for this problem was not compiled (see FLASHATTN_HEAD_DIMS and "
           "FLASHATTN_DTYPES)";
  }
  if (!operand_aligned(p.q) || !operand_aligned(p.k) || !operand_aligned(p.v) || !operand_aligned(p.out)) {
    return "cuda_sm80 needs q, k, v and out rows 16-byte aligned (data pointers aligned, strides multiples "
           "of 8 "
           "elements)";
  }
  if (p.block_table != nullptr && p.page_size <= 0) return "cuda_sm80: paged K/V needs page_size >= 1";
  // Key positions and page indices are 32-bit in the kernel (paged_kv.h).
  if (p.block_table != nullptr && p.page_size > INT_MAX)
    return "cuda_sm80: paged K/V needs page_size below 2^31";
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    return "cuda_sm80: no usable CUDA device";
  }
  if (major < 8) return "cuda_sm80 needs a GPU of compute capability 8.0 or newer";
  return nullptr;
}

const char* unsupported_reason(const CombineParams& p) noexcept {
  if (p.out_dtype != DType::float16 && p.out_dtype != DType::bfloat16 && p.out_dtype != DType::float32) {
    return "cuda_sm80 combine writes fp16, bf16 or fp32 outputs only";
  }
  return nullptr;
}

std::size_t workspace_size(const AttentionParams& p, int) noexcept { return workspace_layout(p).total; }
std::size_t workspace_size(const CombineParams&, int) noexcept { return 0; }

Status run(const AttentionParams& params, const ExecutionContext& ctx) noexcept {
  if (params.batch == 0 || params.seqlen_q == 0 || params.heads == 0) return Status::ok_status();
  auto stream = static_cast<cudaStream_t>(ctx.stream);
  auto* workspace = static_cast<unsigned char*>(ctx.workspace);
  const WorkspaceLayout layout = workspace_layout(params);
  AttentionParams p = params;

  if (p.is_kvcache && p.k_new.data != nullptr && p.seqlen_new > 0) {
    if (cudaError_t e = launch_append_kv(p, stream); e != cudaSuccess)
      return cuda_status(e, "append_kv launch");
  }
  if (rotates_q(p)) {
    void* q_rotated = workspace + layout.q_rotated;
    if (cudaError_t e = launch_rotate_q(p, q_rotated, stream); e != cudaSuccess) {
      return cuda_status(e, "rotate_q launch");
    }
    p.q.data = q_rotated;
    p.q.head_stride = p.head_dim;
    p.q.row_stride = p.heads * p.head_dim;
    p.q.batch_stride = p.seqlen_q * p.heads * p.head_dim;
  }
  p = with_groups_as_rows(p);  // after the rotation, which reads each row's position

  ForwardKernelArgs args;
  args.p = p;
  args.m_blocks = static_cast<int>((p.seqlen_q + block_m(p) - 1) / block_m(p));
  args.num_splits = resolve_splits(p);
  args.p.num_splits = args.num_splits;
  if (args.num_splits > 1) {
    args.out_partial = reinterpret_cast<float*>(workspace + layout.out_partial);
    args.lse_partial = reinterpret_cast<float*>(workspace + layout.lse_partial);
  }
  args.scale_log2 = p.scale * 1.4426950408889634f;
  args.dropout_threshold = p.dropout_p > 0.f ? dropout_threshold(p.dropout_p) : 0u;
  args.dropout_rescale = p.dropout_p > 0.f ? 1.f / (1.f - p.dropout_p) : 1.f;
  if (p.dropout_p > 0.f) args.dropout_keys = dropout_keys(p.dropout_seed, p.dropout_offset);
  args.total_tiles = static_cast<std::int64_t>(args.m_blocks) * p.batch * p.heads * args.num_splits;
  args.heads_fastest = heads_fastest_order(p);
  args.head_group = head_group_of(p, args.m_blocks, args.num_splits);
  if (p.block_table != nullptr) args.page_divisor = make_fast_divisor(static_cast<int>(p.page_size));
  resolve_lean_setup(args);
  const bool general = needs_general(p);
  if (cudaError_t e = dispatch_forward(args, general, stream); e != cudaSuccess) {
    return cuda_status(e, "forward kernel launch");
  }

  if (args.num_splits > 1) {
    CombineParams c;
    c.splits = args.num_splits;
    c.batch = p.batch;
    c.seqlen = p.seqlen_q;
    c.heads = p.heads;
    c.head_dim_v = p.head_dim_v;
    c.out_partial = args.out_partial;
    c.op_head_stride = p.head_dim_v;
    c.op_row_stride = p.heads * c.op_head_stride;
    c.op_batch_stride = p.seqlen_q * c.op_row_stride;
    c.op_split_stride = p.batch * c.op_batch_stride;
    c.lse_partial = args.lse_partial;
    c.lp_head_stride = 1;
    c.lp_row_stride = p.heads;
    c.lp_batch_stride = p.seqlen_q * p.heads;
    c.lp_split_stride = p.batch * c.lp_batch_stride;
    c.out_dtype = p.dtype;
    c.out = p.out;
    c.lse = p.lse;
    c.lse_batch_stride = p.lse_batch_stride;
    c.lse_row_stride = p.lse_row_stride;
    c.lse_head_stride = p.lse_head_stride;
    if (cudaError_t e = launch_combine(c, stream); e != cudaSuccess) return cuda_status(e, "combine launch");
  }
  return Status::ok_status();
}

Status run(const CombineParams& p, const ExecutionContext& ctx) noexcept {
  if (cudaError_t e = launch_combine(p, static_cast<cudaStream_t>(ctx.stream)); e != cudaSuccess) {
    return cuda_status(e, "combine launch");
  }
  return Status::ok_status();
}

}  // namespace flashattn::detail::cuda_sm80
