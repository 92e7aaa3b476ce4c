// The FlashAttention-2 backward main kernel for compute capability 8.0+.
//
// A CTA owns one key tile (kBlockN keys of one kv head of one sequence) and walks
// every query tile that sees it, for every q head of the GQA group, so dK and dV
// of the group are summed in registers without atomics or expanded copies:
//   S^T  = K Q^T,  P^T = exp2(S^T * scale_log2 - LSE_log2)   (from the forward's LSE)
//   dV  += P~^T dO                  (P~ = P * dropout keep / (1 - p))
//   dP^T = V dO^T,  dS^T = P^T o (dP~^T - D)   (softcap: * (1 - tanh^2))
//   dK  += dS^T Q,  dQ (fp32 scratch) += dS K  (atomics; ordered per query tile when deterministic)
// The warps split each key row's dK / dV columns (BackwardConfig), so a warp forms
// S^T / dP^T for part of the query tile only and the rows of P~^T and dS^T it needs
// for dV, dK come from the other warps through shared memory (dS^T also feeds dQ).
// Q, dO, LSE and D of the next query tile are copied while the current one is computed.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common/params.h"
#include "common/philox.h"
#include "cuda/ptx/ptx.h"
#include "cuda/sm80/backward_config.h"
#include "cuda/sm80/smem_layout.h"
#include "cuda/sm80/warp_mma.h"

namespace flashattn::detail::cuda_sm80 {

// Query rows [begin, end) (in tiles of kBlockM) that see any key of the key tile at n0.
// Both ends are non-decreasing in n0 for the key tiles of a sequence, which is what
// the deterministic dQ ordering relies on.
struct QueryTileRange {
  int begin;
  int end;
};

template <class Cfg>
__device__ __forceinline__ QueryTileRange query_tile_range(const MaskParams& mask, std::int64_t n0,
                                                           std::int64_t sq, std::int64_t sk) {
  if (n0 >= sk || sq <= 0) return QueryTileRange{0, 0};
  const std::int64_t shift = sk - sq;
  // Key j is seen by queries [j - shift - right, j - shift + left].
  std::int64_t lo = mask.window_right >= 0 ? n0 - shift - mask.window_right : 0;
  const std::int64_t last_key = (n0 + Cfg::kBlockN < sk ? n0 + Cfg::kBlockN : sk) - 1;
  std::int64_t hi = mask.window_left >= 0 ? last_key - shift + mask.window_left : sq - 1;
  if (hi < 0) return QueryTileRange{0, 0};
  if (lo < 0) lo = 0;
  if (hi > sq - 1) hi = sq - 1;
  if (lo > hi) return QueryTileRange{0, 0};
  return QueryTileRange{static_cast<int>(lo / Cfg::kBlockM), static_cast<int>(hi / Cfg::kBlockM + 1)};
}

// Deterministic mode: the number of key tiles before n_block that add into query
// tile m_block (they do so in key-tile order). The key tiles adding into a query
// tile are contiguous, so this is n_block minus the first of them.
template <class Cfg>
__device__ __forceinline__ int dq_turn(const MaskParams& mask, int m_block, int n_block, std::int64_t sq,
                                       std::int64_t sk) {
  int lo = 0, hi = n_block;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (query_tile_range<Cfg>(mask, static_cast<std::int64_t>(mid) * Cfg::kBlockN, sq, sk).end > m_block) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return n_block - lo;
}

// Global -> shared copy of a tile of rows a fixed stride apart (cp.async, 16 bytes per thread per
// step); rows past valid_rows and columns past valid_cols are zero-filled without reading memory.
template <class Cfg, class Tile, int kRows>
__device__ __forceinline__ void backward_load_tile(typename Cfg::Element* smem,
                                                   const typename Cfg::Element* row0, std::int64_t row_stride,
                                                   int valid_rows, int valid_cols, int thread) {
  constexpr int kChunks = kRows * Cfg::kChunksPerRow;
#pragma unroll
  for (int step = 0; step < (kChunks + Cfg::kThreads - 1) / Cfg::kThreads; ++step) {
    const int c = thread + step * Cfg::kThreads;
    if (kChunks % Cfg::kThreads != 0 && c >= kChunks) break;
    const int row = c / Cfg::kChunksPerRow;
    const int chunk = c % Cfg::kChunksPerRow;
    const bool valid = row < valid_rows && chunk * Cfg::kChunk < valid_cols;
    const auto* src = valid ? row0 + row * row_stride + chunk * Cfg::kChunk : row0;
    ptx::cp_async_cg_16(ptx::cvta_to_shared(smem + Tile::chunk_offset(row, chunk)), src, valid);
  }
}

template <class Tile>
struct TileRows;
template <int kRows, int kCols>
struct TileRows<SwizzledTile<kRows, kCols>> {
  static constexpr int value = kRows;
};

// Byte offsets of one lane's ldmatrix rows in a swizzled tile, walking it 16 columns (two chunks) at
// a time: the lane reads row lane_row (+ multiples of 8) and chunk 2 c + half. Inside a panel the XOR
// depends on c only through c mod kPhases, so kPhases offsets per lane, computed once, turn every
// address into base + offset + compile-time immediate (recomputed per access, the compiler hoisted
// one register per distinct address out of the loop and spilled at d = 128).
template <class Tile>
struct LanePhases {
  static constexpr int kPhases = Tile::kChunksPerPanel / 2;
  static constexpr int kPanelBytes = 2 * Tile::kPanelCols * TileRows<Tile>::value;
  std::uint32_t phase[kPhases];

  __device__ __forceinline__ LanePhases(int lane_row, int half) {
#pragma unroll
    for (int c = 0; c < kPhases; ++c) phase[c] = 2u * Tile::chunk_offset(lane_row, 2 * c + half);
  }
  // Bytes to (lane_row + row_offset, chunk 2 c + half); row_offset a multiple of 8, c compile-time.
  __device__ __forceinline__ std::uint32_t at(int row_offset, int c) const {
    return phase[c % kPhases] + (c / kPhases) * kPanelBytes + row_offset * (2 * Tile::kPanelCols);
  }
};

// The same for a warp's own slice of kPairs chunk pairs starting at pair0, which is known only at run
// time (it depends on the warp): one offset per pair, so the pair index stays a compile-time
// register index (a run-time index into LanePhases::phase would put the array in local memory).
template <class Tile, int kPairs>
struct SliceOffsets {
  std::uint32_t offset[kPairs];

  __device__ __forceinline__ SliceOffsets(int lane_row, int half, int pair0) {
#pragma unroll
    for (int c = 0; c < kPairs; ++c) offset[c] = 2u * Tile::chunk_offset(lane_row, 2 * (pair0 + c) + half);
  }
  // Bytes to (lane_row + row_offset, chunk 2 (pair0 + c) + half); row_offset a multiple of 8.
  __device__ __forceinline__ std::uint32_t at(int row_offset, int c) const {
    return offset[c] + row_offset * (2 * Tile::kPanelCols);
  }
};

// The two lane patterns of m16n8k16 operands read with ldmatrix.x4: rows 0-15 with chunk halves by
// lane bit 4 (A fragments; B read transposed) ...
__device__ __forceinline__ int lane_row_a(int lane) { return (lane & 7) + ((lane >> 3) & 1) * 8; }
__device__ __forceinline__ int lane_half_a(int lane) { return lane >> 4; }
// ... and rows 0-7 / 8-15 by lane bit 4 with chunk halves by bit 3 (B fragments; A read transposed).
__device__ __forceinline__ int lane_row_b(int lane) { return (lane & 7) + (lane >> 4) * 8; }
__device__ __forceinline__ int lane_half_b(int lane) { return (lane >> 3) & 1; }

template <class Tile>
__device__ __forceinline__ LanePhases<Tile> phases_a(int lane) {
  return LanePhases<Tile>(lane_row_a(lane), lane_half_a(lane));
}
template <class Tile>
__device__ __forceinline__ LanePhases<Tile> phases_b(int lane) {
  return LanePhases<Tile>(lane_row_b(lane), lane_half_b(lane));
}

// acc (16 x kN) += A B^T: A = 16 rows (from a_row0) of a swizzled tile, B = rows [b_row0, b_row0 + kN)
// of another, both with the reduction dimension contiguous (S^T = K Q^T). Shared addresses in bytes.
template <typename Element, class ATile, class BTile, int kKSteps, int kN>
__device__ __forceinline__ void warp_gemm_nt(float (&acc)[kN / 8][4], std::uint32_t a_smem,
                                             const LanePhases<ATile>& a_phases, int a_row0,
                                             std::uint32_t b_smem, const LanePhases<BTile>& b_phases,
                                             int b_row0) {
#pragma unroll
  for (int k_step = 0; k_step < kKSteps; ++k_step) {
    std::uint32_t a[4];
    ptx::ldmatrix_x4(a, a_smem + a_phases.at(a_row0, k_step));
#pragma unroll
    for (int n_pair = 0; n_pair < kN / 16; ++n_pair) {
      std::uint32_t b[4];
      ptx::ldmatrix_x4(b, b_smem + b_phases.at(b_row0 + 16 * n_pair, k_step));
      mma_16816<Element>(acc[2 * n_pair], a, b[0], b[1]);
      mma_16816<Element>(acc[2 * n_pair + 1], a, b[2], b[3]);
    }
  }
}

// acc (16 x kN) += A B: A = 16 rows (from a_row0) of a swizzled tile with the reduction dimension
// contiguous (P~^T, dS^T: keys x queries), B = the rows [0, 16 kKSteps) of another, its columns the
// warp's slice (dO, Q: queries x d; read transposed).
template <typename Element, class ATile, class BTile, int kKSteps, int kN>
__device__ __forceinline__ void warp_gemm_nn(float (&acc)[kN / 8][4], std::uint32_t a_smem,
                                             const LanePhases<ATile>& a_phases, int a_row0,
                                             std::uint32_t b_smem,
                                             const SliceOffsets<BTile, kN / 16>& b_slice) {
#pragma unroll
  for (int k_step = 0; k_step < kKSteps; ++k_step) {
    std::uint32_t a[4];
    ptx::ldmatrix_x4(a, a_smem + a_phases.at(a_row0, k_step));
#pragma unroll
    for (int n_pair = 0; n_pair < kN / 16; ++n_pair) {
      std::uint32_t b[4];
      ptx::ldmatrix_x4_trans(b, b_smem + b_slice.at(16 * k_step, n_pair));
      mma_16816<Element>(acc[2 * n_pair], a, b[0], b[1]);
      mma_16816<Element>(acc[2 * n_pair + 1], a, b[2], b[3]);
    }
  }
}

// One fp32 pair added to global memory (the dQ accumulator): one vector reduction on sm_90.
__device__ __forceinline__ void add_float2(float* dst, float x, float y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  ptx::red_global_add_v2_f32(dst, x, y);
#else
  atomicAdd(dst, x);
  atomicAdd(dst + 1, y);
#endif
}

template <class Cfg, bool kGeneral>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSm)
    backward_kernel(const __grid_constant__ BackwardKernelArgs args) {
  using Element = typename Cfg::Element;
  using QTile = SwizzledTile<Cfg::kBlockM, Cfg::kHeadDim>;
  using KTile = SwizzledTile<Cfg::kBlockN, Cfg::kHeadDim>;
  using DsTile = SwizzledTile<Cfg::kBlockN, Cfg::kBlockM>;  // P~^T and dS^T (keys x queries)
  constexpr int kMTiles = Cfg::kQueriesPerWarp / 8;         // n-tiles of the warp's S^T (queries)
  constexpr int kDTiles = Cfg::kColsPerWarp / 8;            // n-tiles of the warp's dK / dV slice
  constexpr float kLog2e = 1.4426950408889634f;

  extern __shared__ __align__(128) unsigned char smem_bytes[];
  Element* k_smem = reinterpret_cast<Element*>(smem_bytes);
  Element* v_smem = k_smem + Cfg::kSmemK;
  Element* q_smem = v_smem + Cfg::kSmemK;                  // kStages tiles
  Element* do_smem = q_smem + Cfg::kStages * Cfg::kSmemQ;  // kStages tiles
  Element* ds_smem = do_smem + Cfg::kStages * Cfg::kSmemQ;
  Element* p_smem = ds_smem + Cfg::kSmemDs;
  float* lse_smem = reinterpret_cast<float*>(p_smem + Cfg::kSmemDs);  // kStages x kBlockM
  float* delta_smem = lse_smem + Cfg::kStages * Cfg::kBlockM;

  const BackwardParams& p = args.p;
  const int thread = threadIdx.x;
  const int warp = thread / 32;
  const int lane = thread % 32;
  const int key_group = warp % Cfg::kKeyGroups;  // keys [16 key_group, +16)
  const int slice = warp / Cfg::kKeyGroups;      // queries of S^T, columns of dK / dV
  const int q_base = slice * Cfg::kQueriesPerWarp;
  const int col_base = slice * Cfg::kColsPerWarp;
  const std::int64_t group = p.heads / p.heads_kv;
  const std::uint32_t k_addr = ptx::cvta_to_shared(k_smem), v_addr = ptx::cvta_to_shared(v_smem);
  const std::uint32_t q_addr0 = ptx::cvta_to_shared(q_smem), do_addr0 = ptx::cvta_to_shared(do_smem);
  const std::uint32_t ds_addr = ptx::cvta_to_shared(ds_smem), p_addr = ptx::cvta_to_shared(p_smem);
  const LanePhases<KTile> k_phases_a = phases_a<KTile>(lane);
  const LanePhases<QTile> q_phases_b = phases_b<QTile>(lane);
  const LanePhases<DsTile> ds_phases_a = phases_a<DsTile>(lane);
  // B of dV / dK: rows of dO / Q, the warp's column slice, read transposed.
  const SliceOffsets<QTile, Cfg::kColsPerWarp / 16> q_slice(lane_row_a(lane), lane_half_a(lane),
                                                            col_base / 16);
  // dQ task of this warp: rows [dq_row0, +16) x columns [dq_col0, +kDqCols) of the query tile.
  const int dq_row0 = (warp % Cfg::kDqRowTiles) * 16;
  const int dq_col0 = (warp / Cfg::kDqRowTiles) * Cfg::kDqCols;
  // A of dQ: dS (queries x keys) is the transpose of the stored dS^T tile; B: K rows, the task's columns.
  const SliceOffsets<DsTile, 1> ds_task(lane_row_b(lane), lane_half_b(lane), dq_row0 / 16);
  const SliceOffsets<KTile, Cfg::kDqCols / 16> k_task(lane_row_a(lane), lane_half_a(lane), dq_col0 / 16);

  for (std::int64_t tile = blockIdx.x; tile < args.total_tiles; tile += gridDim.x) {
    const int n_block = static_cast<int>(tile % args.n_blocks);
    const std::int64_t rest = tile / args.n_blocks;
    const std::int64_t head_kv = rest % p.heads_kv;
    const std::int64_t batch = rest / p.heads_kv;
    const SequenceLengths seq = sequence_lengths(p, batch);
    const std::int64_t allocated_k =
        p.cu_seqlens_k ? p.cu_seqlens_k[batch + 1] - p.cu_seqlens_k[batch] : p.seqlen_k;
    const int n0 = n_block * Cfg::kBlockN;
    if (n0 >= allocated_k) continue;
    const QueryTileRange range = query_tile_range<Cfg>(p.mask, n0, seq.q, seq.k);
    const int m_count = range.end - range.begin;
    const std::int64_t iterations = m_count * group;
    const std::int64_t shift = seq.k - seq.q;

    // K and V of the tile, with the first query tile's operands in the same copy group.
    const int k_rows =
        static_cast<int>(seq.k - n0 < Cfg::kBlockN ? (seq.k - n0 > 0 ? seq.k - n0 : 0) : Cfg::kBlockN);
    if (k_rows > 0) {
      backward_load_tile<Cfg, KTile, Cfg::kBlockN>(
          k_smem, static_cast<const Element*>(p.k.data) + key_offset(p, p.k, seq, batch, n0, head_kv),
          p.k.row_stride, k_rows, static_cast<int>(p.head_dim), thread);
      backward_load_tile<Cfg, KTile, Cfg::kBlockN>(
          v_smem, static_cast<const Element*>(p.v.data) + key_offset(p, p.v, seq, batch, n0, head_kv),
          p.v.row_stride, k_rows, static_cast<int>(p.head_dim_v), thread);
    }

    auto head_of = [&](std::int64_t it) { return head_kv * group + it / m_count; };
    auto m_block_of = [&](std::int64_t it) { return range.begin + static_cast<int>(it % m_count); };
    auto load_query_tile = [&](std::int64_t it, int stage) {
      const std::int64_t head = head_of(it);
      const int m0 = m_block_of(it) * Cfg::kBlockM;
      const int rows = static_cast<int>(seq.q - m0 < Cfg::kBlockM ? seq.q - m0 : Cfg::kBlockM);
      backward_load_tile<Cfg, QTile, Cfg::kBlockM>(
          q_smem + stage * Cfg::kSmemQ,
          static_cast<const Element*>(p.q.data) + query_offset(p.q, seq, batch, m0, head), p.q.row_stride,
          rows, static_cast<int>(p.head_dim), thread);
      backward_load_tile<Cfg, QTile, Cfg::kBlockM>(
          do_smem + stage * Cfg::kSmemQ,
          static_cast<const Element*>(p.dout.data) + query_offset(p.dout, seq, batch, m0, head),
          p.dout.row_stride, rows, static_cast<int>(p.head_dim_v), thread);
      const std::int64_t slot = (batch * p.heads + head) * args.rows_padded + m0;
      constexpr int kVectors = Cfg::kBlockM / 4;  // 16-byte vectors of one row array
      if (thread < 2 * kVectors) {
        const bool is_lse = thread < kVectors;
        const int v = is_lse ? thread : thread - kVectors;
        const float* src = (is_lse ? args.lse_log2 : args.delta) + slot + 4 * v;
        float* dst = (is_lse ? lse_smem : delta_smem) + stage * Cfg::kBlockM + 4 * v;
        ptx::cp_async_cg_16(ptx::cvta_to_shared(dst), src, true);
      }
    };

    float dk[kDTiles][4], dv[kDTiles][4];
#pragma unroll
    for (int t = 0; t < kDTiles; ++t) {
#pragma unroll
      for (int e = 0; e < 4; ++e) dk[t][e] = dv[t][e] = 0.f;
    }

    const float softcap_inverse = p.softcap > 0.f ? 1.f / p.softcap : 0.f;
    const int key_local0 = key_group * 16 + (lane >> 2);  // this lane's keys: +0 and +8

    if (iterations > 0) load_query_tile(0, 0);
    ptx::cp_async_commit_group();
    for (std::int64_t it = 0; it < iterations; ++it) {
      const int stage = static_cast<int>(it % Cfg::kStages);
      ptx::cp_async_wait_group<0>();
      // Copies of tile `it` visible to all; every warp is done with tile it - 1 (its stage, P~^T, dS^T).
      __syncthreads();
      if (it + 1 < iterations) load_query_tile(it + 1, (stage + 1) % Cfg::kStages);
      ptx::cp_async_commit_group();

      const std::int64_t head = head_of(it);
      const int m_block = m_block_of(it);
      const int m0 = m_block * Cfg::kBlockM;
      const std::uint32_t q_tile = q_addr0 + stage * Cfg::kSmemQ * 2;
      const std::uint32_t do_tile = do_addr0 + stage * Cfg::kSmemQ * 2;
      const float* lse_tile = lse_smem + stage * Cfg::kBlockM;
      const float* delta_tile = delta_smem + stage * Cfg::kBlockM;

      // S^T and dP^T of the warp's 16 keys x kQueriesPerWarp queries.
      float st[kMTiles][4], dpt[kMTiles][4];
#pragma unroll
      for (int t = 0; t < kMTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 4; ++e) st[t][e] = dpt[t][e] = 0.f;
      }
      warp_gemm_nt<Element, KTile, QTile, Cfg::kHeadDim / 16, Cfg::kQueriesPerWarp>(
          st, k_addr, k_phases_a, key_group * 16, q_tile, q_phases_b, q_base);
      warp_gemm_nt<Element, KTile, QTile, Cfg::kHeadDim / 16, Cfg::kQueriesPerWarp>(
          dpt, v_addr, k_phases_a, key_group * 16, do_tile, q_phases_b, q_base);

      const bool needs_mask =
          n0 + Cfg::kBlockN > seq.k ||
          (p.mask.window_right >= 0 && n0 + Cfg::kBlockN - 1 - m0 - shift > p.mask.window_right) ||
          (p.mask.window_left >= 0 && n0 - (m0 + Cfg::kBlockM - 1) - shift < -p.mask.window_left);
      [[maybe_unused]] const float alibi_slope =
          kGeneral && p.alibi_slopes != nullptr ? p.alibi_slopes[batch * p.alibi_batch_stride + head] : 0.f;

#pragma unroll
      for (int t = 0; t < kMTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int q_local = q_base + 8 * t + 2 * (lane & 3) + e;
          const std::int64_t i = m0 + q_local;
          const float lse2 = lse_tile[q_local];
          const float delta = delta_tile[q_local];
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            const std::int64_t j = n0 + key_local0 + 8 * r;
            float x = st[t][2 * r + e];
            float prob, dtanh = 1.f;
            if constexpr (kGeneral) {
              x *= p.scale;
              if (p.softcap > 0.f) {
                const float th = tanhf(x * softcap_inverse);
                x = p.softcap * th;
                dtanh = 1.f - th * th;
              }
              if (alibi_slope != 0.f) {
                const std::int64_t distance = i + shift - j;
                x -= alibi_slope * static_cast<float>(distance < 0 ? -distance : distance);
              }
              prob = ptx::ex2_approx_ftz_f32(x * kLog2e - lse2);
            } else {
              prob = ptx::ex2_approx_ftz_f32(x * args.scale_log2 - lse2);
            }
            if (needs_mask) {
              const std::int64_t offset = j - i - shift;
              const bool visible = j < seq.k && (p.mask.window_left < 0 || offset >= -p.mask.window_left) &&
                                   (p.mask.window_right < 0 || offset <= p.mask.window_right);
              if (!visible) prob = 0.f;
            }
            float keep = 1.f;
            if constexpr (kGeneral) {
              if (args.dropout_threshold > 0) {
                const Philox4 draws =
                    dropout_draws(p.dropout_seed, p.dropout_offset, batch * p.heads + head, i, j);
                keep = dropout_lane(draws, j) < args.dropout_threshold ? 0.f : args.dropout_rescale;
              }
            }
            st[t][2 * r + e] = prob * keep;                                         // P~
            dpt[t][2 * r + e] = prob * (dpt[t][2 * r + e] * keep - delta) * dtanh;  // dS
          }
        }
      }

      // P~^T and dS^T into shared memory (row = key, column = query), 32-bit stores.
#pragma unroll
      for (int t = 0; t < kMTiles; ++t) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int offset = DsTile::chunk_offset(key_local0 + 8 * r, q_base / 8 + t) + 2 * (lane & 3);
          *reinterpret_cast<std::uint32_t*>(p_smem + offset) =
              pack_float2<Element>(st[t][2 * r], st[t][2 * r + 1]);
          *reinterpret_cast<std::uint32_t*>(ds_smem + offset) =
              pack_float2<Element>(dpt[t][2 * r], dpt[t][2 * r + 1]);
        }
      }
      __syncthreads();  // P~^T and dS^T complete

      // dV += P~^T dO and dK += dS^T Q over the whole query tile, the warp's column slice.
      warp_gemm_nn<Element, DsTile, QTile, Cfg::kBlockM / 16, Cfg::kColsPerWarp>(
          dv, p_addr, ds_phases_a, key_group * 16, do_tile, q_slice);
      warp_gemm_nn<Element, DsTile, QTile, Cfg::kBlockM / 16, Cfg::kColsPerWarp>(
          dk, ds_addr, ds_phases_a, key_group * 16, q_tile, q_slice);

      int* semaphore = nullptr;
      if (args.dq_semaphore != nullptr) {
        semaphore = args.dq_semaphore + (batch * p.heads + head) * args.m_blocks + m_block;
        if (thread == 0) {
          const int turn = dq_turn<Cfg>(p.mask, m_block, n_block, seq.q, seq.k);
          while (*reinterpret_cast<volatile int*>(semaphore) != turn) {
          }
          __threadfence();
        }
        __syncthreads();
      }
      // dQ (fp32 scratch) += dS K: one 16 x kDqCols task per warp.
      if (dq_col0 < p.head_dim) {
        float dq[Cfg::kDqCols / 8][4];
#pragma unroll
        for (int t = 0; t < Cfg::kDqCols / 8; ++t) dq[t][0] = dq[t][1] = dq[t][2] = dq[t][3] = 0.f;
#pragma unroll
        for (int k_step = 0; k_step < Cfg::kBlockN / 16; ++k_step) {
          std::uint32_t a[4];
          ptx::ldmatrix_x4_trans(a, ds_addr + ds_task.at(16 * k_step, 0));
#pragma unroll
          for (int n_pair = 0; n_pair < Cfg::kDqCols / 16; ++n_pair) {
            std::uint32_t b[4];
            ptx::ldmatrix_x4_trans(b, k_addr + k_task.at(16 * k_step, n_pair));
            mma_16816<Element>(dq[2 * n_pair], a, b[0], b[1]);
            mma_16816<Element>(dq[2 * n_pair + 1], a, b[2], b[3]);
          }
        }
        float* dq_rows = args.dq_accum + ((batch * p.heads + head) * args.rows_padded + m0) * p.head_dim;
#pragma unroll
        for (int t = 0; t < Cfg::kDqCols / 8; ++t) {
          const int col = dq_col0 + 8 * t + 2 * (lane & 3);
          if (col >= p.head_dim) continue;
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            add_float2(dq_rows + static_cast<std::int64_t>(dq_row0 + (lane >> 2) + 8 * r) * p.head_dim + col,
                       dq[t][2 * r], dq[t][2 * r + 1]);
          }
        }
      }
      if (semaphore != nullptr) {
        __threadfence();
        __syncthreads();
        if (thread == 0) atomicAdd(semaphore, 1);
      }
    }
    ptx::cp_async_wait_group<0>();

    // dK (scaled) and dV of the warp's keys and column slice; keys past the used ones get zeros
    // (their P and dS are 0).
    auto* dk_out = static_cast<Element*>(p.dk.data);
    auto* dv_out = static_cast<Element*>(p.dv.data);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const std::int64_t j = n0 + key_local0 + 8 * r;
      if (j >= allocated_k) continue;
      Element* dk_row = dk_out + key_offset(p, p.dk, seq, batch, j, head_kv);
      Element* dv_row = dv_out + key_offset(p, p.dv, seq, batch, j, head_kv);
#pragma unroll
      for (int t = 0; t < kDTiles; ++t) {
        const int col = col_base + 8 * t + 2 * (lane & 3);
        if (col < p.head_dim) {
          *reinterpret_cast<std::uint32_t*>(dk_row + col) =
              pack_float2<Element>(dk[t][2 * r] * p.scale, dk[t][2 * r + 1] * p.scale);
        }
        if (col < p.head_dim_v) {
          *reinterpret_cast<std::uint32_t*>(dv_row + col) =
              pack_float2<Element>(dv[t][2 * r], dv[t][2 * r + 1]);
        }
      }
    }
    // The next tile's copies overwrite K/V that this tile's last dQ products read.
    __syncthreads();
  }
}

}  // namespace flashattn::detail::cuda_sm80
