// The measuring half of tools/kernels/tune_forward.py: times every tuning
// candidate (FLASHATTN_SM80_FOR_EACH_CANDIDATE, from generate_kernels.py
// --candidates) and the shape the current table picks, on the standard grid
// (16k tokens, hidden 2048, bf16), and checks each candidate's output against
// the table's kernel (run through cuda_sm80::run). One JSON row per
// (shape, hdim, causal, seqlen, tile order, variant):
//   - "order": the tile order (tile_scheduler.h), both timed with the same kernel;
//     the backend runs "heads_fastest" for causal problems, "m_fastest" otherwise.
//   - "variant": "plain", or (at one seqlen, SM80_GENERAL_SEQLEN, default 2048)
//     the kGeneral kernel with softcap 30, ALiBi slopes, or dropout 0.1.
//   - shape "table" rows are cuda_sm80::run itself, bf16 and ("dtype": "fp16") fp16;
//     "table_sync" the same bf16 call timed the pre-v7 way (see median_ms);
//     "table_100ms" the bf16 call timed over >= 100 ms of launches (do_bench's length) and
//     "table_end" the bf16 call again after the candidates: with a candidate of the table's own
//     shape they are the control column of an A/B.
//   sm80_tune [SEQLENS, e.g. 1024,4096,16384]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend.h"
#include "common/numeric.h"
#include "common/params.h"
#include "cuda/sm80/forward_launch.h"
#include "cuda/sm80/sm80_kernel_list.h"

using namespace flashattn;
using namespace flashattn::detail;
using namespace flashattn::detail::cuda_sm80;

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

#define FLASHATTN_TUNE_DECLARE(head_dim, element, ...)                                                  \
  extern template cudaError_t launch_forward<ForwardConfig<head_dim, element, TileShape{__VA_ARGS__}>>( \
      const ForwardKernelArgs&, bool, cudaStream_t);
namespace flashattn::detail::cuda_sm80 {
FLASHATTN_SM80_FOR_EACH_CANDIDATE(FLASHATTN_TUNE_DECLARE)
}  // namespace flashattn::detail::cuda_sm80

namespace {

using Launch = cudaError_t (*)(const ForwardKernelArgs&, bool, cudaStream_t);
struct Candidate {
  int head_dim;
  TileShape shape;
  Launch launch;
};

std::vector<Candidate> candidates() {
  std::vector<Candidate> list;
#define FLASHATTN_TUNE_ENTRY(head_dim, element, ...)  \
  if (std::is_same_v<element, __nv_bfloat16>)         \
    list.push_back({head_dim, TileShape{__VA_ARGS__}, \
                    &launch_forward<ForwardConfig<head_dim, element, TileShape{__VA_ARGS__}>>});
  FLASHATTN_SM80_FOR_EACH_CANDIDATE(FLASHATTN_TUNE_ENTRY)
#undef FLASHATTN_TUNE_ENTRY
  return list;
}

// Timing as triton.testing.do_bench times FA2 (bench/sdpa_fa2_forward.py): before each timed launch
// a 256 MB memset evicts L2 and keeps the GPU busy while the host enqueues the launch, so neither
// warm inputs nor the host's launch cost enter the time; median of 25 after 3 warm-ups, CUDA
// events. -1 on a launch error. (`synchronous`: the pre-v7 method -- no flush, each launch timed
// alone after a synchronisation, so its host-side cost is inside the interval; kept to show the
// difference on the "table_sync" rows.)
void* g_flush = nullptr;
constexpr std::size_t kFlushBytes = std::size_t(256) << 20;
// SM80_MIN_MS=t: every timing fills at least t ms (do_bench's rep = 100), not only "table_100ms". On the
// H200 the clock follows the power draw of the last ~100 ms or so, and causal rows timed over 25 launches
// right after a longer timing measured up to 7% apart with the same kernel (docs/kernel-notes.md, v11).
double g_min_total_ms = 0;

// `min_total_ms` > 0: as many repetitions (at least 25) as fill that many milliseconds of kernel time,
// estimated from the warm-ups (do_bench's rep = 100 ms keeps the GPU busy that long; 25 repetitions
// of a 0.5 ms kernel only ~15 ms, so sustained clocks may differ between the two methods).
template <class F>
double median_ms(F&& launch, bool synchronous = false, double min_total_ms = 0) {
  int kReps = 25;
  if (g_flush == nullptr) CHECK_CUDA(cudaMalloc(&g_flush, kFlushBytes));
  if (min_total_ms < g_min_total_ms) min_total_ms = g_min_total_ms;
  if (min_total_ms > 0) {
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    CHECK_CUDA(cudaEventRecord(a));
    for (int w = 0; w < 5; ++w)
      if (!launch()) return -1;
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
    kReps = std::max(25, static_cast<int>(min_total_ms / std::max(ms / 5.0, 1e-3)));
  }
  std::vector<cudaEvent_t> e0(kReps), e1(kReps);
  for (int r = 0; r < kReps; ++r) {
    CHECK_CUDA(cudaEventCreate(&e0[r]));
    CHECK_CUDA(cudaEventCreate(&e1[r]));
  }
  for (int w = 0; w < 3; ++w)
    if (!launch()) return -1;
  CHECK_CUDA(cudaDeviceSynchronize());
  for (int r = 0; r < kReps; ++r) {
    if (synchronous) {
      CHECK_CUDA(cudaDeviceSynchronize());
    } else {
      CHECK_CUDA(cudaMemsetAsync(g_flush, r, kFlushBytes));
    }
    CHECK_CUDA(cudaEventRecord(e0[r]));
    launch();
    CHECK_CUDA(cudaEventRecord(e1[r]));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> times;
  for (int r = 0; r < kReps; ++r) {
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0[r], e1[r]));
    times.push_back(ms);
    CHECK_CUDA(cudaEventDestroy(e0[r]));
    CHECK_CUDA(cudaEventDestroy(e1[r]));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string shape_json(const TileShape& s) {
  char buffer[768];
  std::snprintf(
      buffer, sizeof buffer,
      "{\"m_tiles_per_warp\": %d, \"warps\": %d, \"block_n\": %d, \"stages\": %d, \"q_in_registers\": %s, "
      "\"min_blocks_per_sm\": %d, \"prefetch_next\": %s, \"joint_softmax\": %s, \"o_from_registers\": %s, "
      "\"prefetch_fragments\": %s, \"whole_tile_loads\": %s, \"late_copies\": %s, \"approx_epilogue\": %s, "
      "\"early_k_copy\": %s, "
      "\"panel_loads\": %s, \"qk_step_ahead\": %s, \"mask_bounds\": %s, \"xor_lane_offsets\": %s, "
      "\"lean_setup\": %s, \"conditional_rescale\": %s}",
      s.m_tiles_per_warp, s.warps, s.block_n, s.stages, s.q_in_registers ? "true" : "false",
      s.min_blocks_per_sm, s.prefetch_next ? "true" : "false", s.joint_softmax ? "true" : "false",
      s.o_from_registers ? "true" : "false", s.prefetch_fragments ? "true" : "false",
      s.whole_tile_loads ? "true" : "false", s.late_copies ? "true" : "false",
      s.approx_epilogue ? "true" : "false", s.early_k_copy ? "true" : "false",
      s.panel_loads ? "true" : "false", s.qk_step_ahead ? "true" : "false", s.mask_bounds ? "true" : "false",
      s.xor_lane_offsets ? "true" : "false", s.lean_setup ? "true" : "false",
      s.conditional_rescale ? "true" : "false");
  return buffer;
}

float max_abs_diff(const void* a, const void* b, std::size_t n) {
  std::vector<std::uint16_t> x(n), y(n);
  CHECK_CUDA(cudaMemcpy(x.data(), a, n * 2, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(y.data(), b, n * 2, cudaMemcpyDeviceToHost));
  float worst = 0.f;
  for (std::size_t i = 0; i < n; ++i) {
    const float d = std::fabs(bf16_to_float(x[i]) - bf16_to_float(y[i]));
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> seqlens = {1024, 4096, 16384};
  if (argc > 1) {
    seqlens.clear();
    for (char* tok = std::strtok(argv[1], ","); tok; tok = std::strtok(nullptr, ","))
      seqlens.push_back(std::atoi(tok));
  }
  // SM80_GENERAL_SEQLEN: the seqlens (a comma list) that also time the softcap/ALiBi/dropout kernels.
  const std::string general_seqlens =
      "," + std::string(std::getenv("SM80_GENERAL_SEQLEN") ? std::getenv("SM80_GENERAL_SEQLEN") : "2048") +
      ",";
  const std::vector<Candidate> list = candidates();
  std::vector<int> dims;
  for (const Candidate& c : list)
    if (std::find(dims.begin(), dims.end(), c.head_dim) == dims.end()) dims.push_back(c.head_dim);
  if (dims.empty()) dims = {64, 128, 256};  // a build without candidates: the table rows only
  float* slopes = nullptr;
  CHECK_CUDA(cudaMalloc(&slopes, 256 * sizeof(float)));
  {
    std::vector<float> host(256);
    for (int i = 0; i < 256; ++i) host[i] = std::exp2(-8.f * float(i % 32 + 1) / 32.f);
    CHECK_CUDA(cudaMemcpy(slopes, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  enum Variant { kPlain, kSoftcap, kAlibi, kDropout };
  const char* variant_names[] = {"plain", "softcap", "alibi", "dropout"};
  auto set_variant = [&](AttentionParams& p, int variant) {
    p.softcap = variant == kSoftcap ? 30.f : 0.f;
    p.alibi_slopes = variant == kAlibi ? slopes : nullptr;
    p.dropout_p = variant == kDropout ? 0.1f : 0.f;
    p.dropout_seed = 1234, p.dropout_offset = 0;
  };
  std::mt19937 rng(7);
  // Diagnostics (environment): SM80_DIMS=128,256 and SM80_CAUSAL=0|1 restrict the grid; SM80_TABLE_ONLY=1
  // times only the bf16 table call (no candidates, fp16 or sync rows: one kernel to profile);
  // SM80_SEQLEN_K=n runs n keys (<= the seqlen) per query row, to see the per-tile fixed cost.
  if (const char* only = std::getenv("SM80_DIMS")) {  // these dims (compiled by tune_forward.py), in order
    dims.clear();
    std::string list = only;
    for (char* tok = std::strtok(list.data(), ","); tok; tok = std::strtok(nullptr, ","))
      dims.push_back(std::atoi(tok));
  }
  const int only_causal = std::getenv("SM80_CAUSAL") ? std::atoi(std::getenv("SM80_CAUSAL")) : -1;
  const bool table_only = std::getenv("SM80_TABLE_ONLY") != nullptr;
  // SM80_NO_CANDIDATES=1: every table row (bf16, fp16, sync, softcap/ALiBi/dropout), no candidates.
  const bool no_candidates = table_only || std::getenv("SM80_NO_CANDIDATES") != nullptr;
  const int keys = std::getenv("SM80_SEQLEN_K") ? std::atoi(std::getenv("SM80_SEQLEN_K")) : 0;
  // SM80_NORMAL=1: inputs drawn from N(0, 1), as torch.randn draws them in bench/compare.py (the
  // default, U(-1, 1), has a third of the variance).
  const bool normal = std::getenv("SM80_NORMAL") != nullptr;
  // SM80_ONE_ORDER=1: candidates in the backend's default order only (heads fastest iff causal);
  // SM80_BF16_ONLY=1: no fp16 or synchronous table rows. Output checks run on the m-fastest order.
  const bool one_order = std::getenv("SM80_ONE_ORDER") != nullptr;
  const bool bf16_only = std::getenv("SM80_BF16_ONLY") != nullptr;
  if (const char* t = std::getenv("SM80_MIN_MS")) g_min_total_ms = std::atof(t);
  // SM80_GROUP_FACTORS=1,2: causal candidates also in the grouped order (tile_scheduler.h) with these
  // factors.
  std::vector<int> group_factors;
  if (const char* f = std::getenv("SM80_GROUP_FACTORS")) {
    std::string list = f;
    for (char* tok = std::strtok(list.data(), ","); tok; tok = std::strtok(nullptr, ","))
      group_factors.push_back(std::atoi(tok));
  }
  int sms = 0;
  {
    int device = 0;
    CHECK_CUDA(cudaGetDevice(&device));
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  }
  // Every row of the grid has the same element count (16k tokens x hidden 2048, SM80_SEQLEN_K aside),
  // so the inputs are drawn once and reused (drawing them per row took most of a pass's time).
  void *q = nullptr, *k = nullptr, *v = nullptr, *o_ref = nullptr, *o = nullptr, *q16 = nullptr,
       *k16 = nullptr, *v16 = nullptr;
  std::size_t filled = 0;
  for (int d : dims)
    for (int causal = 0; causal < 2; ++causal)
      for (int s : seqlens) {
        if (only_causal >= 0 && causal != only_causal) continue;
        const int b = 16384 / s, h = 2048 / d;
        const int sk = keys > 0 && keys < s ? keys : s;
        const std::size_t n = std::size_t(b) * s * h * d;
        if (n != filled) {
          for (void* ptr : {q, k, v, o_ref, o, q16, k16, v16}) cudaFree(ptr);
          filled = n;
          std::vector<std::uint16_t> init(n);
          if (normal) {
            std::normal_distribution<float> g(0.f, 1.f);
            for (auto& x : init) x = float_to_bf16(g(rng));
          } else {
            std::uniform_real_distribution<float> u(-1.f, 1.f);
            for (auto& x : init) x = float_to_bf16(u(rng));
          }
          for (void** ptr : {&q, &k, &v, &o_ref, &o, &q16, &k16, &v16}) CHECK_CUDA(cudaMalloc(ptr, n * 2));
          // fp16 copies of the same values (exact: bf16 values of magnitude < 8 fit fp16 but for a few
          // subnormals), so the fp16 rows time the same problem as the bf16 ones.
          std::vector<std::uint16_t> half(n);
          for (auto [dst, dst16] : {std::pair{q, q16}, std::pair{k, k16}, std::pair{v, v16}}) {
            if (dst != q) std::shuffle(init.begin(), init.end(), rng);
            CHECK_CUDA(cudaMemcpy(dst, init.data(), n * 2, cudaMemcpyHostToDevice));
            for (std::size_t i = 0; i < n; ++i) half[i] = float_to_fp16(bf16_to_float(init[i]));
            CHECK_CUDA(cudaMemcpy(dst16, half.data(), n * 2, cudaMemcpyHostToDevice));
          }
        }
        AttentionParams p;
        p.dtype = DType::bfloat16, p.batch = b, p.heads = p.heads_kv = h, p.head_dim = p.head_dim_v = d;
        p.seqlen_q = s;
        p.seqlen_k = sk;
        p.scale = 1.f / std::sqrt(float(d));
        p.mask.window_right = causal ? 0 : -1;
        const Operand op{nullptr, std::int64_t(s) * h * d, std::int64_t(h) * d, d};
        p.q = p.k = p.v = p.out = op;
        p.k.batch_stride = p.v.batch_stride = std::int64_t(sk) * h * d;
        p.q.data = q, p.k.data = k, p.v.data = v, p.out.data = o_ref;
        const double flop = 4.0 * b * h * double(s) * sk * d / (causal ? 2 : 1);
        const bool general_here = general_seqlens.find("," + std::to_string(s) + ",") != std::string::npos;
        const int variants = general_here ? 4 : 1;
        for (int variant = 0; variant < variants; ++variant) {
          set_variant(p, variant);
          ExecutionContext ctx;
          for (DType dtype : {DType::bfloat16, DType::float16}) {
            if (dtype == DType::float16 && (variant != kPlain || table_only || bf16_only)) continue;
            // The fp16 table kernel on the same values in fp16: only its time is used.
            AttentionParams pt = p;
            pt.dtype = dtype;
            if (dtype == DType::float16) pt.q.data = q16, pt.k.data = k16, pt.v.data = v16, pt.out.data = o;
            for (int synchronous = 0; synchronous < 2; ++synchronous) {
              if (synchronous && (dtype != DType::bfloat16 || variant != kPlain || table_only || bf16_only))
                continue;
              const double table_ms = median_ms([&] { return cuda_sm80::run(pt, ctx).ok(); }, synchronous);
              CHECK_CUDA(cudaDeviceSynchronize());
              std::printf(
                  "{\"shape\": \"%s\", \"dtype\": \"%s\", \"variant\": \"%s\", \"hdim\": %d, "
                  "\"causal\": %s, \"seqlen\": %d, \"seqlen_k\": %d, \"tflops\": %.1f, \"us\": %.1f}\n",
                  synchronous ? "table_sync" : "table", dtype == DType::float16 ? "fp16" : "bf16",
                  variant_names[variant], d, causal ? "true" : "false", s, sk,
                  table_ms > 0 ? flop / table_ms / 1e9 : 0.0, table_ms * 1e3);
            }
          }
          // The table call again with do_bench's ~100 ms of repetitions ("table_100ms").
          auto table_row = [&](const char* name, double min_total_ms) {
            const double ms = median_ms([&] { return cuda_sm80::run(p, ctx).ok(); }, false, min_total_ms);
            CHECK_CUDA(cudaDeviceSynchronize());
            std::printf(
                "{\"shape\": \"%s\", \"dtype\": \"bf16\", \"variant\": \"%s\", \"hdim\": %d, "
                "\"causal\": %s, \"seqlen\": %d, \"seqlen_k\": %d, \"tflops\": %.1f, \"us\": %.1f}\n",
                name, variant_names[variant], d, causal ? "true" : "false", s, sk,
                ms > 0 ? flop / ms / 1e9 : 0.0, ms * 1e3);
          };
          if (!table_only && variant == kPlain) table_row("table_100ms", 100.0);
          if (no_candidates) continue;
          // The reference of this variant: the table kernel's output (bf16).
          CHECK_CUDA(cudaMemset(o_ref, 0xff, n * 2));
          if (!cuda_sm80::run(p, ExecutionContext{}).ok()) return 2;
          CHECK_CUDA(cudaDeviceSynchronize());
          for (const Candidate& c : list) {
            if (c.head_dim != d) continue;
            // Orders: 0 m fastest, 1 heads fastest, then (causal plain rows) the grouped order once per
            // factor of SM80_GROUP_FACTORS (tile_scheduler.h: grouped_head_count).
            std::vector<int> orders = {0, 1};
            for (int factor : group_factors)
              if (causal && variant == kPlain) orders.push_back(1 + factor);
            for (int order : orders) {
              const int heads_fastest = order >= 1 ? 1 : 0;
              if (variant != kPlain && heads_fastest) continue;
              if (one_order && order <= 1 && heads_fastest != causal) continue;
              ForwardKernelArgs args;
              args.p = p;
              args.p.out.data = o;
              const int block_m = block_m_of(c.shape);
              args.m_blocks = (s + block_m - 1) / block_m;
              args.num_splits = 1;
              args.scale_log2 = p.scale * 1.4426950408889634f;
              args.dropout_threshold = p.dropout_p > 0.f ? dropout_threshold(p.dropout_p) : 0u;
              args.dropout_rescale = p.dropout_p > 0.f ? 1.f / (1.f - p.dropout_p) : 1.f;
              args.total_tiles = std::int64_t(args.m_blocks) * b * h;
              args.heads_fastest = heads_fastest != 0;
              args.head_group =
                  order >= 2 ? grouped_head_count(std::int64_t(b) * h, args.m_blocks,
                                                  std::int64_t(sms) * c.shape.min_blocks_per_sm, order - 1)
                             : 0;
              // lean_setup candidates read the host's launch constants (without them the tile decode
              // divides by zero-initialised divisors and the launch faults: session 9, helper sm80f's call).
              resolve_lean_setup(args);
              const bool general = variant != kPlain;
              CHECK_CUDA(cudaMemset(o, 0xff, n * 2));  // NaN poison
              const double ms = median_ms([&] { return c.launch(args, general, nullptr) == cudaSuccess; });
              const cudaError_t error = cudaDeviceSynchronize();
              const bool check = one_order || heads_fastest == 0 || order >= 2;
              const std::string order_name =
                  order >= 2 ? "grouped" + std::to_string(order - 1) + "_g" + std::to_string(args.head_group)
                  : order == 1 ? std::string("heads_fastest")
                               : std::string("m_fastest");
              const float diff =
                  error == cudaSuccess && ms > 0 ? (check ? max_abs_diff(o, o_ref, n) : -1.f) : INFINITY;
              std::printf(
                  "{\"shape\": %s, \"order\": \"%s\", \"variant\": \"%s\", \"hdim\": %d, \"causal\": %s, "
                  "\"seqlen\": %d, \"tflops\": %.1f, \"max_diff\": %g, \"error\": \"%s\"}\n",
                  shape_json(c.shape).c_str(), order_name.c_str(), variant_names[variant], d,
                  causal ? "true" : "false", s, ms > 0 ? flop / ms / 1e9 : 0.0, diff,
                  cudaGetErrorString(error));
              std::fflush(stdout);
              if (error != cudaSuccess) return 2;
            }
          }
          // The table call once more after the candidates: its spread against "table" is the control.
          if (!table_only && variant == kPlain) table_row("table_end", 0.0);
        }
      }
  for (void* ptr : {q, k, v, o_ref, o, q16, k16, v16}) cudaFree(ptr);
  cudaFree(slopes);
  return 0;
}
