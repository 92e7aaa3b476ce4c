// The decode kernel's narrow tile (forward_config.h kNarrowRows, use_narrow_rows): the consumer warpgroup of
// a tile of at most kNarrowRowsMax packed query rows (a decode step's query heads of one kv head).
//
// The 64-row tile (consumer.h) computes S = Q K^T for 64 rows whatever the tile holds: a decode step over a
// GQA group of 4 throws away 15 / 16 of its S GEMM, of its softmax and of its P V GEMM, and those make each
// key block's chain (~1.8 us of a 128-key block at d128 on an H200: docs/performance.md, session 46's trace).
// Here the keys are the wgmma's M instead:
//   S^T = K Q^T        A = K (64 keys per M tile, K-major), B = Q's first 8 rows (K-major), N = 8;
//   softmax over the keys of each column (a row of S), across the warpgroup's 4 warps (one exchange
//                      through shared memory per key block: a warp holds 16 of each M tile's 64 keys);
//   O^T += V^T P^T     A = V (M-major: its dv columns are M), B = P^T written to shared memory by
//                      stmatrix.trans (8 rows of the block's keys, K-major), N = 8.
// Per 128-key block at d = 128 that is 32 wgmma m64n8k16 (16 for S^T, 16 for O^T) and 8 probabilities per
// thread, where the 64-row tile issues 16 m64n128k16 and takes 64 probabilities. The producer, the ring and
// the tile handoff are the 64-row decode kernel's (producer.h); the epilogue writes O^T transposed into O's
// buffer (the TMA store clips the rows past the tile's: they are query positions past seqlen_q), and a split
// piece records its rows in split_kv.h's format, so the combine and the store of a split tile are
// split_kv.h's and epilogue.h's.
//
// Per key block, one barrier (kNarrowExchange): it closes the exchange of the block's row maxima and, being
// after every thread's fenced stmatrix of the previous block's P^T, opens that P^T to the GEMM issued after
// it:
//   S(j) issued, waited; the transforms and the mask; warp maxima -> exchange buffer j % 2; barrier;
//   O^T += V(j-1)^T P(j-1)^T issued; P(j) (against the new maxima) -> P^T buffer j % 2, fenced;
//   O^T's GEMM waited, V(j-1) released, O^T rescaled by the maxima's move.
// P^T buffer j % 2 was last read by the GEMM of block j - 2, which every warp waited for before it arrived at
// block j's barrier, after which alone block j's P^T is written; the exchange buffers likewise.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "common/mask.h"
#include "cuda/ptx/approx_math.h"
#include "cuda/ptx/cluster.h"
#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/ptx/wgmma.h"
#include "cuda/sm90/epilogue.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/named_barriers.h"
#include "cuda/sm90/piece_arrival.h"
#include "cuda/sm90/pipeline.h"
#include "cuda/sm90/score_mask.h"
#include "cuda/sm90/softmax.h"
#include "cuda/sm90/split_kv.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

// S^T of the key block at k: per 64-key M tile mt, A = K's rows 64 mt .. 64 mt + 63 (K-major, like Q in
// gemm_qk), B = Q's first kNarrowRowsMax rows (K-major, one swizzle atom), one wgmma per 16 head-dim columns.
template <class Config>
__device__ __forceinline__ void gemm_narrow_s(float (&st)[Config::kBlockN / 64][4], std::uint32_t q,
                                              std::uint32_t k) {
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(q, 16, 1024);
#pragma unroll
  for (int mt = 0; mt < Config::kBlockN / 64; ++mt) {
    const std::uint64_t desc_a0 = ptx::make_smem_desc_sw128(k + mt * 64 * Config::kRowBytes, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < Config::kHeadDim / 16; ++kk) {
      const int offset = (kk % 4) * 32;  // 16 elements = 32 bytes along the swizzled row
      ptx::wgmma_m64k16_ss<kNarrowRowsMax, typename Config::Element>(
          st[mt], ptx::smem_desc_moved(desc_a0, (kk / 4) * Config::kKVChunkBytes + offset, 0),
          ptx::smem_desc_moved(desc_b0, (kk / 4) * Config::kQChunkBytes + offset, 0), kk > 0 ? 1 : 0);
    }
  }
}

// O^T += V^T P^T: per 64-column M tile mt of V, A = V's column chunk mt read M-major (its key rows are the
// K steps: 16 rows = two 1 KB atoms, SBO apart), B = P^T's rows (K-major: 64-key chunks of one 1 KB atom).
template <class Config>
__device__ __forceinline__ void gemm_narrow_o(float (&ot)[Config::kHeadDimV / 64][4], std::uint32_t v,
                                              std::uint32_t pt) {
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(pt, 16, 1024);
#pragma unroll
  for (int mt = 0; mt < Config::kHeadDimV / 64; ++mt) {
    const std::uint64_t desc_a0 =
        ptx::make_smem_desc_sw128(v + mt * Config::kKVChunkBytes, Config::kKVChunkBytes, 1024);
#pragma unroll
    for (int kk = 0; kk < Config::kBlockN / 16; ++kk) {
      ptx::wgmma_m64k16_ss_ta<kNarrowRowsMax, typename Config::Element>(
          ot[mt], ptx::smem_desc_moved(desc_a0, kk * 16 * Config::kRowBytes, 0),
          ptx::smem_desc_moved(desc_b0, (kk / 4) * 1024 + (kk % 4) * 32, 0), 1);
    }
  }
}

// The transpose of an M x 8 accumulator (kTiles M tiles of 64: packed[t][h] holds the pair of columns 2 (lane
// % 4), + 1 at row 64 t + 16 warp + 8 h + lane / 4) into 8 rows of 64 t .. elements, row i's chunk t at base
// + t * chunk_stride + i * 128, 128B-swizzled (16-byte unit u of row i at u ^ i): one stmatrix.trans per two
// M tiles, matrix (t, h) the 8 x 8 block whose stored rows are unit 2 warp + h of each row.
template <int kTiles>
__device__ __forceinline__ void store_transposed(std::uint32_t base, int chunk_stride,
                                                 const std::uint32_t (&packed)[kTiles][2], int warp,
                                                 int lane) {
  const int i = lane % 8;  // the stored row this lane addresses
  const int h = (lane / 8) % 2;
  const std::uint32_t row = base + i * 128 + (((2 * warp + h) ^ i) << 4);
#pragma unroll
  for (int t = 0; t + 1 < kTiles; t += 2) {
    ptx::stmatrix_x4_trans(row + (t + lane / 16) * chunk_stride, packed[t][0], packed[t][1], packed[t + 1][0],
                           packed[t + 1][1]);
  }
  if constexpr (kTiles % 2 == 1) {
    ptx::stmatrix_x2_trans(row + (kTiles - 1) * chunk_stride, packed[kTiles - 1][0], packed[kTiles - 1][1]);
  }
}

// The warpgroup's per-column values v[e] (columns 2 (lane % 4) + e; each warp's shuffle-reduced over its
// keys) combined over the 4 warps through exchange buffer xch ([column][warp] floats), `op` the combination.
template <class Op>
__device__ __forceinline__ void exchange_columns(float (&v)[2], std::uint32_t xch, int warp, int lane,
                                                 Op op) {
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    v[e] = op(v[e], __shfl_xor_sync(0xffffffffu, v[e], 4));
    v[e] = op(v[e], __shfl_xor_sync(0xffffffffu, v[e], 8));
    v[e] = op(v[e], __shfl_xor_sync(0xffffffffu, v[e], 16));
  }
  if (lane < 4) {
#pragma unroll
    for (int e = 0; e < 2; ++e)
      ptx::st_shared_b32(xch + ((2 * lane + e) * 4 + warp) * 4, __float_as_uint(v[e]));
  }
  ptx::bar_sync(kNarrowExchange, 128);
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const uint4 all = ptx::ld_shared_v4_b32(xch + (2 * (lane % 4) + e) * 16);
    v[e] = op(op(__uint_as_float(all.x), __uint_as_float(all.y)),
              op(__uint_as_float(all.z), __uint_as_float(all.w)));
  }
}

// pipeline.h zero_v_rows by the warpgroup, then made visible to the tensor cores (every thread's stores
// fenced for the async proxy before the barrier that the GEMM follows).
template <class Config>
__device__ __forceinline__ void zero_rows_from(std::uint32_t v, int first_row) {
  zero_v_rows<Config>(v, first_row, static_cast<int>(threadIdx.x % 128), 128);
  ptx::fence_proxy_async_shared_cta();
  ptx::bar_sync(kNarrowExchange, 128);
}

// One float4 unit of a split tile's combined rows (split_kv.h's arithmetic: O = sum_i exp(lse_i - lse) O_i,
// lse = log(sum_i exp(lse_i) + exp(sink))), summed over rounds of pieces in key order: within a round the
// pieces' weights are independent of each other (the round's largest LSE first), so a round's loads are all
// in flight at once. One consumer warp a scheduler hides no latency, so the combine's time is its instruction
// chain: the weights are base-2 exponentials of one FFMA each (the main loop's form).
struct PieceSum {
  float reference = -INFINITY, sum = 0.f;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};

  // A round of pieces (past the last: LSE -inf, weighed 0).
  template <int kBatch>
  __device__ __forceinline__ void add(const float (&lse)[kBatch], const float4 (&x)[kBatch]) {
    constexpr float kLog2e = 1.4426950408889634f;
    float next = reference;
#pragma unroll
    for (int b = 0; b < kBatch; ++b) next = fmaxf(next, lse[b]);
    // Where no piece so far saw a key (next -inf) the stand-in 0 makes every weight ex2(-inf) = 0 and keeps
    // the zeros.
    const float offset = next == -INFINITY ? 0.f : next * kLog2e;
    const float keep = ptx::ex2_approx_ftz_f32(fmaf(reference, kLog2e, -offset));
    sum *= keep;
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[j] *= keep;
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const float weight = ptx::ex2_approx_ftz_f32(fmaf(lse[b], kLog2e, -offset));
      sum += weight;
      acc[0] = fmaf(weight, x[b].x, acc[0]);
      acc[1] = fmaf(weight, x[b].y, acc[1]);
      acc[2] = fmaf(weight, x[b].z, acc[2]);
      acc[3] = fmaf(weight, x[b].w, acc[3]);
    }
    reference = next;
  }

  // The unit's 4 columns at (row, col) as split_kv.h's record of `rows` rows (normalised by their own sums,
  // the sink left to the tile's combine; LSE -inf where no piece saw a key), the LSE at column 0.
  template <int kDv>
  __device__ __forceinline__ void record(float* out, int rows, int row, int col) const {
    const bool empty = !(sum > 0.f);
    const float scale = empty ? 0.f : 1.f / sum;
    __stcg(reinterpret_cast<float4*>(out + row * kDv + col),
           make_float4(acc[0] * scale, acc[1] * scale, acc[2] * scale, acc[3] * scale));
    if (col == 0) __stcg(out + rows * kDv + row, empty ? -INFINITY : reference + logf(sum));
  }

  // The sink (if any) counted once, as the tile's own row sums would; then the unit's factor 1 / sum (0 where
  // no key and no sink weighed anything) and the row's LSE.
  __device__ __forceinline__ float finish(const ForwardKernelParams& p, const WorkTile& w, float& lse) {
    constexpr float kLog2e = 1.4426950408889634f;
    if (p.sink != nullptr) {
      const float sink = p.sink[w.head];
      const float next = fmaxf(reference, sink);
      const float keep = exp2f((reference - next) * kLog2e);  // 0 when no piece saw a key
      sum = fmaf(sum, keep, exp2f((sink - next) * kLog2e));
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[j] *= keep;
      reference = next;
    }
    const bool empty = !(sum > 0.f);
    lse = empty ? -INFINITY : reference + logf(sum);
    return empty ? 0.f : 1.f / sum;
  }

  // The unit's 4 columns at (row, col) of the tile into O's buffer (128B-swizzled 64-column chunks: the unit
  // is half a 16-byte unit) and, at column 0, the row's LSE.
  template <class Config>
  __device__ __forceinline__ void store(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe,
                                        const WorkTile& w, int packed_row, int row, int col) {
    float lse;
    const float scale = finish(p, w, lse);
    const std::uint32_t addr = pipe.o(0) + (col / 64) * Config::kOChunkStride + row * Config::kRowBytes +
                               ((((col % 64) / 8) ^ (row % 8)) << 4) + (col % 8) * 2;
    ptx::st_shared_v2_f32(
        addr, __uint_as_float(pack_pair<typename Config::Element>(acc[0] * scale, acc[1] * scale)),
        __uint_as_float(pack_pair<typename Config::Element>(acc[2] * scale, acc[3] * scale)));
    if (p.lse != nullptr && col == 0) store_packed_row_lse(p, w, packed_row, lse);
  }

  // The same straight into O in global memory (split_kv.out; the row's 32 units of a warp make whole 256-byte
  // lines at dv = 128), where the tile's rows are summed by several CTAs and no one of them holds the box
  // that maps.o's store writes. Packed rows past the sequence's query rows are not stored, nor a padded head
  // dim's columns past O's (the TMA store clips both).
  template <class Config>
  __device__ __forceinline__ void store_row(const ForwardKernelParams& p, const WorkTile& w, int packed_row,
                                            int col) {
    float lse;
    const float scale = finish(p, w, lse);
    const int position = packed_row >> p.pack_shift;
    const SplitKV& s = p.split_kv;
    if (position >= w.seqlen_q || col >= s.out_cols) return;
    const int head = (w.head << p.pack_shift) + (packed_row & ((1 << p.pack_shift) - 1));
    auto* const out = static_cast<typename Config::Element*>(s.out) + w.batch * s.out_batch_stride +
                      static_cast<std::int64_t>(w.q_offset + position) * s.out_row_stride +
                      static_cast<std::int64_t>(head) * s.out_head_stride + col;
    *reinterpret_cast<uint2*>(out) =
        make_uint2(pack_pair<typename Config::Element>(acc[0] * scale, acc[1] * scale),
                   pack_pair<typename Config::Element>(acc[2] * scale, acc[3] * scale));
    if (p.lse != nullptr && col == 0) store_packed_row_lse(p, w, packed_row, lse);
  }
};

// The sum over `pieces` pieces of a split tile's rows (rows x kDv values and their LSEs), thread t of the
// warpgroup holding the float4 units t, t + 128, ... of the rows (row unit / (kDv / 4)): kUnits units a
// thread, their sums in registers (PieceSum). A round loads kBatch pieces' values of every unit of the thread
// at once (at most 16 loads in flight a thread); the round's weights come from its largest LSE, independent
// of each other. read(piece, row, col, lse, x) loads a piece's LSE of the row and its 4 values at (row, col);
// done(sum, row, col) takes each unit's sum. Branch-free: a round's places past the last piece read that
// piece again (LSE -inf: weighed 0), units past the rows read the last row and take no sum.
template <int kDv, int kUnits, int kBatch, class Read, class Done>
__device__ __forceinline__ void sum_pieces_in_units(int rows, int pieces, Read read, Done done) {
  constexpr int kRowUnits = kDv / 4;
  static_assert(kBatch * kUnits <= 16 && kBatch >= 1 && 128 % kRowUnits == 0,
                "at most 16 loads in flight; whole rows a round");
  const int thread = threadIdx.x % 128;
  int row[kUnits], col[kUnits];
#pragma unroll
  for (int u = 0; u < kUnits; ++u) {
    row[u] = min((thread + 128 * u) / kRowUnits, rows - 1);
    col[u] = 4 * (thread % kRowUnits);  // (128 is a multiple of kRowUnits)
  }
  PieceSum sum[kUnits];
#pragma unroll 1
  for (int first = 0; first < pieces; first += kBatch) {
    float lse[kUnits][kBatch];
    float4 x[kUnits][kBatch];
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        read(min(first + b, pieces - 1), row[u], col[u], lse[u][b], x[u][b]);
        if (first + b >= pieces) lse[u][b] = -INFINITY;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnits; ++u) sum[u].add(lse[u], x[u]);
  }
#pragma unroll
  for (int u = 0; u < kUnits; ++u) {
    if (thread + 128 * u < rows * kRowUnits) done(sum[u], row[u], col[u]);
  }
}

// sum_pieces_in_units with as few units a thread as the rows need (1, 2, 4, ... up to those of kNarrowRowsMax
// rows: 1 at dv = 64, 2 at 128, 4 at 256), and rounds of kLoads / kUnits pieces, or half as many where they
// hold every piece (a cluster of 8 at one unit: no round of 16 places of which 8 weigh 0). kLoads: 16, or 8
// in the kernel of two CTAs a SM, whose 128 registers a thread a round of 16 fills (ptxas: 127-128 registers
// at d = 64 / 128 with 16, 96 / 111-113 with 8, as measured on the H200).
template <int kDv, int kLoads = 16, int kUnits = 1, class Read, class Done>
__device__ __forceinline__ void sum_pieces(int rows, int pieces, Read read, Done done) {
  constexpr int kMostUnits = (kNarrowRowsMax * kDv / 4 + 127) / 128;
  if constexpr (kUnits < kMostUnits) {
    if (rows * kDv > kUnits * 512) {
      sum_pieces<kDv, kLoads, 2 * kUnits>(rows, pieces, read, done);
      return;
    }
  }
  constexpr int kBatch = kLoads / kUnits;
  if (kBatch >= 4 && pieces <= kBatch / 2) {
    sum_pieces_in_units<kDv, kUnits, kBatch / 2>(rows, pieces, read, done);
  } else {
    sum_pieces_in_units<kDv, kUnits, kBatch>(rows, pieces, read, done);
  }
}

// sum_pieces' read of a piece's record in L2 (split_kv.h's format: `rows` rows of kDv values, then their
// LSEs; record_floats apart, 32-bit offsets): the row's LSE and its 4 values at col.
template <int kDv>
__device__ __forceinline__ void read_record_unit(const float* tile_records, int record_floats, int rows,
                                                 int piece, int row, int col, float& lse, float4& x) {
  const float* record = tile_records + piece * record_floats;
  lse = __ldcg(record + rows * kDv + row);
  x = __ldcg(reinterpret_cast<const float4*>(record + row * kDv + col));
}

// The combine of a split tile's `pieces` records (split_kv.h's) by the warpgroup that completed it, and the
// tile's store (forward_config.h NARROW_COMBINE): sum_pieces over the records through L2, where split_kv.h's
// combine (warp 0 alone holding the 8 rows) takes a round trip per four pieces at dv = 128, per two at dv =
// 256. O goes to its buffer (rows past s.rows are past the queries: the TMA store clips them).
template <class Config>
__device__ __forceinline__ void combine_narrow_pieces(const ForwardKernelParams& p,
                                                      const SharedPipeline<Config>& pipe, const WorkTile& w,
                                                      int packed_first, const float* tile_records,
                                                      int pieces) {
  constexpr int kDv = Config::kHeadDimV;
  static_assert(Config::kChunkCols == 64 && kDv % 64 == 0, "a unit's 4 columns inside one 16-byte unit");
  const SplitKV& s = p.split_kv;
  const int record_floats = static_cast<int>(split_kv_record_floats(s.rows, kDv));  // (32-bit offsets)
  claim_output_buffer<Config>(0);  // the previous tile's store has read O's buffer
  sum_pieces<kDv, 16 / Config::kCtasPerSm>(
      s.rows, pieces,
      [&](int piece, int row, int col, float& lse, float4& x) {
        read_record_unit<kDv>(tile_records, record_floats, s.rows, piece, row, col, lse, x);
      },
      [&](PieceSum& sum, int row, int col) { sum.store(p, pipe, w, packed_first + row, row, col); });
  issue_output_store<Config>(p, pipe, w, 0, pipe.o(0), RingPosition<Config::kStages>{});
}

// CLUSTER_COMBINE (forward_config.h; the launch's pieces of a tile are clusters, one item per CTA): where the
// cluster has a CTA per row of the tile (spread_rows), row j is summed by the CTA of rank j (its owner), so
// that each sum is a short one (one unit a thread at dv = 128) and the cluster's CTAs do at once what its
// first alone did (session 53: one K/V head of 8 rows at 4000 / 16100 keys 0.91 / 0.87 of the time); else the
// first CTA owns every row. (Rows dealt round-robin over fewer CTAs, row j to rank j % cluster_size, read
// 1.01-1.04 of the time where clusters of 2-3 CTAs held 4 rows, whose sums were one round already.)
__device__ __forceinline__ bool spread_rows(const SplitKV& s) { return s.cluster_size >= s.rows; }
__device__ __forceinline__ int row_owner(const SplitKV& s, int row) { return spread_rows(s) ? row : 0; }
// The rows the CTA of rank `rank` owns, and its owned row `local` (0, 1, ...) as the tile's row.
__device__ __forceinline__ int owned_rows(const SplitKV& s, int rank) {
  return spread_rows(s) ? (rank < s.rows ? 1 : 0) : (rank == 0 ? s.rows : 0);
}
__device__ __forceinline__ int owned_row(const SplitKV& s, int rank, int local) {
  return spread_rows(s) ? rank : local;
}
// A slot (cluster_slot_bytes) holds the rows its CTA owns in the record's order, then their LSEs: one row
// where the rows are spread (so that a CTA's slots hold more pieces: ForwardConfig cluster_slots), every row
// else.
__device__ __forceinline__ int slot_rows(const SplitKV& s) { return spread_rows(s) ? 1 : s.rows; }
__device__ __forceinline__ int slot_row(const SplitKV& s, int row) { return spread_rows(s) ? 0 : row; }
// The bytes the CTA of rank `rank` receives on its cluster_full: every piece's values and LSEs of its rows.
template <class Config>
__device__ __forceinline__ std::uint32_t owner_bytes(const SplitKV& s, int rank) {
  return static_cast<std::uint32_t>(s.cluster_size * owned_rows(s, rank) * (Config::kHeadDimV + 1) * 4);
}

// The piece's record (split_kv.h's format: its rows of O^T normalised by its own row sums, then their LSEs),
// each row by st.async into slot `rank` (this CTA's in the cluster) of the row's owner, completing its bytes
// on the owner's cluster_full (forward_kernel expected them), at the row's place in the slot (slot_row). ot:
// this thread's O^T values (the layout: rows column0 + e, columns 64 t + key_lane + 8 h); lse_lane: the
// thread that sends its rows' LSEs.
template <class Config, int kVTiles>
__device__ __forceinline__ void send_piece_record(const SharedPipeline<Config>& pipe, const SplitKV& s,
                                                  int rank, const float (&ot)[kVTiles][4],
                                                  const RowFinal& final_rows, int column0, int key_lane,
                                                  bool lse_lane) {
  constexpr int kDv = Config::kHeadDimV;
  // The cluster barrier that every thread arrived at after its CTA's thread 0 initialised cluster_full
  // (forward_kernel): long complete by now.
  ptx::barrier_cluster_wait();
  const int rows_a_slot = slot_rows(s);
  const std::uint32_t slot = pipe.cluster_record(rank, cluster_slot_bytes(rows_a_slot, kDv));
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const int row = column0 + e;
    if (row >= s.rows) continue;
    const auto owner = static_cast<std::uint32_t>(row_owner(s, row));
    const std::uint32_t to = ptx::mapa_shared(slot, owner);
    const std::uint32_t full = ptx::mapa_shared(pipe.cluster_full(), owner);
    const int place = slot_row(s, row);
#pragma unroll
    for (int t = 0; t < kVTiles; ++t) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        ptx::st_async_b32(to + (place * kDv + 64 * t + key_lane + 8 * h) * 4,
                          ot[t][2 * h + e] * final_rows.scale[e], full);
      }
    }
    if (lse_lane) ptx::st_async_b32(to + (rows_a_slot * kDv + place) * 4, final_rows.lse[e], full);
  }
}

// A row owner, once its cluster_full completed (every piece's values of its rows in its slots): sum_pieces
// over the slots in key order, of the rows it owns; each row then stored into O (one cluster a tile) or,
// where the tile has several clusters (s.groups), into the cluster's record group_record (split_kv.h's
// format) for the tile's combine through L2.
template <class Config>
__device__ __forceinline__ void combine_owned_rows(const ForwardKernelParams& p,
                                                   const SharedPipeline<Config>& pipe, const WorkTile& w,
                                                   int packed_first, int rank, float* group_record) {
  constexpr int kDv = Config::kHeadDimV;
  static_assert(Config::kChunkCols == 64 && kDv % 64 == 0, "a unit's 4 columns inside one 16-byte unit");
  const SplitKV& s = p.split_kv;
  const int rows_a_slot = slot_rows(s);
  const std::uint32_t slot_bytes = cluster_slot_bytes(rows_a_slot, kDv);
  const std::uint32_t slots = pipe.cluster_record(0, slot_bytes);
  sum_pieces<kDv>(
      owned_rows(s, rank), s.cluster_size,
      [&](int piece, int local, int col, float& lse, float4& x) {
        const int place = slot_row(s, owned_row(s, rank, local));
        const std::uint32_t slot = slots + piece * slot_bytes;
        lse = __uint_as_float(ptx::ld_shared_b32(slot + (rows_a_slot * kDv + place) * 4));
        const uint4 v = ptx::ld_shared_v4_b32(slot + (place * kDv + col) * 4);
        x = make_float4(__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                        __uint_as_float(v.w));
      },
      [&](PieceSum& sum, int local, int col) {
        const int row = owned_row(s, rank, local);
        if (group_record != nullptr) {
          sum.record<kDv>(group_record, s.rows, row, col);
        } else {
          sum.store_row<Config>(p, w, packed_first + row, col);
        }
      });
}

// Two levels: the last owner of rank `rank` among the tile's clusters to arrive sums the `groups` cluster
// records of its rows through L2 and stores them into O.
template <class Config>
__device__ __forceinline__ void combine_owned_records(const ForwardKernelParams& p, const WorkTile& w,
                                                      int packed_first, int rank, const float* tile_records) {
  constexpr int kDv = Config::kHeadDimV;
  const SplitKV& s = p.split_kv;
  const int record_floats = static_cast<int>(split_kv_record_floats(s.rows, kDv));  // (32-bit offsets)
  sum_pieces<kDv>(
      owned_rows(s, rank), s.groups,
      [&](int piece, int local, int col, float& lse, float4& x) {
        read_record_unit<kDv>(tile_records, record_floats, s.rows, piece, owned_row(s, rank, local), col, lse,
                              x);
      },
      [&](PieceSum& sum, int local, int col) {
        sum.store_row<Config>(p, w, packed_first + owned_row(s, rank, local), col);
      });
}

// Owner `rank`'s arrival counter of a tile (split_kv_plan.h kArrivalCountersPerTile).
__device__ __forceinline__ int* owner_arrivals(const SplitKV& s, int tile, int rank) {
  return tile_arrivals(s, tile * kArrivalCountersPerTile + rank);
}
static_assert(kArrivalCountersPerTile >= kNarrowRowsMax && kPortableClusterSize >= kNarrowRowsMax,
              "two levels (clusters of the portable size) spread the rows: an arrival counter per row");

// The narrow tile's consumer loop (kPaged: the producer's, nothing here differs).
template <class Config, bool kPaged>
__device__ void narrow_consumer_loop(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe) {
  static_assert(Config::kNarrowRows && Config::kSeparateO && !Config::kOOverV && !Config::kDecodedHandoff &&
                    Config::kClusterM == 1 && Config::kBlockN % 64 == 0,
                "the narrow tile assumes O in its own buffer, one ring, the index handoff, 64-key M tiles");
  constexpr int kKeyTiles = Config::kBlockN / 64;
  constexpr int kVTiles = Config::kHeadDimV / 64;
  constexpr int kDv = Config::kHeadDimV;
  const int thread = threadIdx.x % 128;
  const int lane = thread % 32;
  const int warp = thread / 32;
  const bool warp_leader = lane == 0;
  const int column0 = 2 * (lane % 4);  // this thread's two rows of the tile (columns of S^T and O^T)
  const float score_log2 = p.score_log2;

  RingPosition<Config::kStages> ring;     // K's
  RingPosition<Config::kStages> pv_ring;  // V's (the same positions, a block behind)
  std::uint32_t q_phase = 0;
  int parity = 0;  // of the exchange and P^T buffers, running across tiles

  for (;;) {
    const int item = receive_tile(pipe.tile_handoff(), q_phase);  // one index per Q so far
    if (!is_work<Config>(p, item)) break;
    const WorkTile w = work_tile<Config>(p, item);
    const KeyBlockRange range = work_key_blocks<Config>(p, item, w);
    ptx::mbarrier_wait_parity(pipe.q_full(0), q_phase);
    q_phase ^= 1;
    const int n_blocks = range.end - range.begin;
    const bool split = splits_keys<Config>(p, item);
    const float slope_s = p.alibi_slopes != nullptr
                              ? p.alibi_slopes[w.batch * p.alibi_batch_stride + w.head] * p.alibi_to_s
                              : 0.f;
    const bool transforms = p.softcap_in != 0.f || slope_s != 0.f;
    // This thread's rows: their query positions and visible keys (packed GQA: packed row >> pack_shift).
    const int packed_first = w.m_block * Config::kBlockM;
    int position[2];
    BasicKeyRange<int> visible[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      position[e] = (packed_first + column0 + e) >> p.pack_shift;
      visible[e] = visible_keys_of(p, w, position[e]);
    }
    // The first key of this thread's S^T rows in a block: + 64 t + 8 h for M tile t, half h.
    const int key_lane = 16 * warp + lane / 4;

    float ot[kVTiles][4];
#pragma unroll
    for (int t = 0; t < kVTiles; ++t) {
#pragma unroll
      for (int j = 0; j < 4; ++j) ot[t][j] = 0.f;
    }
    float row_max[2] = {-INFINITY, -INFINITY};  // raw score units, the whole row's (exchanged)
    float row_sum[2] = {0.f, 0.f};              // this thread's keys' share

    if (n_blocks == 0) {
      ptx::mbarrier_arrive_if(pipe.q_empty(0), warp_leader);
    } else {
      // Key block i's S^T (the producer's order: the last key block first), its transforms and mask, and the
      // exchange of its row maxima (whose barrier opens the previous block's P^T to the GEMM after it).
      auto scores = [&](int i, float(&st)[kKeyTiles][4], float(&block_max)[2]) {
        const int n = range.end - 1 - i;
        ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
        ptx::wgmma_fence();
        gemm_narrow_s<Config>(st, pipe.q(), pipe.k(ring.stage));
        ptx::wgmma_commit_group();
        const bool masked = rows_block_needs_mask<Config>(p, w, n, packed_first, kNarrowRowsMax);
        const std::uint32_t k_empty = pipe.k_empty(ring.stage);
        ring.advance();
        ptx::wgmma_wait_group<0>();
#pragma unroll
        for (int t = 0; t < kKeyTiles; ++t) ptx::wgmma_fence_operand(st[t]);
        pipe.release_kv_if(k_empty, warp_leader);
        ptx::mbarrier_arrive_if(pipe.q_empty(0), warp_leader && i == n_blocks - 1);  // Q's last read
        const int key0 = n * Config::kBlockN + key_lane;
        if (transforms || masked) {
#pragma unroll
          for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int key = key0 + 64 * t + 8 * (j / 2);
              const int e = j % 2;
              float x = st[t][j];
              if (p.softcap_in != 0.f) x = ptx::tanh_approx_f32(x * p.softcap_in);
              if (slope_s != 0.f) {
                x = fmaf(-slope_s, fabsf(static_cast<float>(position[e] + w.seqlen_k - w.seqlen_q - key)), x);
              }
              if (masked && (key < visible[e].first || key > visible[e].last)) x = -INFINITY;
              st[t][j] = x;
            }
          }
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          block_max[e] = st[0][e];
#pragma unroll
          for (int t = 0; t < kKeyTiles; ++t)
            block_max[e] = fmaxf(block_max[e], fmaxf(st[t][e], st[t][2 + e]));
        }
        exchange_columns(block_max, pipe.narrow_exchange(parity), warp, lane,
                         [](float a, float b) { return fmaxf(a, b); });
      };
      // The block's probabilities against the rows' new maxima, into P^T's buffer `parity` (fenced for the
      // GEMM that the next barrier opens it to); the factor of the rows' previous sums and O^T.
      auto probabilities = [&](const float(&st)[kKeyTiles][4], const float(&block_max)[2],
                               float(&correction)[2]) {
        float reference[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float next = fmaxf(row_max[e], block_max[e]);
          // A row that has seen no visible key yet keeps 0 as its reference (its probabilities are 0).
          reference[e] = next == -INFINITY ? 0.f : next * score_log2;
          correction[e] = ptx::ex2_approx_ftz_f32(row_max[e] * score_log2 - reference[e]);  // -inf -> 0
          row_max[e] = next;
        }
        std::uint32_t packed[kKeyTiles][2];
        float block_sum[2] = {0.f, 0.f};
#pragma unroll
        for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const float p0 = ptx::ex2_approx_ftz_f32(fmaf(st[t][2 * h], score_log2, -reference[0]));
            const float p1 = ptx::ex2_approx_ftz_f32(fmaf(st[t][2 * h + 1], score_log2, -reference[1]));
            block_sum[0] += p0;
            block_sum[1] += p1;
            packed[t][h] = pack_pair<typename Config::Element>(p0, p1);
          }
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) row_sum[e] = fmaf(row_sum[e], correction[e], block_sum[e]);
        store_transposed<kKeyTiles>(pipe.narrow_p(parity), 1024, packed, warp, lane);
        ptx::fence_proxy_async_shared_cta();
      };
      // A dense cache read through a map over all its rows (CacheLengths in the dense kernel): the piece's
      // first block (the producer's order), when it is the sequence's last and ends past its last key, holds
      // the cache's rows past the sequence there, anything at all (NaN too). K's are masked; V's are zeroed
      // before its GEMM, where P's zeros would still meet them (0 x NaN), as TMA's zero fill does for the
      // per-sequence maps. (A paged cache's are zeroed by its producer: producer.h kTailBoxes.)
      bool zero_v_tail = false;
      if constexpr (Config::kCacheLengths && !kPaged) {
        zero_v_tail = p.cache.active && range.end * Config::kBlockN > w.seqlen_k;  // (active: dense here)
      }
      auto gemm_o = [&](std::uint32_t pt, bool first_block) {
        ptx::mbarrier_wait_parity(pipe.v_full(pv_ring.stage), pv_ring.phase);
        if (zero_v_tail && first_block) {
          zero_rows_from<Config>(pipe.v(pv_ring.stage), w.seqlen_k - (range.end - 1) * Config::kBlockN);
        }
        ptx::wgmma_fence();
        gemm_narrow_o<Config>(ot, pipe.v(pv_ring.stage), pt);
        ptx::wgmma_commit_group();
      };
      auto finish_o = [&] {
        ptx::wgmma_wait_group<0>();
#pragma unroll
        for (int t = 0; t < kVTiles; ++t) ptx::wgmma_fence_operand(ot[t]);
        pipe.release_kv_if(pipe.v_empty(pv_ring.stage), warp_leader);
        pv_ring.advance();
      };

      float st[kKeyTiles][4], block_max[2], correction[2];
      scores(0, st, block_max);
      probabilities(st, block_max, correction);         // (O^T is still 0)
      std::uint32_t pv_buffer = pipe.narrow_p(parity);  // the P^T the next O^T GEMM reads
      parity ^= 1;
      for (int i = 1; i < n_blocks; ++i) {
        scores(i, st, block_max);
        gemm_o(pv_buffer, i == 1);
        probabilities(st, block_max, correction);
        finish_o();
#pragma unroll
        for (int t = 0; t < kVTiles; ++t) {
#pragma unroll
          for (int j = 0; j < 4; ++j) ot[t][j] *= correction[j % 2];
        }
        pv_buffer = pipe.narrow_p(parity);
        parity ^= 1;
      }
      // The last block's P^T, complete once every thread passed the barrier.
      ptx::bar_sync(kNarrowExchange, 128);
      gemm_o(pv_buffer, n_blocks == 1);
      finish_o();
      exchange_columns(row_sum, pipe.narrow_exchange(2), warp, lane, [](float a, float b) { return a + b; });
    }

    // The rows' normalisation (split: without the sink, which the combine counts once).
    SoftmaxRows rows;
#pragma unroll
    for (int e = 0; e < 2; ++e) rows.max[e] = row_max[e], rows.sum[e] = row_sum[e];
    const RowFinal final_rows = softmax_finalize<false, Config::kFastFinalize>(
        rows, score_log2, p.sink != nullptr && !split ? p.sink + w.head : nullptr);

    if (split) {
      const SplitKV& s = p.split_kv;
      const PieceRecords records = piece_records<kDv>(s, item);
      if constexpr (Config::kClusterPieces) {
        if (s.clustered()) {
          // The tile's pieces are clusters of cluster_size CTAs (one item per CTA): each CTA owning rows of
          // the tile receives every piece's values of them and sums them, into O (one cluster) or into the
          // cluster's record of the tile's `groups` (the first ones of the tile's records), whose rows the
          // last owner of this rank to arrive sums through L2.
          const int rank = static_cast<int>(ptx::cluster_ctarank());
          send_piece_record<Config>(pipe, s, rank, ot, final_rows, column0, key_lane, warp == 0 && lane < 4);
          if (owned_rows(s, rank) == 0) continue;
          ptx::mbarrier_wait_parity(pipe.cluster_full(), 0);
          // (Several clusters a tile are of the portable size: the cluster's place among the tile's by a
          // shift.)
          const int group = records.piece / kPortableClusterSize;
          combine_owned_rows<Config>(
              p, pipe, w, packed_first, rank,
              s.groups == 1 ? nullptr : records.tile_records + group * split_kv_record_floats(s.rows, kDv));
          if (s.groups > 1 &&
              completes_pieces([&] { return owner_arrivals(s, records.tile, rank); }, s.groups, kEpilogue)) {
            combine_owned_records<Config>(p, w, packed_first, rank, records.tile_records);
          }
          continue;
        }
      }
      // The piece's record (split_kv.h's format: O's rows normalised, then the rows' LSE), from O^T.
      float* const mine = records.mine;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int row = column0 + e;
        if (row >= s.rows) continue;
#pragma unroll
        for (int t = 0; t < kVTiles; ++t) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            __stcg(mine + row * kDv + 64 * t + key_lane + 8 * h, ot[t][2 * h + e] * final_rows.scale[e]);
          }
        }
        if (warp == 0 && lane < 4) __stcg(mine + s.rows * kDv + row, final_rows.lse[e]);
      }
      // The warpgroup whose arrival completes the tile's records combines them and stores the tile.
      if (!completes_pieces([&] { return tile_arrivals(s, records.tile); }, s.splits, kEpilogue)) continue;
      // (s.rows <= kNarrowRowsMax holds for every narrow launch: split_kv.h's combine below is never taken
      // with NARROW_COMBINE, but compiled in it keeps ptxas's schedule of the key-block loop above. Without
      // it that loop grew by 75, 28 and 40 instructions at dv 128, 256 and 64 (local cuobjdump, session 52)
      // and a d256 16/8 decode read 1.02-1.04 of the time.)
      // (The kernel of two CTAs a SM leaves it out: at 128 registers a thread it spilled 400 bytes.)
      if (Config::kCtasPerSm == 2 || (FLASHATTN_SM90_NARROW_COMBINE != 0 && s.rows <= kNarrowRowsMax)) {
        combine_narrow_pieces<Config>(p, pipe, w, packed_first, records.tile_records, s.splits);
      } else if constexpr (Config::kCtasPerSm == 1) {
        float o[Config::kPVN / 2];
        RowFinal combined;
        combine_split_pieces<Config>(p, w.head, records.tile_records, s.splits, o, combined);
        claim_output_buffer<Config>(0);
        store_output<Config>(p, pipe, w, 0, o, combined, RingPosition<Config::kStages>{});
      }
      continue;
    }

    claim_output_buffer<Config>(0);
    std::uint32_t packed_o[kVTiles][2];
#pragma unroll
    for (int t = 0; t < kVTiles; ++t) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        packed_o[t][h] = pack_pair<typename Config::Element>(ot[t][2 * h] * final_rows.scale[0],
                                                             ot[t][2 * h + 1] * final_rows.scale[1]);
      }
    }
    store_transposed<kVTiles>(pipe.o(0), Config::kOChunkStride, packed_o, warp, lane);
    issue_output_store<Config>(p, pipe, w, 0, pipe.o(0), RingPosition<Config::kStages>{});
    if (p.lse != nullptr && warp == 0 && lane < 4) {
#pragma unroll
      for (int e = 0; e < 2; ++e) store_packed_row_lse(p, w, packed_first + column0 + e, final_rows.lse[e]);
    }
  }
  if (thread == 0) ptx::cp_async_bulk_wait_group<0>();
}

}  // namespace flashattn::detail::cuda_sm90
