// Diagnostic driver (session 46) for the decode kernel's trace (bench/integration/s46_decodetrace*.patch):
// one decode step through the public C++ API, GQA 32/8, d128, bf16, a full dense cache of KEYS keys per
// sequence, as flash_attn_with_kvcache (cache_seqlens: per-sequence maps and the prepare kernel) or, with
// "dense", as flash_attn_func (no prepare kernel). Prints the graphed time per call (100 replays of a
// one-call CUDA graph, timed by events), then runs one more call and writes the workspace's last MiB, where
// the patched kernel leaves its trace, to DUMP (read by bench/decode_trace.py). Built against a trace tree's
// libflashattn.a:
//   nvcc -std=c++20 -O2 -Iinclude bench/decode_trace_driver.cu BUILD/src/libflashattn.a -Xcompiler -fopenmp \
//     -o decode_trace
//   ./decode_trace KEYS BATCH kvcache|dense DUMP [HEAD_DIM [NUM_SPLITS [Q_HEADS]]]
// (HEAD_DIM: d = dv, default 128, session 47; NUM_SPLITS: the KV-cache call's, default 0; Q_HEADS: default 32
// over the 8 K/V heads; session 48)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "flashattn/flashattn.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void check(const flashattn::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.message());
    std::exit(1);
  }
}

void* random_bf16(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<__nv_bfloat16> host(n);
  for (auto& x : host) x = __float2bfloat16(normal(rng));
  void* dev = nullptr;
  check(cudaMalloc(&dev, n * 2), "cudaMalloc");
  check(cudaMemcpy(dev, host.data(), n * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
  return dev;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace flashattn;
  if (argc < 5 || argc > 8) {
    std::fprintf(stderr, "usage: %s KEYS BATCH kvcache|dense DUMP [HEAD_DIM [NUM_SPLITS [Q_HEADS]]]\n",
                 argv[0]);
    return 2;
  }
  // 8 K/V heads, 32 query heads unless Q_HEADS; num_splits 0 (the library's choice) unless NUM_SPLITS.
  const std::int64_t keys = std::atoll(argv[1]), b = std::atoll(argv[2]), hk = 8,
                     hq = argc > 7 ? std::atoll(argv[7]) : 32, d = argc > 5 ? std::atoll(argv[5]) : 128;
  const int num_splits = argc > 6 ? std::atoi(argv[6]) : 0;
  const bool dense = std::strcmp(argv[3], "dense") == 0;
  std::mt19937 rng(0);
  const Device gpu{DeviceType::cuda, 0};
  void* q = random_bf16(b * hq * d, rng);
  void* k = random_bf16(b * keys * hk * d, rng);
  void* v = random_bf16(b * keys * hk * d, rng);
  void* out = nullptr;
  check(cudaMalloc(&out, b * hq * d * 2), "cudaMalloc");
  std::vector<int> lengths(b, static_cast<int>(keys));
  int* seqlens = nullptr;
  check(cudaMalloc(&seqlens, b * sizeof(int)), "cudaMalloc");
  check(cudaMemcpy(seqlens, lengths.data(), b * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  ExecutionContext ctx;
  ctx.backend = Backend::cuda_sm90;
  ctx.stream = stream;

  KVCacheForwardArgs cache_args;
  cache_args.q = TensorView::contiguous(q, DType::bfloat16, {b, 1, hq, d}, gpu);
  cache_args.k_cache = TensorView::contiguous(k, DType::bfloat16, {b, keys, hk, d}, gpu);
  cache_args.v_cache = TensorView::contiguous(v, DType::bfloat16, {b, keys, hk, d}, gpu);
  cache_args.cache_seqlens = TensorView::contiguous(seqlens, DType::int32, {b}, gpu);
  cache_args.out = TensorView::contiguous(out, DType::bfloat16, {b, 1, hq, d}, gpu);
  cache_args.num_splits = num_splits;
  ForwardArgs func_args;
  func_args.q = cache_args.q;
  func_args.k = cache_args.k_cache;
  func_args.v = cache_args.v_cache;
  func_args.out = cache_args.out;

  std::size_t bytes = 0;
  check(dense ? workspace_size(func_args, ctx, &bytes) : workspace_size(cache_args, ctx, &bytes),
        "workspace_size");
  check(cudaMalloc(&ctx.workspace, bytes), "cudaMalloc");
  ctx.workspace_bytes = bytes;
  auto call = [&] { check(dense ? forward(func_args, ctx) : forward_kvcache(cache_args, ctx), "forward"); };
  for (int i = 0; i < 20; ++i) call();
  check(cudaStreamSynchronize(stream), "sync");

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
  call();
  check(cudaStreamEndCapture(stream, &graph), "end capture");
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  for (int i = 0; i < 20; ++i) check(cudaGraphLaunch(exec, stream), "graph launch");
  cudaEvent_t start, end;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&end), "event");
  constexpr int kReplays = 100;
  check(cudaEventRecord(start, stream), "record");
  for (int i = 0; i < kReplays; ++i) check(cudaGraphLaunch(exec, stream), "graph launch");
  check(cudaEventRecord(end, stream), "record");
  check(cudaEventSynchronize(end), "sync");
  float ms = 0.f;
  check(cudaEventElapsedTime(&ms, start, end), "elapsed");
  std::printf("%s keys %lld batch %lld: %.2f us per graphed call (workspace %zu B)\n",
              dense ? "dense" : "kvcache", static_cast<long long>(keys), static_cast<long long>(b),
              ms * 1e3f / kReplays, bytes);

  constexpr std::size_t kTrace = std::size_t{1} << 20;
  if (bytes < kTrace) {
    std::printf("no trace area (workspace of %zu B)\n", bytes);
    return 0;
  }
  auto* trace = static_cast<unsigned char*>(ctx.workspace) + bytes - kTrace;
  check(cudaMemsetAsync(trace, 0, kTrace, stream), "memset");
  check(cudaGraphLaunch(exec, stream), "graph launch");
  check(cudaStreamSynchronize(stream), "sync");
  std::vector<unsigned char> host(kTrace);
  check(cudaMemcpy(host.data(), trace, kTrace, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (FILE* f = std::fopen(argv[4], "wb")) {
    std::fwrite(host.data(), 1, host.size(), f);
    std::fclose(f);
  }
  return 0;
}
