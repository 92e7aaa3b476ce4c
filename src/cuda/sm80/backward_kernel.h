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
// At d <= 128 a warp owns two 16-key m-tiles (128-key CTAs), so every Q / dO / P~^T /
// dS^T fragment read from shared memory feeds two MMAs. The kernel is written for
// few live registers (version 4): the walk over query tiles is counted, not divided
// out; every ldmatrix / store address is a per-lane register + an immediate; the
// plain kernel keeps P as 16-bit pairs while dP^T is formed. Q, dO, LSE and D of the
// next query tile are copied while the current one is computed.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common/params.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/tma.h"
#include "cuda/sm80/backward_config.h"
#include "cuda/sm80/dropout.h"
#include "cuda/sm80/score_bias.h"
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

// Deterministic mode: the number of key tiles that add into query tile m_block before
// n_block does. They add in DESCENDING key-tile order: under a causal or windowed mask a
// higher key tile starts its walk at a later query tile and has fewer tiles to walk, so it
// reaches a query tile it shares with a lower one first, and the lower one rarely waits.
// (Ascending order made key tile n wait for n - first earlier tiles at its very first query
// tile: a wavefront that cost 55% of the causal backward.) The key tiles that touch a query
// tile are contiguous (query_tile_range), so the count is the last of them minus n_block.
// The last is the highest key tile below n_end (the sequence's key tiles) whose first query
// tile is at most m_block; without a right window edge every key tile starts at query tile 0.
// Closed form, not a search: the search's registers cost the default mode spills.
// The launch numbers the tiles so that higher key tiles come first (backward_kernel), which
// keeps every wait pointing at a CTA that started earlier.
template <class Cfg>
__device__ __forceinline__ int dq_turn(const MaskParams& mask, int m_block, int n_block, int n_end,
                                       int shift) {
  std::int64_t last = n_end - 1;
  if (mask.window_right >= 0) {
    // Key tile n starts at query row max(0, n kBlockN - shift - right), which is in a query
    // tile <= m_block iff n kBlockN <= (m_block + 1) kBlockM - 1 + shift + right. The right
    // side is >= n_block's first key, as n_block touches m_block: no negative division.
    const std::int64_t bound =
        (static_cast<std::int64_t>(m_block) + 1) * Cfg::kBlockM - 1 + shift + mask.window_right;
    const std::int64_t by_window = bound / Cfg::kBlockN;
    if (by_window < last) last = by_window;
  }
  return static_cast<int>(last) - n_block;
}

// Global -> shared copy of a tile of rows a fixed stride apart (cp.async, 16 bytes per thread per
// step); rows past valid_rows and columns past valid_cols are zero-filled without reading memory.
template <class Cfg, class Tile, int kRows>
__device__ __forceinline__ void backward_load_tile(typename Cfg::Element* smem,
                                                   const typename Cfg::Element* row0, std::int64_t row_stride,
                                                   int valid_rows, int valid_cols, int thread) {
  constexpr int kChunks = kRows * Cfg::kChunksPerRow;
  if constexpr (Cfg::kThreads % Cfg::kChunksPerRow == 0) {
    // A thread copies the same chunk of rows kRowsPerStep apart: a multiple of the swizzle period, so
    // every step's shared address is the first one + an immediate and its source one pointer step on
    // (one address per thread and tile instead of one per step, which the compiler kept live
    // across the whole kernel).
    constexpr int kRowsPerStep = Cfg::kThreads / Cfg::kChunksPerRow;
    static_assert(kRowsPerStep % Tile::kRowPeriod == 0);
    const int row = thread / Cfg::kChunksPerRow;
    const int chunk = thread % Cfg::kChunksPerRow;
    const bool chunk_valid = chunk * Cfg::kChunk < valid_cols;
    const std::uint32_t dst = ptx::cvta_to_shared(smem + Tile::chunk_offset(row, chunk));
    const auto* src = row0 + row * row_stride + chunk * Cfg::kChunk;
#pragma unroll
    for (int step = 0; step < (kRows + kRowsPerStep - 1) / kRowsPerStep; ++step) {
      if (kRows % kRowsPerStep != 0 && row + step * kRowsPerStep >= kRows) break;
      const bool valid = chunk_valid && row + step * kRowsPerStep < valid_rows;
      ptx::cp_async_cg_16(dst + step * kRowsPerStep * Tile::kPanelCols * 2, valid ? src : row0, valid);
      src += kRowsPerStep * row_stride;
    }
  } else {
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
}

// The two values of a 16-bit pair (pack_float2's inverse; exact).
template <typename Element>
__device__ __forceinline__ void unpack_float2(std::uint32_t pair, float& lo, float& hi) {
  if constexpr (std::is_same_v<Element, __half>) {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&pair));
    lo = f.x;
    hi = f.y;
  } else {
    lo = __uint_as_float(pair << 16);
    hi = __uint_as_float(pair & 0xffff0000u);
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

  // base: shared address of the tile (any run-time part of the address folded in once, so that
  // every access is one of kPhases registers + an immediate).
  __device__ __forceinline__ LanePhases(int lane_row, int half, std::uint32_t base) {
#pragma unroll
    for (int c = 0; c < kPhases; ++c) phase[c] = base + 2u * Tile::chunk_offset(lane_row, 2 * c + half);
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

  __device__ __forceinline__ SliceOffsets(int lane_row, int half, int pair0, std::uint32_t base) {
#pragma unroll
    for (int c = 0; c < kPairs; ++c) {
      offset[c] = base + 2u * Tile::chunk_offset(lane_row, 2 * (pair0 + c) + half);
    }
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

// row0: the warp's first row (a multiple of 8), base: the tile's shared address.
template <class Tile>
__device__ __forceinline__ LanePhases<Tile> phases_a(int lane, int row0, std::uint32_t base) {
  return LanePhases<Tile>(row0 + lane_row_a(lane), lane_half_a(lane), base);
}
template <class Tile>
__device__ __forceinline__ LanePhases<Tile> phases_b(int lane, int row0, std::uint32_t base) {
  return LanePhases<Tile>(row0 + lane_row_b(lane), lane_half_b(lane), base);
}

// acc (16 kMT x kN) += A B^T: A = 16 kMT rows (from a_row0) of a swizzled tile, B = rows
// [b_row0, b_row0 + kN) of another, both with the reduction dimension contiguous (S^T = K Q^T); each B
// fragment feeds kMT m-tiles. Shared addresses in bytes.
// One k step of warp_gemm_nt: the B fragments of rows [b_row0, b_row0 + kN), each against every A m-tile.
template <typename Element, class BTile, int kMT, int kN>
__device__ __forceinline__ void warp_mma_nt_step(float (&acc)[kMT][kN / 8][4],
                                                 const std::uint32_t (&a)[kMT][4], std::uint32_t b_smem,
                                                 const LanePhases<BTile>& b_phases, int b_row0, int k_step) {
#pragma unroll
  for (int n_pair = 0; n_pair < kN / 16; ++n_pair) {
    std::uint32_t b[4];
    ptx::ldmatrix_x4(b, b_smem + b_phases.at(b_row0 + 16 * n_pair, k_step));
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      mma_16816<Element>(acc[mt][2 * n_pair], a[mt], b[0], b[1]);
      mma_16816<Element>(acc[mt][2 * n_pair + 1], a[mt], b[2], b[3]);
    }
  }
}

template <typename Element, class ATile, class BTile, int kKSteps, int kMT, int kN>
__device__ __forceinline__ void warp_gemm_nt(float (&acc)[kMT][kN / 8][4], std::uint32_t a_smem,
                                             const LanePhases<ATile>& a_phases, int a_row0,
                                             std::uint32_t b_smem, const LanePhases<BTile>& b_phases,
                                             int b_row0) {
#pragma unroll
  for (int k_step = 0; k_step < kKSteps; ++k_step) {
    std::uint32_t a[kMT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) ptx::ldmatrix_x4(a[mt], a_smem + a_phases.at(a_row0 + 16 * mt, k_step));
    warp_mma_nt_step<Element, BTile, kMT, kN>(acc, a, b_smem, b_phases, b_row0, k_step);
  }
}

// KV_REGS: the A fragments warp_gemm_nt would read (16 kMT rows from a_row0, every k step), read once.
template <class ATile, int kKSteps, int kMT>
__device__ __forceinline__ void load_a_fragments(std::uint32_t (&a)[kKSteps][kMT][4], std::uint32_t a_smem,
                                                 const LanePhases<ATile>& a_phases, int a_row0) {
#pragma unroll
  for (int k_step = 0; k_step < kKSteps; ++k_step) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      ptx::ldmatrix_x4(a[k_step][mt], a_smem + a_phases.at(a_row0 + 16 * mt, k_step));
    }
  }
}

// warp_gemm_nt with the A fragments already in registers (load_a_fragments), the same MMA order.
template <typename Element, class BTile, int kKSteps, int kMT, int kN>
__device__ __forceinline__ void warp_gemm_nt_reg_a(float (&acc)[kMT][kN / 8][4],
                                                   const std::uint32_t (&a)[kKSteps][kMT][4],
                                                   std::uint32_t b_smem, const LanePhases<BTile>& b_phases,
                                                   int b_row0) {
#pragma unroll
  for (int k_step = 0; k_step < kKSteps; ++k_step) {
    warp_mma_nt_step<Element, BTile, kMT, kN>(acc, a[k_step], b_smem, b_phases, b_row0, k_step);
  }
}

// acc (16 kMT x kN) += A B: A = 16 kMT rows (from a_row0) of a swizzled tile with the reduction dimension
// contiguous (P~^T, dS^T: keys x queries), B = the rows [0, 16 kKSteps) of another, its columns the
// warp's slice (dO, Q: queries x d; read transposed).
template <typename Element, class ATile, class BTile, int kKSteps, int kMT, int kN>
__device__ __forceinline__ void warp_gemm_nn(float (&acc)[kMT][kN / 8][4], std::uint32_t a_smem,
                                             const LanePhases<ATile>& a_phases, int a_row0,
                                             std::uint32_t b_smem,
                                             const SliceOffsets<BTile, kN / 16>& b_slice) {
#pragma unroll
  for (int k_step = 0; k_step < kKSteps; ++k_step) {
    std::uint32_t a[kMT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) ptx::ldmatrix_x4(a[mt], a_smem + a_phases.at(a_row0 + 16 * mt, k_step));
#pragma unroll
    for (int n_pair = 0; n_pair < kN / 16; ++n_pair) {
      std::uint32_t b[4];
      ptx::ldmatrix_x4_trans(b, b_smem + b_slice.at(16 * k_step, n_pair));
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        mma_16816<Element>(acc[mt][2 * n_pair], a[mt], b[0], b[1]);
        mma_16816<Element>(acc[mt][2 * n_pair + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// dQ accumulator adds of m16n8 accumulator tiles (lane: rows lane / 4 and + 8, columns 2 (lane % 4)
// and + 1) into an fp32 row-major array in global memory. On sm_90 lanes 2c and 2c + 1 swap halves so
// that each holds four adjacent floats of one row (the even lane row lane / 4, the odd lane row
// lane / 4 + 8): one 16-byte vector reduction per lane instead of four scalar atomics. The lane's
// address is formed once per task (lane_pointer) and the n-tiles of the task are immediates off it.
struct DqLaneAdder {
  // tile: row 0, column 0 of the task; stride: floats per row, a multiple of 4.
  static __device__ __forceinline__ float* lane_pointer(float* tile, std::int64_t stride, int lane) {
    const int row = lane >> 2;
    const int col = 2 * (lane & 3);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !FLASHATTN_SM80_BWD_DQ_RED_V2
    const int odd = lane & 1;
    // Odd lanes: row + 8, columns col - 2 .. col + 1 (the partner's pair first).
    return tile + (row + 8 * odd) * stride + (col - 2 * odd);
#else
    return tile + row * stride + col;
#endif
  }
  // Adds n-tile `acc` at lane_ptr (+ 8 t floats for n-tile t, done by the caller).
  static __device__ __forceinline__ void add(float* lane_ptr, std::int64_t stride, const float (&acc)[4],
                                             int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && FLASHATTN_SM80_BWD_DQ_RED_V2
    (void)lane;
    ptx::red_global_add_v2_f32(lane_ptr, acc[0], acc[1]);
    ptx::red_global_add_v2_f32(lane_ptr + 8 * stride, acc[2], acc[3]);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    (void)stride;
    const bool odd = (lane & 1) != 0;
    // Even lanes send their row + 8 pair, odd lanes their row pair.
    const float send0 = odd ? acc[0] : acc[2], send1 = odd ? acc[1] : acc[3];
    const float got0 = __shfl_xor_sync(0xffffffffu, send0, 1);
    const float got1 = __shfl_xor_sync(0xffffffffu, send1, 1);
    const float x0 = odd ? got0 : acc[0], x1 = odd ? got1 : acc[1];
    const float x2 = odd ? acc[2] : got0, x3 = odd ? acc[3] : got1;
    ptx::red_global_add_v4_f32(lane_ptr, x0, x1, x2, x3);
#else
    (void)lane;
    atomicAdd(lane_ptr, acc[0]);
    atomicAdd(lane_ptr + 1, acc[1]);
    atomicAdd(lane_ptr + 8 * stride, acc[2]);
    atomicAdd(lane_ptr + 8 * stride + 1, acc[3]);
#endif
  }
};

// kStaticBulk (STATIC_BULK_BUCKETS): the launch guarantees args.dq_bulk, no deterministic semaphores and
// head_dim == the bucket, so those run-time tests (and their branches in the walk) are compiled out.
// kNoMask (STATIC_NOMASK_BUCKETS, with kStaticBulk): the launch guarantees that no tile needs the per-element
// mask and every tile is full (no window, no varlen / seqused, sequence lengths multiples of the tiles,
// head_dim_v == head_dim), so the masked version of the P loop and the copies' bounds are not compiled.
// kBias (with kGeneral): options.bias too, in instances of its own (the bias's state in the other general
// kernels made ptxas spill some 200 B more there).
template <class Cfg, bool kGeneral, bool kStaticBulk = false, bool kNoMask = false, bool kBias = false>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSm)
    backward_kernel(const __grid_constant__ BackwardKernelArgs args) {
  static_assert(!kBias || kGeneral, "a bias runs on the general kernel");
  using Element = typename Cfg::Element;
  using QTile = SwizzledTile<Cfg::kBlockM, Cfg::kHeadDim>;
  using KTile = SwizzledTile<Cfg::kBlockN, Cfg::kHeadDim>;
  using DsTile = SwizzledTile<Cfg::kBlockN, Cfg::kBlockM>;  // P~^T and dS^T (keys x queries)
  constexpr int kKT = Cfg::kKeyTiles;                       // m-tiles of 16 keys of the warp
  constexpr int kST = Cfg::kScoreTiles;                     // of which S^T / dP^T are formed at once
  constexpr int kMTiles = Cfg::kQueriesPerWarp / 8;         // n-tiles of the warp's S^T (queries)
  constexpr int kDTiles = Cfg::kColsPerWarp / 8;            // n-tiles of the warp's dK / dV slice
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr bool kDqBeforeDk = FLASHATTN_SM80_BWD_DQ_BEFORE_DK != 0;
  // DQ_BULK_IN_OPERANDS: dQ staged over the Q / dO tiles of the ring stage just used; the next copies
  // into the other stage wait for the previous tile's bulk reads (issued after the mid barrier).
  constexpr bool kStageInOps = Cfg::kDqStageInOperands;
  constexpr bool kCopyAfterSt = Cfg::kCopyAfterSt && !kStageInOps;
  // PROLOGUE_SPLIT (plain kernel): the first query tile's S^T and P start once K, Q and LSE2 landed.
  // (Needs STEP_POINTERS' stepped query-tile copies.)
  constexpr bool kPrologueSplit =
      !kGeneral && FLASHATTN_SM80_BWD_STEP_POINTERS &&
      (FLASHATTN_SM80_BWD_PROLOGUE_SPLIT == 1 ||
       (FLASHATTN_SM80_BWD_PROLOGUE_SPLIT == 2 && (Cfg::kHeadDim <= 64 || Cfg::kHeadDim > 128)));
  // KV_REGS (version 11): S^T / dP^T take their K / V A fragments from registers loaded once per key tile.
  constexpr bool kKvRegsHere = !kGeneral && kStaticBulk;
  constexpr bool kKRegs = Cfg::kKRegs && kKvRegsHere;
  constexpr bool kVRegs = Cfg::kVRegs && kKvRegsHere;
  constexpr int kKSteps = Cfg::kHeadDim / 16;

  // Every dQ tile of the kStaticBulk instance goes through the bulk staging, which exists in sm_90 code only;
  // compiled for sm_80 (e.g. its PTX JIT-compiled on a newer GPU) the instance keeps the reductions.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool kBulkOnly = kStaticBulk;
#else
  constexpr bool kBulkOnly = false;
#endif

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
  const int key_row0 = (warp % Cfg::kKeyGroups) * 16 * kKT;  // keys [key_row0, +16 kKT)
  const int slice = warp / Cfg::kKeyGroups;                  // queries of S^T, columns of dK / dV
  const int q_base = slice * Cfg::kQueriesPerWarp;
  const int col_base = slice * Cfg::kColsPerWarp;
  const std::int64_t group = p.heads / p.heads_kv;
  // Shared addresses: every ldmatrix address is a per-lane register (LanePhases / SliceOffsets, warp
  // rows and tile base folded in once) + an immediate; these are the immediates between tiles.
  constexpr std::uint32_t kQBytes = Cfg::kSmemQ * sizeof(Element);  // one stage
  constexpr std::uint32_t kToV = Cfg::kSmemK * sizeof(Element);     // K -> V
  constexpr std::uint32_t kToDo = Cfg::kStages * kQBytes;           // Q -> dO (same stage)
  constexpr std::uint32_t kToP = Cfg::kSmemDs * sizeof(Element);    // dS^T -> P~^T
  const std::uint32_t k_addr = ptx::cvta_to_shared(k_smem), q_addr0 = ptx::cvta_to_shared(q_smem);
  const std::uint32_t ds_addr = ptx::cvta_to_shared(ds_smem);
  const LanePhases<KTile> k_phases_a = phases_a<KTile>(lane, key_row0, k_addr);
  const LanePhases<QTile> q_phases_b = phases_b<QTile>(lane, q_base, q_addr0);
  const LanePhases<DsTile> ds_phases_a = phases_a<DsTile>(lane, key_row0, ds_addr);
  // This lane's 32-bit stores of P~^T / dS^T: key rows key_row0 + lane / 4 (+ multiples of 8: the same
  // swizzle), query chunk q_base / 8 + t, column pair lane % 4 (one register per chunk, not per store).
  std::uint32_t ds_store[kMTiles];
#pragma unroll
  for (int t = 0; t < kMTiles; ++t) {
    ds_store[t] = ds_addr + sizeof(Element) * (DsTile::chunk_offset(key_row0 + (lane >> 2), q_base / 8 + t) +
                                               2 * (lane & 3));
  }
  // B of dV / dK: rows of dO / Q, the warp's column slice, read transposed.
  const SliceOffsets<QTile, Cfg::kColsPerWarp / 16> q_slice(lane_row_a(lane), lane_half_a(lane),
                                                            col_base / 16, q_addr0);
  // dQ task of this warp: rows [dq_row0, +16 kDqMT) x columns [dq_col0, +kDqTaskCols) of the query tile.
  constexpr int kDqMT = Cfg::kDqMTiles;
  const int dq_row0 = (warp % Cfg::kDqRowGroups) * 16 * kDqMT;
  const int dq_col0 = (warp / Cfg::kDqRowGroups) * Cfg::kDqTaskCols;
  // A of dQ: dS (queries x keys) is the transpose of the stored dS^T tile (query chunk pair = m-tile);
  // B: K rows, the task's columns.
  const SliceOffsets<DsTile, kDqMT> ds_task(lane_row_b(lane), lane_half_b(lane), dq_row0 / 16, ds_addr);
  // DQ_BULK: the staging tile (after the LSE / D ring). This lane's rows are dq_row0 + lane / 4 (+ 8,
  // 16, 24), all with row % 8 == lane / 4: the swizzle of a unit is one XOR with that.
  // DQ_BULK_IN_OPERANDS: rows [0, kBlockM / 2) over stage 0's Q tile, the rest over its dO tile (a
  // task's rows stay in one half); the ring stage's offset is added per query tile.
  constexpr int kStageHalfRows = Cfg::kBlockM / 2;
  [[maybe_unused]] const std::uint32_t dq_stage =
      kStageInOps ? q_addr0 + (dq_row0 >= kStageHalfRows ? kToDo : 0u)
                  : ptx::cvta_to_shared(delta_smem + Cfg::kStages * Cfg::kBlockM);
  [[maybe_unused]] const std::uint32_t dq_stage_row =
      dq_stage + 4 * ((kStageInOps ? dq_row0 % kStageHalfRows : dq_row0) + (lane >> 2)) * Cfg::kHeadDim;
  const SliceOffsets<KTile, Cfg::kDqTaskCols / 16> k_task(lane_row_a(lane), lane_half_a(lane), dq_col0 / 16,
                                                          k_addr);

  // Deterministic mode: each CTA claims its tile from a counter (launch_backward makes the grid one CTA
  // per tile), so tiles start in increasing order. A tile's dQ turn waits only for lower tiles (below),
  // each claimed earlier by a CTA that was running when it claimed it, so the smallest unfinished tile
  // always progresses: no deadlock whatever order the hardware starts CTAs in (blockIdx order would
  // rely on in-order dispatch).
  std::int64_t first_tile = blockIdx.x;
  if (!kStaticBulk && args.tile_counter != nullptr) {
    __shared__ std::int64_t claimed_tile;
    if (thread == 0) claimed_tile = static_cast<std::int64_t>(atomicAdd(args.tile_counter, 1ull));
    __syncthreads();
    first_tile = claimed_tile;
  }
  for (std::int64_t tile = first_tile; tile < args.total_tiles; tile += gridDim.x) {
    // Deterministic mode numbers a head's key tiles from the last (dq_turn: each waits only for
    // higher key tiles, i.e. for lower tile indices).
    const int n_index = static_cast<int>(tile % args.n_blocks);
    const int n_block = !kStaticBulk && args.dq_semaphore != nullptr ? args.n_blocks - 1 - n_index : n_index;
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
    // Per-element positions in 32 bits (a sequence's rows are int-indexed already: m0, n0): key j is
    // visible from query i iff j < k_end and off_lo <= j - i - shift32 <= off_hi (windows clamped to int).
    const int shift32 = static_cast<int>(shift);
    const int k_end = static_cast<int>(seq.k);
    auto clamp_int = [](std::int64_t x) {
      return static_cast<int>(x < -0x7fffffffLL ? -0x7fffffffLL : (x > 0x7fffffffLL ? 0x7fffffffLL : x));
    };
    const int off_lo = p.mask.window_left < 0 ? -0x7fffffff : clamp_int(-p.mask.window_left);
    const int off_hi = p.mask.window_right < 0 ? 0x7fffffff : clamp_int(p.mask.window_right);

    // K and V of the tile, with the first query tile's operands in the same copy group.
    // kNoMask: every tile full and head_dim == head_dim_v == the bucket (the launch checks), so the copies
    // and the dK / dV stores take compile-time bounds.
    const int k_rows =
        kNoMask
            ? Cfg::kBlockN
            : static_cast<int>(seq.k - n0 < Cfg::kBlockN ? (seq.k - n0 > 0 ? seq.k - n0 : 0) : Cfg::kBlockN);
    if (k_rows > 0) {
      backward_load_tile<Cfg, KTile, Cfg::kBlockN>(
          k_smem, static_cast<const Element*>(p.k.data) + key_offset(p, p.k, seq, batch, n0, head_kv),
          p.k.row_stride, k_rows, kNoMask ? Cfg::kHeadDim : static_cast<int>(p.head_dim), thread);
    }
    // PROLOGUE_SPLIT: V (with the first dO and D, below) in a second copy group.
    auto load_v_tile = [&] {
      if (k_rows > 0) {
        backward_load_tile<Cfg, KTile, Cfg::kBlockN>(
            v_smem, static_cast<const Element*>(p.v.data) + key_offset(p, p.v, seq, batch, n0, head_kv),
            p.v.row_stride, k_rows, kNoMask ? Cfg::kHeadDim : static_cast<int>(p.head_dim_v), thread);
      }
    };
    if constexpr (!kPrologueSplit) load_v_tile();

    // LSE2 and D of a query tile (scratch row `row`, kBlockM entries each) into ring stage `stage`.
    // part: 0 both arrays, 1 LSE2 only, 2 D only (PROLOGUE_SPLIT's two groups).
    auto load_row_arrays = [&](std::int64_t row, int stage, int part = 0) {
      constexpr int kVectors = Cfg::kBlockM / 4;  // 16-byte vectors of one row array
      if (thread < 2 * kVectors && (part == 0 || (part == 1) == (thread < kVectors))) {
        const bool is_lse = thread < kVectors;
        const int v = is_lse ? thread : thread - kVectors;
        const float* src = (is_lse ? args.lse_log2 : args.delta) + row + 4 * v;
        float* dst = (is_lse ? lse_smem : delta_smem) + stage * Cfg::kBlockM + 4 * v;
        ptx::cp_async_cg_16(ptx::cvta_to_shared(dst), src, true);
      }
    };
    // Query tile (head, m_block) of the walk: m_block fastest. Advanced by one compare per step
    // rather than divided out of the step index (divisions and their operands were long-lived).
#if FLASHATTN_SM80_BWD_STEP_POINTERS
    // STEP_POINTERS: the walk's state as pointers / indices stepped per query tile (one add each, or
    // one head step at a wrap) rather than formed again from the 64-bit parameters per iteration:
    // q_next / do_next are row 0 of the next query tile to copy; rows_cur is the scratch row (LSE / D /
    // dQ accumulator) of query row 0 of the tile being computed.
    const std::int64_t first_head = head_kv * group;
    const int first_m0 = range.begin * Cfg::kBlockM;
    const Element* q_next =
        static_cast<const Element*>(p.q.data) + query_offset(p.q, seq, batch, first_m0, first_head);
    const Element* do_next =
        static_cast<const Element*>(p.dout.data) + query_offset(p.dout, seq, batch, first_m0, first_head);
    std::int64_t rows_cur = (batch * p.heads + first_head) * args.rows_padded + first_m0;
    const int q_end = static_cast<int>(seq.q);
    // From one query tile to the next: kBlockM rows on, or (wrap) back to range.begin of the next head.
    const std::int64_t wrap_rows = static_cast<std::int64_t>(m_count - 1) * Cfg::kBlockM;
    // needs_mask as two compares per query tile: a ragged key tile always; a right window edge cuts
    // the tile iff m0 < mask_below, a left one iff m0 > mask_above.
    int mask_below = -0x7fffffff, mask_above = 0x7fffffff;
    if (n0 + Cfg::kBlockN > seq.k) {
      mask_below = 0x7fffffff;
    } else if (p.mask.window_right >= 0) {
      mask_below = clamp_int(n0 + Cfg::kBlockN - 1 - shift - p.mask.window_right);
    }
    if (p.mask.window_left >= 0) mask_above = clamp_int(n0 - Cfg::kBlockM + 1 - shift + p.mask.window_left);
    // Copies the next query tile (m0_next its first row, wrap: it starts the next head) and steps on.
    // part: 0 the whole query tile, 1 Q and LSE2, 2 dO and D.
    auto load_query_tile_stepped = [&](int m0_next, std::int64_t rows_next, int stage, int part = 0) {
      const int rows = kNoMask                          ? Cfg::kBlockM
                       : q_end - m0_next < Cfg::kBlockM ? q_end - m0_next
                                                        : Cfg::kBlockM;
      if (part != 2) {
        backward_load_tile<Cfg, QTile, Cfg::kBlockM>(
            q_smem + stage * Cfg::kSmemQ, q_next, p.q.row_stride, rows,
            kNoMask ? Cfg::kHeadDim : static_cast<int>(p.head_dim), thread);
      }
      if (part != 1) {
        backward_load_tile<Cfg, QTile, Cfg::kBlockM>(
            do_smem + stage * Cfg::kSmemQ, do_next, p.dout.row_stride, rows,
            kNoMask ? Cfg::kHeadDim : static_cast<int>(p.head_dim_v), thread);
      }
      load_row_arrays(rows_next, stage, part);
    };
    // Steps a Q-shaped tile pointer from one query tile to the next.
    auto step_rows = [&](const Element* ptr, const Operand& op, bool wrap) {
      return wrap ? ptr + (op.head_stride - wrap_rows * op.row_stride) : ptr + Cfg::kBlockM * op.row_stride;
    };
#endif
    auto load_query_tile = [&](std::int64_t head, int m_block, int stage) {
      const int m0 = m_block * Cfg::kBlockM;
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
      load_row_arrays(slot, stage);
    };

    float dk[kKT][kDTiles][4], dv[kKT][kDTiles][4];
#pragma unroll
    for (int kt = 0; kt < kKT; ++kt) {
#pragma unroll
      for (int t = 0; t < kDTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[kt][t][e] = dv[kt][t][e] = 0.f;
      }
    }

    // KV_REGS: the warp's K / V A fragments of S^T / dP^T for the whole walk (filled at its first query
    // tile, once the copies landed; the next key tile's copies overwrite K / V only after the walk).
    [[maybe_unused]] std::uint32_t k_frag[kKRegs ? kKSteps : 1][kKRegs ? kKT : 1][4];
    [[maybe_unused]] std::uint32_t v_frag[kVRegs ? kKSteps : 1][kVRegs ? kKT : 1][4];

    const float softcap_inverse = p.softcap > 0.f ? 1.f / p.softcap : 0.f;
    const int key_local0 = key_row0 + (lane >> 2);  // this lane's keys: + 16 kt + 0 and + 8

    std::int64_t head = head_kv * group;
    int m_block = range.begin;
    [[maybe_unused]] float* dq_pending = nullptr;  // DQ_BULK: dQ tile staged, not yet reduced
#if FLASHATTN_SM80_BWD_STEP_POINTERS
    if constexpr (kPrologueSplit) {
      // PROLOGUE_SPLIT: group 1 = K, Q, LSE2 (S^T and P); group 2 = V, dO, D (dP^T, dS).
      if (iterations > 0) load_query_tile_stepped(first_m0, rows_cur, 0, 1);
      ptx::cp_async_commit_group();
      load_v_tile();
      if (iterations > 0) load_query_tile_stepped(first_m0, rows_cur, 0, 2);
    } else {
      if (iterations > 0) load_query_tile_stepped(first_m0, rows_cur, 0);
    }
#else
    if (iterations > 0) load_query_tile(head, m_block, 0);
#endif
    ptx::cp_async_commit_group();
    for (std::int64_t it = 0; it < iterations; ++it) {
      static_assert(Cfg::kStages == 2, "the ring alternates stage and stage ^ 1");
      const int stage = static_cast<int>(it & 1);
      if (kPrologueSplit && it == 0) {
        ptx::cp_async_wait_group<1>();  // group 1 only; group 2 before the first dP^T
      } else {
        ptx::cp_async_wait_group<0>();
      }
      // Copies of tile `it` visible to all; every warp is done with tile it - 1 (its stage, P~^T, dS^T).
      __syncthreads();
      if constexpr (kKRegs) {
        if (it == 0) load_a_fragments<KTile>(k_frag, 0u, k_phases_a, 0);
      }
      if constexpr (kVRegs && !kPrologueSplit) {
        if (it == 0) load_a_fragments<KTile>(v_frag, kToV, k_phases_a, 0);
      }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if constexpr (Cfg::kDqBulk) {
        // DQ_BULK: every warp staged (and fenced) tile it - 1's dQ: one bulk reduction of the tile
        // (two halves from the other ring stage's Q and dO tiles with DQ_BULK_IN_OPERANDS).
        if ((kStaticBulk || args.dq_bulk) && thread == 0 && dq_pending != nullptr) {
          if constexpr (kStageInOps) {
            const std::uint32_t source = q_addr0 + (stage ^ 1) * kQBytes;
            ptx::cp_reduce_async_bulk_add_f32(dq_pending, source, Cfg::kDqStageBytes / 2);
            ptx::cp_reduce_async_bulk_add_f32(dq_pending + kStageHalfRows * Cfg::kHeadDim, source + kToDo,
                                              Cfg::kDqStageBytes / 2);
          } else {
            ptx::cp_reduce_async_bulk_add_f32(dq_pending, dq_stage, Cfg::kDqStageBytes);
          }
          ptx::cp_async_bulk_commit_group();
        }
      }
#endif
      const int m0 = m_block * Cfg::kBlockM;
      // Copies of the next (head, query tile) into the other ring stage (free: every warp passed the
      // barrier above), at the loop top or (COPY_AFTER_ST) after this tile's first S^T product.
      auto issue_next_copy = [&] {
        if (it + 1 < iterations) {
          const bool wrap = m_block + 1 == range.end;
#if FLASHATTN_SM80_BWD_STEP_POINTERS
          q_next = step_rows(q_next, p.q, wrap);
          do_next = step_rows(do_next, p.dout, wrap);
          load_query_tile_stepped(wrap ? first_m0 : m0 + Cfg::kBlockM,
                                  rows_cur + (wrap ? args.rows_padded - wrap_rows : Cfg::kBlockM), stage ^ 1);
#else
          load_query_tile(head + (wrap ? 1 : 0), wrap ? range.begin : m_block + 1, stage ^ 1);
#endif
        }
        ptx::cp_async_commit_group();
      };
      if constexpr (!kCopyAfterSt && !kStageInOps) issue_next_copy();

      const std::uint32_t q_stage = stage * kQBytes;  // added to the Q / dO lane registers
      const float* lse_tile = lse_smem + stage * Cfg::kBlockM;
      const float* delta_tile = delta_smem + stage * Cfg::kBlockM;

#if FLASHATTN_SM80_BWD_STEP_POINTERS
      const bool needs_mask = !kNoMask && (m0 < mask_below || m0 > mask_above);
#else
      const bool needs_mask =
          !kNoMask &&
          (n0 + Cfg::kBlockN > seq.k ||
           (p.mask.window_right >= 0 && n0 + Cfg::kBlockN - 1 - m0 - shift > p.mask.window_right) ||
           (p.mask.window_left >= 0 && n0 - (m0 + Cfg::kBlockM - 1) - shift < -p.mask.window_left));
#endif
      [[maybe_unused]] const float alibi_slope =
          kGeneral && p.alibi_slopes != nullptr ? p.alibi_slopes[batch * p.alibi_batch_stride + head] : 0.f;
      [[maybe_unused]] const ScoreBias bias = kBias ? ScoreBias::make(p, batch, head) : ScoreBias{};

      if constexpr (!kGeneral) {
        // Plain attention (no softcap, ALiBi, dropout): S^T first, P^T to shared memory and kept in
        // registers as 16-bit pairs (the precision it feeds dV with; the reference's low-precision
        // emulation rounds P the same way before dS), then dP^T: the fp32 S^T is dead before dP^T
        // is formed, 16 registers less at the peak than holding both in fp32.
#pragma unroll
        for (int pass = 0; pass < kKT / kST; ++pass) {
          std::uint32_t prob_pairs[kST][kMTiles][2];
          {
            float st[kST][kMTiles][4];
#pragma unroll
            for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
              for (int t = 0; t < kMTiles; ++t)
                st[kt][t][0] = st[kt][t][1] = st[kt][t][2] = st[kt][t][3] = 0.f;
            }
            if constexpr (kKRegs) {
              warp_gemm_nt_reg_a<Element, QTile, kKSteps, kST, Cfg::kQueriesPerWarp>(st, k_frag, q_stage,
                                                                                     q_phases_b, 0);
            } else {
              warp_gemm_nt<Element, KTile, QTile, Cfg::kHeadDim / 16, kST, Cfg::kQueriesPerWarp>(
                  st, 0u, k_phases_a, 16 * kST * pass, q_stage, q_phases_b, 0);
            }
            if constexpr (kCopyAfterSt) {
              if (pass == 0) issue_next_copy();
            }
            // P = exp2(S^T scale_log2 - LSE2), masked per element where needs_mask; with
            // std::false_type the loop has no mask compares and selects at all.
            auto form_p = [&](auto may_mask) {
              const bool masked = decltype(may_mask)::value && needs_mask;
#pragma unroll
              for (int t = 0; t < kMTiles; ++t) {
                float lse2[2];
#pragma unroll
                for (int e = 0; e < 2; ++e) lse2[e] = lse_tile[q_base + 8 * t + 2 * (lane & 3) + e];
#pragma unroll
                for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
                  for (int r = 0; r < 2; ++r) {
                    float prob[2];
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                      prob[e] = ptx::ex2_approx_ftz_f32(st[kt][t][2 * r + e] * args.scale_log2 - lse2[e]);
                      if (masked) {
                        const int i = m0 + q_base + 8 * t + 2 * (lane & 3) + e;
                        const int j = n0 + key_local0 + 16 * (kST * pass + kt) + 8 * r;
                        const int offset = j - i - shift32;
                        if (!(j < k_end && offset >= off_lo && offset <= off_hi)) prob[e] = 0.f;
                      }
                    }
                    prob_pairs[kt][t][r] = pack_float2<Element>(prob[0], prob[1]);
                    ptx::st_shared_b32(
                        ds_store[t] + kToP +
                            (16 * (kST * pass + kt) + 8 * r) * DsTile::kPanelCols * sizeof(Element),
                        prob_pairs[kt][t][r]);
                  }
                }
              }
            };
#if FLASHATTN_SM80_BWD_MASK_BRANCH
            // Most tiles need no mask: a branch per tile keeps the per-element compares (which the
            // compiler otherwise if-converts and executes on every tile) out of them.
            if (needs_mask) {
              form_p(std::true_type{});
            } else {
              form_p(std::false_type{});
            }
#else
            form_p(std::true_type{});
#endif
          }
          if constexpr (kPrologueSplit) {
            if (it == 0 && pass == 0) {
              // Group 2 (V, dO, D) of the first query tile; the next tile's copies (committed after
              // this one, at the loop top or after S^T) may stay in flight.
              if constexpr (kCopyAfterSt || !kStageInOps) {
                ptx::cp_async_wait_group<1>();
              } else {
                ptx::cp_async_wait_group<0>();
              }
              __syncthreads();
              if constexpr (kVRegs) load_a_fragments<KTile>(v_frag, kToV, k_phases_a, 0);
            }
          }
          float dpt[kST][kMTiles][4];
#pragma unroll
          for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
            for (int t = 0; t < kMTiles; ++t)
              dpt[kt][t][0] = dpt[kt][t][1] = dpt[kt][t][2] = dpt[kt][t][3] = 0.f;
          }
          if constexpr (kVRegs) {
            warp_gemm_nt_reg_a<Element, QTile, kKSteps, kST, Cfg::kQueriesPerWarp>(
                dpt, v_frag, q_stage + kToDo, q_phases_b, 0);
          } else {
            warp_gemm_nt<Element, KTile, QTile, Cfg::kHeadDim / 16, kST, Cfg::kQueriesPerWarp>(
                dpt, kToV, k_phases_a, 16 * kST * pass, q_stage + kToDo, q_phases_b, 0);
          }
#pragma unroll
          for (int t = 0; t < kMTiles; ++t) {
            float delta[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) delta[e] = delta_tile[q_base + 8 * t + 2 * (lane & 3) + e];
#pragma unroll
            for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
              for (int r = 0; r < 2; ++r) {
                float prob[2];
                unpack_float2<Element>(prob_pairs[kt][t][r], prob[0], prob[1]);
                ptx::st_shared_b32(
                    ds_store[t] + (16 * (kST * pass + kt) + 8 * r) * DsTile::kPanelCols * sizeof(Element),
                    pack_float2<Element>(prob[0] * (dpt[kt][t][2 * r] - delta[0]),
                                         prob[1] * (dpt[kt][t][2 * r + 1] - delta[1])));
              }
            }
          }
        }
      } else {
        // kKT / kST passes over the warp's key m-tiles: fewer live score registers where the dK / dV
        // accumulators of two m-tiles already take half the register file (d 128).
#pragma unroll
        for (int pass = 0; pass < kKT / kST; ++pass) {
          // S^T and dP^T of the warp's 16 kST keys x kQueriesPerWarp queries per pass.
          float st[kST][kMTiles][4], dpt[kST][kMTiles][4];
#pragma unroll
          for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
            for (int t = 0; t < kMTiles; ++t) {
#pragma unroll
              for (int e = 0; e < 4; ++e) st[kt][t][e] = dpt[kt][t][e] = 0.f;
            }
          }
          // The pass's bias elements, loaded before the pass's GEMMs (their latency under them)
          // (ScoreBias::visit_kind: one branch on the bias's kind, loads back to back); 0 where the tile's
          // rows or keys are past the sequence.
          [[maybe_unused]] float bias_tile[kST][kMTiles][4];
          if constexpr (kBias) {
            bias.visit_kind([&](auto kind) {
#pragma unroll
              for (int t = 0; t < kMTiles; ++t) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                  const int i = m0 + q_base + 8 * t + 2 * (lane & 3) + e;
                  const unsigned char* bias_row = bias.row(i < seq.q ? i : 0);
#pragma unroll
                  for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
                    for (int r = 0; r < 2; ++r) {
                      const int j = n0 + key_local0 + 16 * (kST * pass + kt) + 8 * r;
                      bias_tile[kt][t][2 * r + e] =
                          i < seq.q && j < k_end ? ScoreBias::value<decltype(kind)::value>(bias_row, j, 1.f)
                                                 : 0.f;
                    }
                  }
                }
              }
            });
          }
          warp_gemm_nt<Element, KTile, QTile, Cfg::kHeadDim / 16, kST, Cfg::kQueriesPerWarp>(
              st, 0u, k_phases_a, 16 * kST * pass, q_stage, q_phases_b, 0);
          warp_gemm_nt<Element, KTile, QTile, Cfg::kHeadDim / 16, kST, Cfg::kQueriesPerWarp>(
              dpt, kToV, k_phases_a, 16 * kST * pass, q_stage + kToDo, q_phases_b, 0);
          if constexpr (kCopyAfterSt) {
            if (pass == 0) issue_next_copy();
          }
          // Dropout: which of each m-tile's elements the forward dropped, one Philox call a lane per 8 of its
          // 16 keys' draws, the bits exchanged between the 8 lanes that share the calls (dropout.h).
          std::uint32_t dropped[kST] = {};
          if constexpr (kGeneral) {
            if (args.dropout_threshold > 0) {
#pragma unroll
              for (int kt = 0; kt < kST; ++kt) {
                dropped[kt] = dropout_bits_transposed<kMTiles>(
                    args.dropout_keys, p.dropout_offset, args.dropout_threshold, batch * p.heads + head,
                    m0 + q_base + 2 * (lane & 3), (n0 + key_row0 + 16 * (kST * pass + kt)) / 8, lane);
              }
            }
          }

          // P~ and dS per element; softcap and ALiBi are template arguments of the pass, chosen once a pass
          // (as run-time tests in every element they doubled the Hopper general kernel's instructions,
          // session 67's s67_stalls.sh; the same form here).
          [[maybe_unused]] const bool dropout = kGeneral && args.dropout_threshold > 0;
          const auto elements = [&]<bool kSoftcap, bool kAlibi, bool kBias = false>() {
#pragma unroll
            for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
              for (int t = 0; t < kMTiles; ++t) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                  const int q_local = q_base + 8 * t + 2 * (lane & 3) + e;
                  const int i = m0 + q_local;
                  const float lse2 = lse_tile[q_local];
                  const float delta = delta_tile[q_local];
#pragma unroll
                  for (int r = 0; r < 2; ++r) {
                    const int j = n0 + key_local0 + 16 * (kST * pass + kt) + 8 * r;
                    float x = st[kt][t][2 * r + e];
                    float prob, dtanh = 1.f;
                    if constexpr (kGeneral) {
                      x *= p.scale;
                      if constexpr (kSoftcap) {
                        const float th = tanhf(x * softcap_inverse);
                        x = p.softcap * th;
                        dtanh = 1.f - th * th;
                      }
                      if constexpr (kAlibi) {
                        const int distance = i + shift32 - j;
                        x -= alibi_slope * static_cast<float>(distance < 0 ? -distance : distance);
                      }
                      if constexpr (kBias) x += bias_tile[kt][t][2 * r + e];
                      prob = ptx::ex2_approx_ftz_f32(x * kLog2e - lse2);
                    } else {
                      prob = ptx::ex2_approx_ftz_f32(x * args.scale_log2 - lse2);
                    }
                    if (needs_mask) {
                      const int offset = j - i - shift32;
                      const bool visible = j < k_end && offset >= off_lo && offset <= off_hi;
                      if (!visible) prob = 0.f;
                    }
                    float keep = 1.f;
                    if constexpr (kGeneral) {
                      if (dropout) {
                        keep = (dropped[kt] >> dropout_transposed_bit<kMTiles>(t, 2 * r + e)) & 1u
                                   ? 0.f
                                   : args.dropout_rescale;
                      }
                    }
                    st[kt][t][2 * r + e] = prob * keep;                                             // P~
                    dpt[kt][t][2 * r + e] = prob * (dpt[kt][t][2 * r + e] * keep - delta) * dtanh;  // dS
                  }
                }
              }
            }
          };
          if constexpr (kBias) {
            // ALiBi at run time here (a zero slope subtracts 0): two instances rather than four.
            if (p.softcap > 0.f) {
              elements.template operator()<true, true, true>();
            } else {
              elements.template operator()<false, true, true>();
            }
          } else if constexpr (kGeneral) {
            if (p.softcap > 0.f) {
              if (alibi_slope != 0.f) {
                elements.template operator()<true, true>();
              } else {
                elements.template operator()<true, false>();
              }
            } else if (alibi_slope != 0.f) {
              elements.template operator()<false, true>();
            } else {
              elements.template operator()<false, false>();
            }
          } else {
            elements.template operator()<false, false>();
          }

          // P~^T and dS^T into shared memory (row = key, column = query), 32-bit stores.
#pragma unroll
          for (int kt = 0; kt < kST; ++kt) {
#pragma unroll
            for (int t = 0; t < kMTiles; ++t) {
#pragma unroll
              for (int r = 0; r < 2; ++r) {
                const std::uint32_t address =
                    ds_store[t] + (16 * (kST * pass + kt) + 8 * r) * DsTile::kPanelCols * sizeof(Element);
                ptx::st_shared_b32(address + kToP,
                                   pack_float2<Element>(st[kt][t][2 * r], st[kt][t][2 * r + 1]));
                ptx::st_shared_b32(address, pack_float2<Element>(dpt[kt][t][2 * r], dpt[kt][t][2 * r + 1]));
              }
            }
          }
        }
      }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if constexpr (Cfg::kDqBulk) {
        // DQ_BULK: the staging tile is rewritten after this barrier; the copy engine must have read it.
        if ((kStaticBulk || args.dq_bulk) && thread == 0) ptx::cp_async_bulk_wait_group_read<0>();
      }
#endif
      __syncthreads();  // P~^T and dS^T complete
      // DQ_BULK_IN_OPERANDS: the other stage is free now (thread 0 saw tile it - 1's bulk reads end).
      if constexpr (kStageInOps) issue_next_copy();

      // dV += P~^T dO and dK += dS^T Q over the whole query tile, the warp's column slice; dQ between
      // them (DQ_BEFORE_DK) or after.
      warp_gemm_nn<Element, DsTile, QTile, Cfg::kBlockM / 16, kKT, Cfg::kColsPerWarp>(
          dv, kToP, ds_phases_a, 0, q_stage + kToDo, q_slice);
      if constexpr (!kDqBeforeDk) {
        warp_gemm_nn<Element, DsTile, QTile, Cfg::kBlockM / 16, kKT, Cfg::kColsPerWarp>(dk, 0u, ds_phases_a,
                                                                                        0, q_stage, q_slice);
      }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if constexpr (kStageInOps) {
        // DQ_BULK_IN_OPERANDS: every warp done with dV and dK before this stage's Q / dO take the dQ tile.
        if (kStaticBulk || args.dq_bulk) __syncthreads();
      }
#endif
      int* semaphore = nullptr;
      if (!kStaticBulk && args.dq_semaphore != nullptr) {
        semaphore = args.dq_semaphore + (batch * p.heads + head) * args.m_blocks + m_block;
        if (thread == 0) {
          const int n_end = (k_end + Cfg::kBlockN - 1) / Cfg::kBlockN;
          const int turn = dq_turn<Cfg>(p.mask, m_block, n_block, n_end, shift32);
          while (*reinterpret_cast<volatile int*>(semaphore) != turn) {
          }
          __threadfence();
        }
        __syncthreads();
      }
      // dQ (fp32 scratch) += dS K: one (16 kDqMT) x kDqTaskCols task per warp, in chunks of kDqChunkCols
      // columns (the dS fragments are read again per chunk; 32 accumulator registers at most beside
      // dK / dV). With two m-tiles every K fragment feeds two MMAs.
      if (kStaticBulk || dq_col0 < p.head_dim) {
#if FLASHATTN_SM80_BWD_STEP_POINTERS
        const std::int64_t dq_row = rows_cur + dq_row0;
#else
        const std::int64_t dq_row = (batch * p.heads + head) * args.rows_padded + m0 + dq_row0;
#endif
        [[maybe_unused]] float* dq_lane =
            DqLaneAdder::lane_pointer(args.dq_accum + dq_row * p.head_dim + dq_col0, p.head_dim, lane);
        constexpr int kChunkCols = Cfg::kDqChunkCols;
#pragma unroll
        for (int c0 = 0; c0 < Cfg::kDqTaskCols; c0 += kChunkCols) {
          if (!kStaticBulk && c0 > 0 && dq_col0 + c0 >= p.head_dim) break;
          float dq[kDqMT][kChunkCols / 8][4];
#pragma unroll
          for (int mt = 0; mt < kDqMT; ++mt) {
#pragma unroll
            for (int t = 0; t < kChunkCols / 8; ++t)
              dq[mt][t][0] = dq[mt][t][1] = dq[mt][t][2] = dq[mt][t][3] = 0.f;
          }
#pragma unroll
          for (int k_step = 0; k_step < Cfg::kBlockN / 16; ++k_step) {
            std::uint32_t a[kDqMT][4];
#pragma unroll
            for (int mt = 0; mt < kDqMT; ++mt) ptx::ldmatrix_x4_trans(a[mt], ds_task.at(16 * k_step, mt));
#pragma unroll
            for (int n_pair = 0; n_pair < kChunkCols / 16; ++n_pair) {
              std::uint32_t b[4];
              ptx::ldmatrix_x4_trans(b, k_task.at(16 * k_step, c0 / 16 + n_pair));
#pragma unroll
              for (int mt = 0; mt < kDqMT; ++mt) {
                mma_16816<Element>(dq[mt][2 * n_pair], a[mt], b[0], b[1]);
                mma_16816<Element>(dq[mt][2 * n_pair + 1], a[mt], b[2], b[3]);
              }
            }
          }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
          if constexpr (Cfg::kDqBulk) {
            if (kStaticBulk || args.dq_bulk) {
              // Into the staging tile (its previous bulk reduction finished reading before the barrier
              // above); thread 0 reduces the whole tile after the next barrier.
              const std::uint32_t stage_row = kStageInOps ? dq_stage_row + q_stage : dq_stage_row;
#pragma unroll
              for (int t = 0; t < kChunkCols / 8; ++t) {
                const int unit = (dq_col0 + c0 + 8 * t) / 4 + ((lane & 3) >> 1);
                const std::uint32_t col_bytes = 16 * dq_bulk_unit(unit, lane >> 2) + 8 * (lane & 1);
#pragma unroll
                for (int mt = 0; mt < kDqMT; ++mt) {
#pragma unroll
                  for (int h = 0; h < 2; ++h) {
                    ptx::st_shared_v2_f32(stage_row + (16 * mt + 8 * h) * Cfg::kHeadDim * 4 + col_bytes,
                                          dq[mt][t][2 * h], dq[mt][t][2 * h + 1]);
                  }
                }
              }
              continue;
            }
          }
#endif
          // Reductions from the registers (never reached in the kStaticBulk instance on sm_90).
          if constexpr (!kBulkOnly) {
#pragma unroll
            for (int mt = 0; mt < kDqMT; ++mt) {
#if FLASHATTN_SM80_BWD_DQ_RED_V2
              if (dq_col0 + c0 + kChunkCols <= p.head_dim) {
                // The whole chunk inside head_dim (every full-width bucket): no per-tile branch.
#pragma unroll
                for (int t = 0; t < kChunkCols / 8; ++t) {
                  DqLaneAdder::add(dq_lane + 16 * mt * p.head_dim + c0 + 8 * t, p.head_dim, dq[mt][t], lane);
                }
                continue;
              }
#endif
#pragma unroll
              for (int t = 0; t < kChunkCols / 8; ++t) {
                // head_dim is a multiple of 8: an n-tile is wholly inside or outside (warp-uniform test).
                if (dq_col0 + c0 + 8 * t < p.head_dim) {
                  DqLaneAdder::add(dq_lane + 16 * mt * p.head_dim + c0 + 8 * t, p.head_dim, dq[mt][t], lane);
                }
              }
            }
          }
        }
      }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if constexpr (Cfg::kDqBulk) {
        if (kStaticBulk || args.dq_bulk) {
          ptx::fence_proxy_async_shared_cta();  // this thread's staging stores before the bulk read
#if FLASHATTN_SM80_BWD_STEP_POINTERS
          dq_pending = args.dq_accum + rows_cur * p.head_dim;
#else
          dq_pending = args.dq_accum + ((batch * p.heads + head) * args.rows_padded + m0) * p.head_dim;
#endif
        }
      }
#endif
      if (semaphore != nullptr) {
        __threadfence();
        __syncthreads();
        if (thread == 0) atomicAdd(semaphore, 1);
      }
      if constexpr (kDqBeforeDk) {
        warp_gemm_nn<Element, DsTile, QTile, Cfg::kBlockM / 16, kKT, Cfg::kColsPerWarp>(dk, 0u, ds_phases_a,
                                                                                        0, q_stage, q_slice);
      }
#if FLASHATTN_SM80_BWD_STEP_POINTERS
      rows_cur += m_block + 1 == range.end ? args.rows_padded - wrap_rows : Cfg::kBlockM;
#endif
      if (++m_block == range.end) {
        m_block = range.begin;
        ++head;
      }
    }
    ptx::cp_async_wait_group<0>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (Cfg::kDqBulk) {
      // DQ_BULK: the last query tile's dQ, completed before the staging tile is reused or the CTA exits.
      if ((kStaticBulk || args.dq_bulk) && dq_pending != nullptr) {
        __syncthreads();
        if (thread == 0) {
          if constexpr (kStageInOps) {
            const std::uint32_t source = q_addr0 + static_cast<std::uint32_t>((iterations - 1) & 1) * kQBytes;
            ptx::cp_reduce_async_bulk_add_f32(dq_pending, source, Cfg::kDqStageBytes / 2);
            ptx::cp_reduce_async_bulk_add_f32(dq_pending + kStageHalfRows * Cfg::kHeadDim, source + kToDo,
                                              Cfg::kDqStageBytes / 2);
          } else {
            ptx::cp_reduce_async_bulk_add_f32(dq_pending, dq_stage, Cfg::kDqStageBytes);
          }
          ptx::cp_async_bulk_commit_group();
          // DEFER_BULK_WAIT_BUCKETS: the staging tile is not rewritten before the next key tile's first mid
          // barrier, where thread 0 waits for every outstanding bulk read, and the kernel's end waits too;
          // so the dK / dV epilogue need not wait here (the operand-ring staging is reused at once).
          if constexpr (!Cfg::kDeferBulkWait) {
#if FLASHATTN_SM80_BWD_LAST_BULK_WAIT_READ
            // Only the staging tile's reuse needs waiting for: the reductions' global writes complete
            // before the postprocess (a later kernel) reads the accumulator.
            ptx::cp_async_bulk_wait_group_read<0>();
#else
            ptx::cp_async_bulk_wait_group<0>();
#endif
          }
        }
      }
    }
#endif

    // dK (scaled) and dV of the warp's keys and column slice; keys past the used ones get zeros
    // (their P and dS are 0).
    auto* dk_out = static_cast<Element*>(p.dk.data);
    auto* dv_out = static_cast<Element*>(p.dv.data);
#if FLASHATTN_SM80_BWD_DKV_VIA_SMEM
    // DKV_VIA_SMEM: the 16-bit dK / dV tiles go through shared memory (from the K tile on: everything
    // is dead once every warp is past its last dQ product and the last bulk read, the barrier below),
    // so each row leaves as 16-byte stores of consecutive chunks (full 32-byte sectors) instead of
    // 4-byte stores that cover 16 bytes of 8 rows each. Rows are padded by one 16-byte chunk: the 8
    // rows of a fragment store then start in 8 different 16-byte bank groups (row pitch = 16 or 80
    // bytes mod 128 for every bucket), and every store address is one register + an immediate (a
    // swizzle would need one register per chunk, which the compiler hoisted out of the walk: 350 B
    // more stack at d 128).
    {
      constexpr int kPitch = Cfg::kHeadDim + Cfg::kChunk;  // elements per staged row
      constexpr std::uint32_t kToDv = Cfg::kBlockN * kPitch * sizeof(Element);
      static_assert(2 * kToDv <= Cfg::kSmemBytes, "the staged dK / dV tiles fit the kernel's shared memory");
      __syncthreads();
      const std::uint32_t stage_lane =
          k_addr + sizeof(Element) * (key_local0 * kPitch + col_base) + 4 * (lane & 3);
#pragma unroll
      for (int kt = 0; kt < kKT; ++kt) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
          for (int t = 0; t < kDTiles; ++t) {
            const std::uint32_t offset = sizeof(Element) * ((16 * kt + 8 * r) * kPitch + 8 * t);
            ptx::st_shared_b32(stage_lane + offset, pack_float2<Element>(dk[kt][t][2 * r] * p.scale,
                                                                         dk[kt][t][2 * r + 1] * p.scale));
            ptx::st_shared_b32(stage_lane + kToDv + offset,
                               pack_float2<Element>(dv[kt][t][2 * r], dv[kt][t][2 * r + 1]));
          }
        }
      }
      __syncthreads();
      const int rows_left =
          kNoMask ? Cfg::kBlockN
                  : static_cast<int>(allocated_k - n0 < Cfg::kBlockN ? allocated_k - n0 : Cfg::kBlockN);
      auto copy_out = [&](Element* dst, std::int64_t row_stride, std::uint32_t from, int cols) {
        if constexpr (Cfg::kThreads % Cfg::kChunksPerRow == 0) {
          // Thread `thread` copies chunk thread % kChunksPerRow of rows thread / kChunksPerRow +
          // multiples of kRowsPerStep: one shared address and one global pointer, stepped.
          constexpr int kRowsPerStep = Cfg::kThreads / Cfg::kChunksPerRow;
          const int row = thread / Cfg::kChunksPerRow;
          const int chunk = thread % Cfg::kChunksPerRow;
          if (chunk * Cfg::kChunk >= cols) return;
          from += sizeof(Element) * (row * kPitch + chunk * Cfg::kChunk);
          dst += row * row_stride + chunk * Cfg::kChunk;
#pragma unroll
          for (int step = 0; step < (Cfg::kBlockN + kRowsPerStep - 1) / kRowsPerStep; ++step) {
            if (row + step * kRowsPerStep < rows_left) {
              *reinterpret_cast<uint4*>(dst) =
                  ptx::ld_shared_v4_b32(from + step * kRowsPerStep * kPitch * sizeof(Element));
            }
            dst += kRowsPerStep * row_stride;
          }
        } else {
          // Buckets whose rows are not a divisor of the block's chunks (d 96, 160, 224).
          constexpr int kChunks = Cfg::kBlockN * Cfg::kChunksPerRow;
          for (int c = thread; c < kChunks; c += Cfg::kThreads) {
            const int row = c / Cfg::kChunksPerRow;
            const int chunk = c % Cfg::kChunksPerRow;
            if (row < rows_left && chunk * Cfg::kChunk < cols) {
              *reinterpret_cast<uint4*>(dst + row * row_stride + chunk * Cfg::kChunk) =
                  ptx::ld_shared_v4_b32(from + sizeof(Element) * (row * kPitch + chunk * Cfg::kChunk));
            }
          }
        }
      };
      copy_out(dk_out + key_offset(p, p.dk, seq, batch, n0, head_kv), p.dk.row_stride, k_addr,
               kNoMask ? Cfg::kHeadDim : static_cast<int>(p.head_dim));
      copy_out(dv_out + key_offset(p, p.dv, seq, batch, n0, head_kv), p.dv.row_stride, k_addr + kToDv,
               kNoMask ? Cfg::kHeadDim : static_cast<int>(p.head_dim_v));
    }
#else
#pragma unroll
    for (int kt = 0; kt < kKT; ++kt) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const std::int64_t j = n0 + key_local0 + 16 * kt + 8 * r;
        if (j >= allocated_k) continue;
        Element* dk_row = dk_out + key_offset(p, p.dk, seq, batch, j, head_kv);
        Element* dv_row = dv_out + key_offset(p, p.dv, seq, batch, j, head_kv);
#pragma unroll
        for (int t = 0; t < kDTiles; ++t) {
          const int col = col_base + 8 * t + 2 * (lane & 3);
          if (col < p.head_dim) {
            *reinterpret_cast<std::uint32_t*>(dk_row + col) =
                pack_float2<Element>(dk[kt][t][2 * r] * p.scale, dk[kt][t][2 * r + 1] * p.scale);
          }
          if (col < p.head_dim_v) {
            *reinterpret_cast<std::uint32_t*>(dv_row + col) =
                pack_float2<Element>(dv[kt][t][2 * r], dv[kt][t][2 * r + 1]);
          }
        }
      }
    }
#endif
    // The next tile's copies overwrite K/V that this tile's last dQ products read.
    __syncthreads();
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // DQ_BULK: the staging rows must stay valid until the copy engine has read them (LAST_BULK_WAIT_READ)
  // or done its reductions.
  if constexpr (Cfg::kDqBulk) {
#if FLASHATTN_SM80_BWD_LAST_BULK_WAIT_READ
    if (kStaticBulk || args.dq_bulk) ptx::cp_async_bulk_wait_group_read<0>();
#else
    if (kStaticBulk || args.dq_bulk) ptx::cp_async_bulk_wait_group<0>();
#endif
  }
#endif
}

}  // namespace flashattn::detail::cuda_sm80
