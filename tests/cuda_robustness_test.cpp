// Garbage in the index tensors of a CUDA call must not cause an illegal memory
// access. The API cannot validate index contents that live on a GPU (that
// would need a synchronisation), so the cuda_sm80 kernels clip every index
// they read (src/cuda/sm80/clipped_indices.h). These tests fill cu_seqlens,
// seqused, cache_seqlens, cache_leftpad, cache_batch_idx and block_table with
// out-of-range values and require the call to succeed and the device to stay
// healthy. The numbers are meaningless and not checked. Run them under
// `compute-sanitizer --tool memcheck` to see that no access leaves its buffer
// (scripts/gpu_check.sh does). They skip without a GPU.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "flashattn/flashattn.h"
#include "support/test_support.h"

#if FLASHATTN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace flashattn::test {
namespace {

#if FLASHATTN_WITH_CUDA

constexpr Device kGpu{DeviceType::cuda, 0};

// A device buffer freed at scope end, filled from host values.
struct Gpu {
  void* data = nullptr;
  explicit Gpu(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&data, bytes < 16 ? 16 : bytes), cudaSuccess); }
  template <typename T>
  explicit Gpu(const std::vector<T>& host) : Gpu(host.size() * sizeof(T)) {
    EXPECT_EQ(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Gpu() { cudaFree(data); }
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;
};

// Random 16-bit values that are finite bf16 numbers of magnitude < 2.
std::vector<std::uint16_t> random_bf16(Rng& rng, std::size_t n) {
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = static_cast<std::uint16_t>(0x3f00 + rng.integer(0, 0x7f)) | (rng.coin() ? 0x8000 : 0);
  return v;
}

// Out-of-range index values: huge, negative, just past the end.
std::vector<std::int32_t> garbage(Rng& rng, std::size_t n, std::int32_t just_past) {
  const std::int32_t kinds[] = {INT32_MAX, INT32_MIN, -1, just_past, just_past + 1000, 1 << 30};
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = kinds[rng.integer(0, 5)];
  return v;
}

void expect_device_healthy() {
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

Status call_with_workspace(const VarlenForwardArgs& args, ExecutionContext ctx) {
  std::size_t bytes = 0;
  if (Status s = workspace_size(args, ctx, &bytes); !s.ok()) return s;
  Gpu workspace(bytes);
  ctx.workspace = workspace.data, ctx.workspace_bytes = bytes;
  return forward_varlen(args, ctx);
}

Status call_with_workspace(const KVCacheForwardArgs& args, ExecutionContext ctx) {
  std::size_t bytes = 0;
  if (Status s = workspace_size(args, ctx, &bytes); !s.ok()) return s;
  Gpu workspace(bytes);
  ctx.workspace = workspace.data, ctx.workspace_bytes = bytes;
  return forward_kvcache(args, ctx);
}

class CudaRobustness : public ::testing::TestWithParam<bool> {  // param: paged
 protected:
  void SetUp() override { FLASHATTN_SKIP_IF_UNAVAILABLE(Backend::cuda_sm80); }
};

TEST_P(CudaRobustness, VarlenGarbageIndices) {
  const bool paged = GetParam();
  Rng rng = Rng::for_current_test();
  const std::int64_t b = 4, h = 4, hk = 2, d = 64, total_q = 200, total_k = 300, page = 16, blocks = 24;
  const std::int64_t max_blocks = 8;
  Gpu q(random_bf16(rng, total_q * h * d));
  const std::int64_t k_elems = paged ? blocks * page * hk * d : total_k * hk * d;
  Gpu k(random_bf16(rng, k_elems)), v(random_bf16(rng, k_elems));
  Gpu out(total_q * h * d * 2), lse(h * total_q * 4);
  for (int round = 0; round < 3; ++round) {
    Gpu cu_q(garbage(rng, b + 1, total_q)), cu_k(garbage(rng, b + 1, total_k));
    Gpu used_q(garbage(rng, b, 100)), used_k(garbage(rng, b, 100));
    Gpu table(garbage(rng, b * max_blocks, blocks));
    for (bool causal : {false, true}) {
      VarlenForwardArgs a;
      a.q = TensorView::contiguous(q.data, DType::bfloat16, {total_q, h, d}, kGpu);
      if (paged) {
        a.k = TensorView::contiguous(k.data, DType::bfloat16, {blocks, page, hk, d}, kGpu);
        a.v = TensorView::contiguous(v.data, DType::bfloat16, {blocks, page, hk, d}, kGpu);
        a.block_table = TensorView::contiguous(table.data, DType::int32, {b, max_blocks}, kGpu);
      } else {
        a.k = TensorView::contiguous(k.data, DType::bfloat16, {total_k, hk, d}, kGpu);
        a.v = TensorView::contiguous(v.data, DType::bfloat16, {total_k, hk, d}, kGpu);
      }
      a.cu_seqlens_q = TensorView::contiguous(cu_q.data, DType::int32, {b + 1}, kGpu);
      a.cu_seqlens_k = TensorView::contiguous(cu_k.data, DType::int32, {b + 1}, kGpu);
      a.max_seqlen_q = 100;
      a.max_seqlen_k = 128;
      if (round > 0) {
        a.seqused_q = TensorView::contiguous(used_q.data, DType::int32, {b}, kGpu);
        a.seqused_k = TensorView::contiguous(used_k.data, DType::int32, {b}, kGpu);
      }
      a.out = TensorView::contiguous(out.data, DType::bfloat16, {total_q, h, d}, kGpu);
      a.lse = TensorView::contiguous(lse.data, DType::float32, {h, total_q}, kGpu);
      a.options.causal = causal;
      ExecutionContext ctx;
      ctx.backend = Backend::cuda_sm80;
      const Status status = call_with_workspace(a, ctx);
      // A build restricted by FLASHATTN_HEAD_DIMS / FLASHATTN_DTYPES may lack the d64 bf16 bucket; that is
      // decided from the shapes alone, before any index is read.
      if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
      EXPECT_TRUE(status.ok()) << status.message();
      expect_device_healthy();
    }
  }
}

TEST_P(CudaRobustness, KVCacheGarbageIndices) {
  const bool paged = GetParam();
  Rng rng = Rng::for_current_test();
  const std::int64_t b = 3, sq = 5, h = 4, hk = 2, d = 64, s_new = 3, rot_rows = 40, page = 8, blocks = 12;
  const std::int64_t b_cache = 2, s_cache = 32, max_blocks = 4;
  Gpu q(random_bf16(rng, b * sq * h * d));
  const std::int64_t cache_elems = paged ? blocks * page * hk * d : b_cache * s_cache * hk * d;
  Gpu k_cache(random_bf16(rng, cache_elems)), v_cache(random_bf16(rng, cache_elems));
  Gpu k_new(random_bf16(rng, b * s_new * hk * d)), v_new(random_bf16(rng, b * s_new * hk * d));
  Gpu cos(random_bf16(rng, rot_rows * d / 4)), sin(random_bf16(rng, rot_rows * d / 4));
  Gpu out(b * sq * h * d * 2), lse(b * h * sq * 4);
  const std::int64_t capacity = paged ? max_blocks * page : s_cache;
  for (int round = 0; round < 3; ++round) {
    Gpu seqlens(garbage(rng, b, static_cast<std::int32_t>(capacity)));
    Gpu leftpad(garbage(rng, b, static_cast<std::int32_t>(capacity)));
    Gpu batch_idx(garbage(rng, b, static_cast<std::int32_t>(b_cache)));
    Gpu table(garbage(rng, b * max_blocks, static_cast<std::int32_t>(blocks)));
    for (int splits : {1, 3}) {
      KVCacheForwardArgs a;
      a.q = TensorView::contiguous(q.data, DType::bfloat16, {b, sq, h, d}, kGpu);
      if (paged) {
        a.k_cache = TensorView::contiguous(k_cache.data, DType::bfloat16, {blocks, page, hk, d}, kGpu);
        a.v_cache = TensorView::contiguous(v_cache.data, DType::bfloat16, {blocks, page, hk, d}, kGpu);
        a.block_table = TensorView::contiguous(table.data, DType::int32, {b, max_blocks}, kGpu);
      } else {
        a.k_cache = TensorView::contiguous(k_cache.data, DType::bfloat16, {b_cache, s_cache, hk, d}, kGpu);
        a.v_cache = TensorView::contiguous(v_cache.data, DType::bfloat16, {b_cache, s_cache, hk, d}, kGpu);
        a.cache_batch_idx = TensorView::contiguous(batch_idx.data, DType::int32, {b}, kGpu);
      }
      a.cache_seqlens = TensorView::contiguous(seqlens.data, DType::int32, {b}, kGpu);
      if (round > 0) a.cache_leftpad = TensorView::contiguous(leftpad.data, DType::int32, {b}, kGpu);
      a.k_new = TensorView::contiguous(k_new.data, DType::bfloat16, {b, s_new, hk, d}, kGpu);
      a.v_new = TensorView::contiguous(v_new.data, DType::bfloat16, {b, s_new, hk, d}, kGpu);
      a.rotary_cos = TensorView::contiguous(cos.data, DType::bfloat16, {rot_rows, d / 4}, kGpu);
      a.rotary_sin = TensorView::contiguous(sin.data, DType::bfloat16, {rot_rows, d / 4}, kGpu);
      a.num_splits = splits;
      a.out = TensorView::contiguous(out.data, DType::bfloat16, {b, sq, h, d}, kGpu);
      a.lse = TensorView::contiguous(lse.data, DType::float32, {b, h, sq}, kGpu);
      a.options.causal = round == 2;
      ExecutionContext ctx;
      ctx.backend = Backend::cuda_sm80;
      const Status status = call_with_workspace(a, ctx);
      // A build restricted by FLASHATTN_HEAD_DIMS / FLASHATTN_DTYPES may lack the d64 bf16 bucket; that is
      // decided from the shapes alone, before any index is read.
      if (status.code() == ErrorCode::unsupported) GTEST_SKIP() << status.message();
      EXPECT_TRUE(status.ok()) << status.message();
      expect_device_healthy();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CudaRobustness, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "paged" : "dense") + "_cuda_sm80";
                         });

#else

TEST(CudaRobustness, NeedsCuda_cuda_sm80) { GTEST_SKIP() << "cuda_sm80: built without CUDA"; }

#endif

}  // namespace
}  // namespace flashattn::test
