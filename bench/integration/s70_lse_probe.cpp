// Session 70 probe: cuda_sm80's forward over many short batches left the LSE unwritten
// (tests/large_offsets_test.cpp, ManyBatches: 65636 x 32 rows x 2 heads x d128). Which shapes do? Each run
// poisons out / LSE with NaN (all bits set), runs the batched forward with LSE on the backend named, and
// counts the NaN left in each, printing the first unwritten LSE element.
//   s70_lse_probe BACKEND(sm80|sm90) B S H D
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "flashattn/flashattn.h"

using namespace flashattn;

int main(int argc, char** argv) {
  if (argc != 6) return 2;
  const Backend backend = std::strcmp(argv[1], "sm90") == 0 ? Backend::cuda_sm90 : Backend::cuda_sm80;
  const std::int64_t b = std::atoll(argv[2]), s = std::atoll(argv[3]), h = std::atoll(argv[4]),
                     d = std::atoll(argv[5]);
  const std::size_t n = static_cast<std::size_t>(b * s * h * d), nl = static_cast<std::size_t>(b * h * s);
  std::vector<std::uint16_t> host(n);
  std::uint32_t x = 12345;
  for (auto& v : host) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<std::uint16_t>(0x3e00 + ((x >> 16) & 0xff)) | ((x >> 8) & 0x8000);
  }
  void *q, *k, *v, *out, *lse, *ws = nullptr;
  cudaMalloc(&q, n * 2), cudaMalloc(&k, n * 2), cudaMalloc(&v, n * 2), cudaMalloc(&out, n * 2);
  cudaMalloc(&lse, nl * 4);
  cudaMemcpy(q, host.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(k, host.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(v, host.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemset(out, 0xFF, n * 2), cudaMemset(lse, 0xFF, nl * 4);
  const Device gpu{DeviceType::cuda, 0};
  ForwardArgs a;
  a.q = TensorView::contiguous(q, DType::bfloat16, {b, s, h, d}, gpu);
  a.k = TensorView::contiguous(k, DType::bfloat16, {b, s, h, d}, gpu);
  a.v = TensorView::contiguous(v, DType::bfloat16, {b, s, h, d}, gpu);
  a.out = TensorView::contiguous(out, DType::bfloat16, {b, s, h, d}, gpu);
  a.lse = TensorView::contiguous(lse, DType::float32, {b, h, s}, gpu);
  ExecutionContext ctx;
  ctx.backend = backend;
  std::size_t bytes = 0;
  Status st = workspace_size(a, ctx, &bytes);
  if (bytes) cudaMalloc(&ws, bytes);
  ctx.workspace = ws, ctx.workspace_bytes = bytes;
  if (st.ok()) st = forward(a, ctx);
  const cudaError_t e = cudaDeviceSynchronize();
  std::vector<float> l(nl);
  std::vector<std::uint16_t> o(n);
  cudaMemcpy(l.data(), lse, nl * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(o.data(), out, n * 2, cudaMemcpyDeviceToHost);
  std::size_t lse_nan = 0, out_nan = 0, first = nl;
  for (std::size_t i = 0; i < nl; ++i)
    if (std::isnan(l[i])) lse_nan++, first = first == nl ? i : first;
  for (std::size_t i = 0; i < n; ++i) out_nan += o[i] == 0xFFFF;
  std::printf("%s b=%lld s=%lld h=%lld d=%lld: status %s, cuda %s, out NaN %zu / %zu, lse NaN %zu / %zu",
              argv[1], static_cast<long long>(b), static_cast<long long>(s), static_cast<long long>(h),
              static_cast<long long>(d), st.ok() ? "ok" : st.message(), cudaGetErrorString(e), out_nan, n,
              lse_nan, nl);
  if (first < nl) {
    std::printf(", first at batch %zu head %zu row %zu", first / (h * s), first / s % h, first % s);
  }
  std::printf("\n");
  return 0;
}
