// Dev-only backward timing harness (bwd5): inputs filled on the device, so one shape costs milliseconds
// of setup instead of the CLI's seconds of host generation. Times flashattn::backward (preprocess + main
// + postprocess) on cuda_sm80 with CUDA events, median of `reps` calls after warm-up.
// usage: bwd_bench <dims e.g. 64,128> <seqlens e.g. 1024,4096> [reps] [deterministic 0/1] [tag] [causal list
// 0,1]
// BWD_BENCH_HASH=1 (bwd10): after timing, each row also prints an FNV-1a hash of dK and dV (deterministic in
// every mode: summed in registers per CTA) and the sum of dQ in double (its bulk / atomic adds are not
// ordered), so two builds of the kernel can be checked for identical results on the benchmark shapes.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "flashattn/flashattn.h"

using namespace flashattn;
#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e = (x);                                                                  \
    if (e != cudaSuccess) {                                                               \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

__global__ void fill(__nv_bfloat16* x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    float u = ((h & 0xffffff) / 16777216.0f) * 2.f - 1.f;  // uniform [-1, 1): ~unit-scale scores
    x[i] = __float2bfloat16(u * 1.7f);
  }
}

static unsigned long long fnv1a(const std::vector<unsigned short>& x) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned short v : x) {
    h = (h ^ (v & 0xff)) * 1099511628211ull;
    h = (h ^ (v >> 8)) * 1099511628211ull;
  }
  return h;
}

static std::vector<int> parse(const char* s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) v.push_back(std::atoi(t.c_str()));
  return v;
}

int main(int argc, char** argv) {
  std::vector<int> dims = parse(argc > 1 ? argv[1] : "64,128");
  std::vector<int> seqs = parse(argc > 2 ? argv[2] : "1024,4096,16384");
  int reps = argc > 3 ? std::atoi(argv[3]) : 10;
  bool det = argc > 4 && std::atoi(argv[4]) != 0;
  const char* tag = argc > 5 ? argv[5] : "ours";
  std::vector<int> masks = parse(argc > 6 ? argv[6] : "0,1");
  Device dev{DeviceType::cuda, 0};
  for (int d : dims)
    for (int causal : masks)
      for (int s : seqs) {
        const int64_t b = 16384 / s, h = 2048 / d;
        const size_t n = (size_t)b * s * h * d;
        __nv_bfloat16 *q, *k, *v, *o, *dout, *dq, *dk, *dv;
        float* lse;
        CK(cudaMalloc(&q, n * 2));
        CK(cudaMalloc(&k, n * 2));
        CK(cudaMalloc(&v, n * 2));
        CK(cudaMalloc(&o, n * 2));
        CK(cudaMalloc(&dout, n * 2));
        CK(cudaMalloc(&dq, n * 2));
        CK(cudaMalloc(&dk, n * 2));
        CK(cudaMalloc(&dv, n * 2));
        CK(cudaMalloc(&lse, (size_t)b * h * s * 4));
        fill<<<1024, 256>>>(q, n, 1);
        fill<<<1024, 256>>>(k, n, 2);
        fill<<<1024, 256>>>(v, n, 3);
        fill<<<1024, 256>>>(dout, n, 4);
        auto t4 = [&](void* p) { return TensorView::contiguous(p, DType::bfloat16, {b, s, h, d}, dev); };
        ForwardArgs fa;
        fa.q = t4(q);
        fa.k = t4(k);
        fa.v = t4(v);
        fa.out = t4(o);
        fa.lse = TensorView::contiguous(lse, DType::float32, {b, h, s}, dev);
        fa.options.causal = causal;
        ExecutionContext ctx;
        ctx.backend = Backend::cuda_sm80;
        size_t wsf = 0;
        Status st = workspace_size(fa, ctx, &wsf);
        if (!st.ok()) {
          std::printf("fwd ws: %s\n", st.message());
          return 1;
        }
        BackwardArgs ba;
        ba.dout = t4(dout);
        ba.q = fa.q;
        ba.k = fa.k;
        ba.v = fa.v;
        ba.out = fa.out;
        ba.lse = fa.lse;
        ba.dq = t4(dq);
        ba.dk = t4(dk);
        ba.dv = t4(dv);
        ba.options = fa.options;
        ba.deterministic = det;
        size_t wsb = 0;
        st = workspace_size(ba, ctx, &wsb);
        if (!st.ok()) {
          std::printf("bwd ws: %s\n", st.message());
          return 1;
        }
        void* ws = nullptr;
        size_t wsn = std::max(wsf, wsb);
        if (wsn) CK(cudaMalloc(&ws, wsn));
        ctx.workspace = ws;
        ctx.workspace_bytes = wsn;
        st = forward(fa, ctx);
        if (!st.ok()) {
          std::printf("fwd: %s\n", st.message());
          return 1;
        }
        for (int i = 0; i < 3; ++i) {
          st = backward(ba, ctx);
          if (!st.ok()) {
            std::printf("bwd: %s\n", st.message());
            return 1;
          }
        }
        CK(cudaDeviceSynchronize());
        std::vector<float> ms;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (int r = 0; r < reps; ++r) {
          CK(cudaEventRecord(e0));
          st = backward(ba, ctx);
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          float t;
          CK(cudaEventElapsedTime(&t, e0, e1));
          ms.push_back(t);
        }
        CK(cudaGetLastError());
        std::sort(ms.begin(), ms.end());
        const double med = ms[ms.size() / 2];
        const double flop = 4.0 * b * h * (double)s * s * d / (causal ? 2 : 1);
        std::printf("%s bwd d=%d causal=%d s=%d ms=%.3f TFLOPs=%.1f%s\n", tag, d, causal, s, med,
                    2.5 * flop / med / 1e9, det ? " det" : "");
        const char* hash = std::getenv("BWD_BENCH_HASH");
        if (hash != nullptr && hash[0] == '1') {
          std::vector<unsigned short> host(n);
          CK(cudaMemcpy(host.data(), dk, n * 2, cudaMemcpyDeviceToHost));
          const unsigned long long hk = fnv1a(host);
          CK(cudaMemcpy(host.data(), dv, n * 2, cudaMemcpyDeviceToHost));
          const unsigned long long hv = fnv1a(host);
          CK(cudaMemcpy(host.data(), dq, n * 2, cudaMemcpyDeviceToHost));
          double sum_dq = 0.0;
          for (unsigned short v : host) {
            const unsigned int bits = static_cast<unsigned int>(v) << 16;
            float f;
            std::memcpy(&f, &bits, 4);
            sum_dq += f;
          }
          std::printf("%s hash d=%d causal=%d s=%d dk=%016llx dv=%016llx dq_sum=%.9e\n", tag, d, causal, s,
                      hk, hv, sum_dq);
          std::fflush(stdout);
        }
        std::fflush(stdout);
        cudaFree(q);
        cudaFree(k);
        cudaFree(v);
        cudaFree(o);
        cudaFree(dout);
        cudaFree(dq);
        cudaFree(dk);
        cudaFree(dv);
        cudaFree(lse);
        if (ws) cudaFree(ws);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
      }
  return 0;
}
