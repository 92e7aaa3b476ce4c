// How many thread-block clusters of each size (1-16) fit on this GPU at once, for a kernel of one CTA per SM
// by its shared memory (argv[1] bytes, default 232448: the narrow decode kernel's at d = 128; argv[2]
// threads, default 256). Session 51 (issue 6): the cluster combine's pieces (forward_launch.h) launch only
// where every tile's cluster fits at once; this prints what the occupancy query answers per size.
//   nvcc -std=c++17 -arch=sm_90a -o /tmp/cluster_fit_probe bench/cluster_fit_probe.cu &&
//   /tmp/cluster_fit_probe
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void probe_kernel(int* out) {
  extern __shared__ int smem[];
  if (out != nullptr) out[blockIdx.x] = smem[threadIdx.x];
}

int main(int argc, char** argv) {
  const int bytes = argc > 1 ? std::atoi(argv[1]) : 232448;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 256;
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
      std::exit(1);
    }
  };
  check(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
        "smem attribute");
  check(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
        "non-portable attribute");
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  std::printf("{\"sms\": %d, \"smem\": %d, \"threads\": %d, \"clusters\": {", sms, bytes, threads);
  for (int size = 1; size <= 16; ++size) {
    cudaLaunchAttribute dims{};
    dims.id = cudaLaunchAttributeClusterDimension;
    dims.val.clusterDim = {static_cast<unsigned>(size), 1, 1};
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(sms / size * size));
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = static_cast<size_t>(bytes);
    config.attrs = &dims;
    config.numAttrs = 1;
    int clusters = 0;
    check(cudaOccupancyMaxActiveClusters(&clusters, probe_kernel, &config), "occupancy query");
    std::printf("%s\"%d\": %d", size > 1 ? ", " : "", size, clusters);
  }
  std::printf("}}\n");
  return 0;
}
