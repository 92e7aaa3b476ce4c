// Diagnostic (issue 6, decode on the H200): how fast can one SM stream a KV cache into shared memory, by load
// path, pipeline depth, block size and CTAs per SM, with a consumer that holds each block for a set time? Our
// decode kernel read the cache at ~84% of the H200's DRAM peak (TMA, two 64 KB K/V stages, one consumer
// warpgroup) against cuDNN's ~95% (a cp.async-style sm80 kernel); more stages, a second CTA per SM and a
// heads-major cache each changed <= 3%. This probe isolates the load path from the attention arithmetic:
// every CTA walks tiles (batch, kv head) of a (batch, keys, kv heads, 128) bf16 cache (or a heads-major one)
// in blocks of `rows` keys, as the decode kernel's producer does, with a producer and a consumer warpgroup
// (ws_stream):
//   tma           thread 0 issues two 64-column 128B-swizzled TMA boxes per block (the kernel's K map), or
//   one
//                 unswizzled 128-column box; the L2 promotion 256B (the kernel's until session 20), 128B or
//                 none;
//   copy          the 128 producer threads issue 16-byte cp.async copies into the same swizzled layout and
//                 arrive through cp.async.mbarrier.arrive.noinc;
//   mixed         even blocks by TMA, odd ones by cp.async;
// and, as a reference, cpasync_sync: 4 warps that both copy (cp.async, 3 blocks ahead) and consume. The
// consumers wait on the full barrier, read one 16-byte word per thread, spin `delay` cycles per 128 rows and
// release the stage. Prints one JSON line per configuration: TB/s of cache read, the median of `reps`
// launches. Session 20 (H200): the 256B promotion caps TMA at 3.9-4.2 TB/s; 128B, none and cp.async
// reach 4.4-4.5.
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I src -I include bench/stream_probe.cu \
//     -o stream_probe && ./stream_probe [reps]
#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/tma.h"

namespace {

namespace ptx = flashattn::ptx;

#define CHECK(call)                                                                                   \
  do {                                                                                                \
    const cudaError_t status_ = (call);                                                               \
    if (status_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status_)); \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

constexpr int kCols = 128;            // head dim
constexpr int kRowBytes = kCols * 2;  // bf16
constexpr int kConsumerWarps = 4;

struct Problem {
  int batch, keys, heads;
  bool heads_major;  // (batch, heads, keys, 128) instead of the cache's (batch, keys, heads, 128)
};

struct Config {
  int stages, rows, delay;
  int box_cols;  // TMA: 64 (two 128B-swizzled boxes per block) or 128 (one unswizzled box)
};

__device__ __forceinline__ void spin(int cycles) {
  if (cycles <= 0) return;
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// One 16-byte word per consumer thread and block keeps the block's reads live.
__device__ __forceinline__ std::uint32_t touch(const unsigned char* block, int rows) {
  const int lane = threadIdx.x % (kConsumerWarps * 32);
  const uint4 v = *reinterpret_cast<const uint4*>(block + (lane * 16) % (rows * kRowBytes));
  return v.x ^ v.y ^ v.z ^ v.w;
}

// The kernel's shape: a producer warpgroup (warps 0-3) and a consumer warpgroup (warps 4-7). Kind
// kTma: thread 0 issues two 64-column TMA boxes per block, the other producer threads only arrive.
// kCopy: all 128 producer threads issue the block's 16-byte cp.async copies into the same swizzled
// layout, then cp.async.mbarrier.arrive.noinc (the barrier completes when every thread's copies
// have landed); the consumers order them before the tensor cores' reads with fence.proxy.async, as a
// kernel would. kMixed: even blocks by TMA, odd blocks by cp.async (K by one path, V by the other).
enum class Load { kTma, kCopy, kMixed };

template <Load kLoad>
__global__ void __launch_bounds__(256)
    ws_stream(const __grid_constant__ CUtensorMap map, const unsigned char* cache, Problem p, Config c,
              std::uint32_t* sink) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* ring = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                         ~std::uintptr_t{1023});
  __shared__ __align__(8) std::uint64_t bars[2 * 16];
  const int block_bytes = c.rows * kRowBytes;
  const std::uint32_t full0 = ptx::cvta_to_shared(&bars[0]);
  const std::uint32_t empty0 = ptx::cvta_to_shared(&bars[16]);
  if (threadIdx.x == 0) {
    for (int s = 0; s < c.stages; ++s) {
      ptx::mbarrier_init(full0 + 8 * s, 128);
      ptx::mbarrier_init(empty0 + 8 * s, kConsumerWarps);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();
  const int tiles = p.batch * p.heads;
  const int blocks_per_tile = p.keys / c.rows;
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % 32;
  const bool producer = t < 128;
  // A producer thread's 16-byte unit of every row it copies: column unit t % 16 of rows t / 16 + 8 i,
  // whose row % 8 is t / 16, so its swizzled place is the same in every row.
  const int unit = t % 16;
  const std::uint32_t unit_offset =
      (unit / 8) * (block_bytes / 2) + (t / 16) * 128 + (((unit % 8) ^ (t / 16)) * 16);
  const std::int64_t row_stride = p.heads_major ? kRowBytes : std::int64_t{p.heads} * kRowBytes;
  int slot = 0;
  std::uint32_t phase = 0;
  std::uint32_t acc = 0;
  int sequence = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int head = tile % p.heads;
    const int batch = tile / p.heads;
    for (int n = 0; n < blocks_per_tile; ++n, ++sequence) {
      const std::uint32_t full = full0 + 8 * slot;
      const std::uint32_t empty = empty0 + 8 * slot;
      const std::uint32_t dst = ptx::cvta_to_shared(ring + slot * block_bytes);
      const bool by_tma = kLoad == Load::kTma || (kLoad == Load::kMixed && sequence % 2 == 0);
      if (producer) {
        ptx::mbarrier_wait_parity(empty, phase ^ 1);
        if (by_tma) {
          if (t == 0) {
            ptx::mbarrier_arrive_expect_tx(full, block_bytes);
            ptx::tma_load_4d(dst, &map, full, 0, n * c.rows, head, batch);
            if (c.box_cols == 64)
              ptx::tma_load_4d(dst + block_bytes / 2, &map, full, 64, n * c.rows, head, batch);
          } else {
            ptx::mbarrier_arrive(full);
          }
        } else {
          const unsigned char* src =
              p.heads_major
                  ? cache + ((std::int64_t{batch} * p.heads + head) * p.keys + std::int64_t{n} * c.rows) *
                                kRowBytes
                  : cache + ((std::int64_t{batch} * p.keys + std::int64_t{n} * c.rows) * p.heads + head) *
                                kRowBytes;
          src += (t / 16) * row_stride + unit * 16;
          for (int i = 0; i < c.rows / 8; ++i) {
            ptx::cp_async_cg_16_full(dst + unit_offset + i * 1024, src + i * 8 * row_stride);
          }
          ptx::cp_async_mbarrier_arrive_noinc(full);
        }
      } else {
        ptx::mbarrier_wait_parity(full, phase);
        if (!by_tma) ptx::fence_proxy_async_shared_cta();
        acc ^= touch(ring + slot * block_bytes, c.rows);
        spin(c.delay);
        __syncwarp();
        ptx::mbarrier_arrive_if(empty, lane == 0);
      }
      if (++slot == c.stages) {
        slot = 0;
        phase ^= 1;
      }
    }
  }
  if (acc == 0x12345678u) sink[0] = acc;  // keeps the reads; practically never true
}

__device__ __forceinline__ const unsigned char* block_source(const unsigned char* cache, const Problem& p,
                                                             int tile, int n, int rows) {
  const int head = tile % p.heads;
  const int batch = tile / p.heads;
  const std::int64_t first_row =
      p.heads_major ? (std::int64_t{batch} * p.heads + head) * p.keys + std::int64_t{n} * rows
                    : (std::int64_t{batch} * p.keys + std::int64_t{n} * rows) * p.heads + head;
  return cache + first_row * kRowBytes;
}

// 128 threads; block n's copies are issued `stages - 1` blocks before it is read.
template <int Stages>
__global__ void __launch_bounds__(128)
    cpasync_stream(const unsigned char* cache, Problem p, Config c, std::uint32_t* sink) {
  extern __shared__ __align__(1024) unsigned char ring[];
  const int block_bytes = c.rows * kRowBytes;
  const int tiles = p.batch * p.heads;
  const int blocks_per_tile = p.keys / c.rows;
  const std::int64_t row_stride = p.heads_major ? kRowBytes : std::int64_t{p.heads} * kRowBytes;
  // The walk over every (tile, block) of this CTA as one sequence, so the pipeline runs across tiles.
  const int my_tiles = (tiles - static_cast<int>(blockIdx.x) + gridDim.x - 1) / gridDim.x;
  const int total = my_tiles * blocks_per_tile;
  auto issue = [&](int k) {
    if (k < total) {
      const int tile = blockIdx.x + (k / blocks_per_tile) * gridDim.x;
      const unsigned char* src = block_source(cache, p, tile, k % blocks_per_tile, c.rows);
      const std::uint32_t dst = ptx::cvta_to_shared(ring + (k % Stages) * block_bytes);
      for (int i = threadIdx.x; i < c.rows * 16; i += 128) {
        ptx::cp_async_cg_16_full(dst + i * 16, src + (i / 16) * row_stride + (i % 16) * 16);
      }
    }
    ptx::cp_async_commit_group();
  };
  for (int k = 0; k < Stages - 1; ++k) issue(k);
  std::uint32_t acc = 0;
  for (int k = 0; k < total; ++k) {
    ptx::cp_async_wait_group<Stages - 2>();
    __syncthreads();
    acc ^= touch(ring + (k % Stages) * block_bytes, c.rows);
    spin(c.delay);
    __syncthreads();  // everyone is done with the slot the next issue overwrites
    issue(k + Stages - 1);
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The cache's K map as the kernel encodes it (tensor_map.cu) or a variant: swizzle 128B with 64-column
// boxes or none with whole 128-column rows, and the L2 promotion.
bool encode(CUtensorMap* map, const void* base, const Problem& p, int rows, int box_cols,
            CUtensorMapL2promotion promotion) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                           &found));
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  const cuuint64_t keys = static_cast<cuuint64_t>(p.keys);
  const cuuint64_t heads = static_cast<cuuint64_t>(p.heads);
  const cuuint64_t dims[4] = {kCols, keys, heads, static_cast<cuuint64_t>(p.batch)};
  const cuuint64_t strides[3] = {p.heads_major ? kRowBytes : heads * kRowBytes,
                                 p.heads_major ? keys * kRowBytes : kRowBytes, keys * heads * kRowBytes};
  const cuuint32_t box[4] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(rows), 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  return encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void*>(base), dims, strides, box,
                      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                      box_cols == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE, promotion,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

struct Run {
  const char* mode;
  Load load;
  bool heads_major;
  int box_cols;
  CUtensorMapL2promotion promotion;
  const char* promotion_name;
};

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  Problem p{64, 8192, 8, false};  // the decode A/B's gqa_b64_8k K cache (1.07 GB)
  const std::size_t bytes = std::size_t{static_cast<std::size_t>(p.batch)} * p.keys * p.heads * kRowBytes;
  unsigned char* cache = nullptr;
  std::uint32_t* sink = nullptr;
  CHECK(cudaMalloc(&cache, bytes));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMemset(cache, 0x3c, bytes));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("{\"device\": \"%s\", \"sms\": %d, \"cache_gbytes\": %.3f}\n", prop.name, sms, bytes / 1e9);
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int smem_limit = 220 * 1024;
  CHECK(cudaFuncSetAttribute(ws_stream<Load::kTma>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_limit));
  CHECK(
      cudaFuncSetAttribute(ws_stream<Load::kCopy>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_limit));
  CHECK(
      cudaFuncSetAttribute(ws_stream<Load::kMixed>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_limit));
  CHECK(cudaFuncSetAttribute(cpasync_stream<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_limit));
  const Run runs[] = {
      {"tma", Load::kTma, false, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "256B"},
      {"tma", Load::kTma, false, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, "128B"},
      {"tma", Load::kTma, false, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE, "none"},
      {"tma", Load::kTma, false, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "256B"},
      {"tma", Load::kTma, true, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "256B"},
      {"copy", Load::kCopy, false, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "-"},
      {"copy", Load::kCopy, true, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "-"},
      {"mixed", Load::kMixed, false, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "256B"},
      {"cpasync_sync", Load::kCopy, false, 0, CU_TENSOR_MAP_L2_PROMOTION_NONE, "-"},
  };
  CUtensorMap map{};
  for (const Run& run : runs) {
    p.heads_major = run.heads_major;
    const bool sync_copy = run.box_cols == 0;
    for (int rows : {64, 128}) {
      if (!sync_copy && !encode(&map, cache, p, rows, run.box_cols, run.promotion)) {
        std::fprintf(stderr, "tensor map rejected\n");
        return 1;
      }
      for (int stages : {2, 3, 4, 6}) {
        if (sync_copy && stages != 4) continue;
        for (int ctas : {1, 2}) {
          const std::size_t smem = std::size_t{static_cast<std::size_t>(stages)} * rows * kRowBytes + 1024;
          if (smem * ctas > static_cast<std::size_t>(smem_limit)) continue;
          for (int delay : {0, 1300}) {
            const Config c{stages, rows, delay * rows / 128,
                           run.box_cols};  // the same consumer time per byte
            const int grid = sms * ctas;
            std::vector<float> ms;
            for (int r = 0; r < reps + 1; ++r) {
              CHECK(cudaEventRecord(start, stream));
              if (sync_copy) {
                cpasync_stream<4><<<grid, 128, smem, stream>>>(cache, p, c, sink);
              } else if (run.load == Load::kTma) {
                ws_stream<Load::kTma><<<grid, 256, smem, stream>>>(map, cache, p, c, sink);
              } else if (run.load == Load::kCopy) {
                ws_stream<Load::kCopy><<<grid, 256, smem, stream>>>(map, cache, p, c, sink);
              } else {
                ws_stream<Load::kMixed><<<grid, 256, smem, stream>>>(map, cache, p, c, sink);
              }
              CHECK(cudaGetLastError());
              CHECK(cudaEventRecord(stop, stream));
              CHECK(cudaEventSynchronize(stop));
              float t = 0;
              CHECK(cudaEventElapsedTime(&t, start, stop));
              if (r > 0) ms.push_back(t);
            }
            const float t = median(ms);
            std::printf(
                "{\"mode\": \"%s\", \"heads_major\": %d, \"box_cols\": %d, \"promotion\": \"%s\", \"rows\": "
                "%d, "
                "\"stages\": %d, \"ctas_per_sm\": %d, \"delay_per_128\": %d, \"us\": %.1f, \"tbps\": %.3f}\n",
                run.mode, run.heads_major ? 1 : 0, run.box_cols, run.promotion_name, rows, stages, ctas,
                delay, t * 1e3, bytes / (t * 1e-3) / 1e12);
            std::fflush(stdout);
          }
        }
      }
    }
  }
  CHECK(cudaFree(cache));
  CHECK(cudaFree(sink));
  return 0;
}
