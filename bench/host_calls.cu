// Host microseconds of the CUDA runtime / driver calls a flashattn launch makes (forward_launch.h,
// tensor_map.cu), each alone in a loop, so that `flashattn run --host-time`'s per-call total can be read
// against its parts. Kernels here are empty; the cluster query uses the forward kernels' shape (one CTA of
// 384 threads and ~200 KB of shared memory per SM, clusters of two).
//   nvcc -O2 -std=c++17 -arch=sm_90a bench/host_calls.cu -o host_calls && ./host_calls
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace {

__global__ void empty_kernel(int) {}
__global__ void __launch_bounds__(384, 1) wide_kernel(int) {}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Best of 5 rounds of `calls` back-to-back calls, microseconds per call.
double per_call_us(const std::function<void()>& fn, cudaStream_t stream, int calls = 200) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    check(cudaStreamSynchronize(stream), "sync");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    const double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
    if (us < best) best = us;
  }
  check(cudaStreamSynchronize(stream), "sync");
  return best;
}

}  // namespace

int main() {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  constexpr int kSmem = 200 * 1024;
  check(cudaFuncSetAttribute(wide_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem), "attribute");
  void* scratch = nullptr;
  check(cudaMalloc(&scratch, 1 << 20), "malloc");

  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found),
        "entry point");
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);

  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 2;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(132);
  config.blockDim = dim3(384);
  config.dynamicSmemBytes = kSmem;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;

  struct Case {
    const char* name;
    std::function<void()> fn;
  };
  long long sink = 0;  // keeps the queried values used
  const Case cases[] = {
      {"cudaGetDevice + 2 x cudaDeviceGetAttribute",
       [&] {
         int device = 0, a = 0, b = 0;
         check(cudaGetDevice(&device), "device");
         check(cudaDeviceGetAttribute(&a, cudaDevAttrMultiProcessorCount, device), "sms");
         check(cudaDeviceGetAttribute(&b, cudaDevAttrL2CacheSize, device), "l2");
         sink += a + b;
       }},
      {"cudaFuncSetAttribute (max dynamic shared memory)",
       [&] {
         check(cudaFuncSetAttribute(wide_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem), "attr");
       }},
      {"cudaOccupancyMaxActiveClusters (cluster 2, 384 threads, 200 KB)",
       [&] {
         int clusters = 0;
         check(cudaOccupancyMaxActiveClusters(&clusters, wide_kernel, &config), "clusters");
         sink += clusters;
       }},
      {"cudaFuncGetAttributes",
       [&] {
         cudaFuncAttributes attributes{};
         check(cudaFuncGetAttributes(&attributes, wide_kernel), "attributes");
         sink += attributes.ptxVersion;
       }},
      {"cudaOccupancyMaxActiveBlocksPerMultiprocessor (384 threads, 200 KB)",
       [&] {
         int blocks = 0;
         check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, wide_kernel, 384, kSmem), "blocks");
         sink += blocks;
       }},
      {"cuTensorMapEncodeTiled (4-d, 128B swizzle)",
       [&] {
         alignas(64) CUtensorMap map;
         const cuuint64_t dims[4] = {128, 4096, 16, 4};
         const cuuint64_t strides[3] = {128 * 16 * 2, 128 * 2, 4096ull * 16 * 128 * 2};
         const cuuint32_t box[4] = {64, 128, 1, 1};
         const cuuint32_t element_strides[4] = {1, 1, 1, 1};
         if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, scratch, dims, strides, box, element_strides,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
           std::fprintf(stderr, "encode failed\n");
           std::exit(1);
         }
       }},
      {"cudaMemsetAsync (4 bytes)", [&] { check(cudaMemsetAsync(scratch, 0, 4, stream), "memset"); }},
      {"empty kernel <<<132, 128>>> + cudaGetLastError",
       [&] {
         empty_kernel<<<132, 128, 0, stream>>>(0);
         check(cudaGetLastError(), "launch");
       }},
      {"cudaLaunchKernelEx, clusters of 2 (66 x 2 CTAs, 384 threads, 200 KB)",
       [&] { check(cudaLaunchKernelEx(&config, wide_kernel, 0), "launch ex"); }},
  };
  for (const Case& c : cases) {
    std::printf("{\"call\": \"%s\", \"host_us\": %.2f}\n", c.name, per_call_us(c.fn, stream));
  }
  if (sink < 0) std::printf("unexpected negative query result\n");
  check(cudaFree(scratch), "free");
  check(cudaStreamDestroy(stream), "stream");
  return 0;
}
