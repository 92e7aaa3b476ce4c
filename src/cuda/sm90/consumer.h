// Consumer warpgroup main loop: for each tile, S = Q K^T and O += P V with
// wgmma over the K/V ring, online softmax in registers, then the epilogue.
//
// Overlap inside a warpgroup: the GEMMs of key block j+1's S and of block j's
// P V are issued together; the softmax of S(j+1) runs while P V(j) is still on
// the tensor cores, and O is rescaled once that GEMM has completed:
//   S0 = QK0;                      softmax(S0) -> P0
//   S1 = QK1, O += P0 V0;  wait S1; softmax(S1) -> c1; wait PV; O *= c1; P1
//   ...
//   O += P_last V_last
// Between warpgroups: each batch of GEMMs is issued in turn (ping-pong with two
// consumers, a rotation with three; named_barriers.h), so one warpgroup's
// softmax hides under the others' GEMMs.
#pragma once

#include <cstdint>

#include "cuda/ptx/approx_math.h"
#include "cuda/ptx/mbarrier.h"
#include "cuda/ptx/ptx.h"
#include "cuda/ptx/shared_memory.h"
#include "cuda/ptx/warpgroup.h"
#include "cuda/ptx/wgmma.h"
#include "cuda/sm80/dropout.h"  // the drop bits, shared with cuda_sm80 and the Hopper backward
#include "cuda/sm90/epilogue.h"
#include "cuda/sm90/kernel_params.h"
#include "cuda/sm90/named_barriers.h"
#include "cuda/sm90/pipeline.h"
#include "cuda/sm90/score_mask.h"
#include "cuda/sm90/softmax.h"
#include "cuda/sm90/split_kv.h"
#include "cuda/sm90/split_tail.h"
#include "cuda/sm90/tile_scheduler.h"

namespace flashattn::detail::cuda_sm90 {

// S = Q_w K^T for this warpgroup's 64 query rows: K-major A (Q) and B (K), one
// wgmma per 16 columns of the head dim that the GEMMs cover (Config::kGemmDim), the first one overwriting S.
// Each k-step's descriptors are the operands' first ones moved by a constant (one add on the low
// word, ptx::smem_desc_moved), here and in gemm_pv. Built in full per step (add, mask, shift, or on
// the uniform datapath), they were dependent chains of four ahead of the HGMMAs, the P V ones all through
// one uniform register pair (d128 issue stretch 116 -> 62 instructions, 359 -> 232 static stall cycles;
// docs/kernel-notes-sm90.md, session 12).
// kFirstStep > 0: only the k-steps from there on (gemm_qk_register_q issued the ones before from registers).
template <class Config, int kFirstStep = 0>
__device__ __forceinline__ void gemm_qk(float (&s)[Config::kBlockN / 2], std::uint32_t q_rows_invariant,
                                        std::uint32_t k) {
  // Q's descriptors are the same for every key block: left visible, the compiler
  // keeps all kHeadDim/16 of them live through the loop, which spilled the
  // accumulators where registers are tight (forward_config.h kRebuildQDescriptors);
  // elsewhere keeping them is cheaper than rebuilding them between the turn
  // barrier and the issue.
  const std::uint32_t q_rows =
      Config::kRebuildQDescriptors ? ptx::opaque_u32(q_rows_invariant) : q_rows_invariant;
  const std::uint64_t desc_a0 = ptx::make_smem_desc_sw128(q_rows, 16, 1024);
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(k, 16, 1024);
#pragma unroll
  for (int kk = kFirstStep; kk < Config::kGemmDim / 16; ++kk) {
    const int offset = (kk % 4) * 32;  // 16 elements = 32 bytes along the swizzled row
    ptx::wgmma_m64k16_ss<Config::kBlockN, typename Config::Element>(
        s, ptx::smem_desc_moved(desc_a0, (kk / 4) * Config::kQChunkBytes + offset, 0),
        ptx::smem_desc_moved(desc_b0, (kk / 4) * Config::kKVChunkBytes + offset, 0), kk > 0 ? 1 : 0);
  }
}

// Config::kRegisterQSteps > 0: S = Q_w K^T with the A fragments of Q's first kRegisterQSteps k-steps in
// registers (load_q_fragments), the rest from shared memory by gemm_qk; B = K K-major. A step from
// registers reads 4 KB of K from shared memory instead of 4 KB of K and 2 KB of Q.
template <class Config>
__device__ __forceinline__ void gemm_qk_register_q(float (&s)[Config::kBlockN / 2],
                                                   const std::uint32_t (&qf)[Config::kQFragmentSteps][4],
                                                   std::uint32_t q_rows, std::uint32_t k) {
  constexpr int kSteps = Config::kRegisterQSteps;
  const std::uint64_t desc_b0 = ptx::make_smem_desc_sw128(k, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk) {
    ptx::wgmma_m64k16_rs<Config::kBlockN, typename Config::Element>(
        s, qf[kk], ptx::smem_desc_moved(desc_b0, (kk / 4) * Config::kKVChunkBytes + (kk % 4) * 32, 0),
        kk > 0 ? 1 : 0);
  }
  if constexpr (kSteps < Config::kGemmDim / 16) gemm_qk<Config, kSteps>(s, q_rows, k);
}

// The A fragments of the first kRegisterQSteps k-steps of this warpgroup's 64 Q rows (q_rows: their first
// chunk's address), one ldmatrix.x4 per 16 head-dim columns. Lane l addresses row 16w + l % 16 (warp w) and
// the 16-byte unit 2 (kk % 4) + l / 16 of 64-column chunk kk / 4, swizzled as TMA's 128-byte swizzle stores
// it (unit ^ row % 8; the rows are 1024-byte aligned), so the four 8x8 matrices land as a0..a3 (rows g / g +
// 8, columns 0-7 / 8-15): the order convert_p gives P's fragments too.
template <class Config>
__device__ __forceinline__ void load_q_fragments(std::uint32_t (&qf)[Config::kQFragmentSteps][4],
                                                 std::uint32_t q_rows, int thread) {
  const int lane = thread % 32;
  const int row = 16 * (thread / 32) + lane % 16;
  const std::uint32_t row_addr = q_rows + row * Config::kRowBytes;
#pragma unroll
  for (int kk = 0; kk < Config::kRegisterQSteps; ++kk) {
    const int unit = 2 * (kk % 4) + lane / 16;
    ptx::ldmatrix_x4(qf[kk], row_addr + (kk / 4) * Config::kQChunkBytes + ((unit ^ (row % 8)) << 4));
  }
}

// O += P V: P from registers (the A fragment of 16 keys is four packed pairs),
// V N-major in shared memory (rows are keys, 64 head-dim columns per chunk; the leading
// byte offset is the distance from one 64-column chunk to the next).
// N = Config::kGemmDimV (narrowed GEMMs: 96, of V's two chunks).
// kRowSumMma: N = dv + 8, and the B operand's second 64-column chunk, of which the GEMM
// reads 8 columns, is the block of ones: the leading byte offset of step kk points from V's
// rows 16kk.. to it, so every step reads the same 2 KB (two 8-row swizzle atoms) and
// o[kHeadDimV / 2 ..] accumulates P 1.
// kRowSumFused (dv = 128): N = 136, the third chunk is the chunk of ones after the V stage's two
// (SharedPipeline::v_ones), one leading offset on from the second like any chunk.
template <class Config>
__device__ __forceinline__ void gemm_pv(float (&o)[Config::kPVN / 2],
                                        const std::uint32_t (&p)[Config::kBlockN / 16][4], std::uint32_t v,
                                        std::uint32_t ones) {
  constexpr bool kOnesBlock = Config::kRowSumMma && !Config::kRowSumFused;
  const std::uint64_t desc0 =
      ptx::make_smem_desc_sw128(v, kOnesBlock ? ones - v : Config::kKVChunkBytes, 1024);
#pragma unroll
  for (int kk = 0; kk < Config::kBlockN / 16; ++kk) {
    const int step = kk * 16 * Config::kRowBytes;
    ptx::wgmma_m64k16_rs_tb<Config::kPVN, typename Config::Element>(
        o, p[kk], ptx::smem_desc_moved(desc0, step, kOnesBlock ? -step : 0), 1);
  }
}

// Probabilities (fp32 accumulator layout) -> A fragments of the P V GEMM. The
// accumulator's columns 16kk..16kk+15 are s[8kk .. 8kk+7] and match the A
// fragment register for register.
template <class Config>
__device__ __forceinline__ void convert_p(const float (&s)[Config::kBlockN / 2],
                                          std::uint32_t (&p)[Config::kBlockN / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < Config::kBlockN / 16; ++kk) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      p[kk][r] = pack_pair<typename Config::Element>(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
    }
  }
}

// Config::kDropout: the words of drop bits of a thread's probabilities of one key block, per 64 keys
// (cuda_sm80::dropout_bits_pairs): accumulator elements x and x + 1 (x even), which one register of P's A
// fragment packs, at bits x % 32 / 2 and x % 32 / 2 + 16 of word x / 32.
template <class Config>
inline constexpr int kDropWords = (Config::kBlockN + 63) / 64;

// The drop bits of key block n_block for this thread's rows row0 and row0 + 8 (query positions: the dropout
// instances do not pack GQA), computed while the block's S GEMM runs: the 4 lanes of a quad share each
// Philox call's 8 draws, so each computes a quarter of the quad's calls (kBlockN / 16 a block) and they
// exchange the bits.
template <class Config>
__device__ __forceinline__ void block_drop_bits(std::uint32_t (&bits)[kDropWords<Config>],
                                                const ForwardKernelParams& p, const WorkTile& w, int n_block,
                                                int row0, int lane) {
  constexpr int kWholeWords = Config::kBlockN / 64;
  constexpr int kRestGroups = Config::kBlockN % 64 / 8;  // 80 keys: 2 column groups more, 96: 4
  static_assert(Config::kBlockN % 16 == 0, "whole pairs of 8-key column groups");
  const std::int64_t batch_head = static_cast<std::int64_t>(w.batch) * p.heads + w.head;
  const int key_group = n_block * (Config::kBlockN / 8);
  auto chunk = [&]<int kGroups>(int q) {
    return cuda_sm80::dropout_bits_pairs<kGroups>(p.dropout_keys, p.dropout_offset, p.dropout_threshold2,
                                                  p.dropout_threshold2_low15, batch_head, row0,
                                                  key_group + 8 * q, lane);
  };
#pragma unroll
  for (int q = 0; q < kWholeWords; ++q) bits[q] = chunk.template operator()<8>(q);
  if constexpr (kRestGroups > 0) bits[kWholeWords] = chunk.template operator()<kRestGroups>(kWholeWords);
}

// Zeroes the dropped probabilities in P's A fragments (after the row sums counted them): pf[kk][j] packs
// elements x = 8 kk + 2 j (low half) and x + 1, whose bits (block_drop_bits) one shift moves to the sign bits
// of bytes 1 and 3, and a byte permute replicates them over their halves: the mask of the dropped halves. The
// kept ones are scaled by 1 / (1 - p) once, with the rows' normalisation (consumer_loop).
template <class Config>
__device__ __forceinline__ void drop_probabilities(std::uint32_t (&pf)[Config::kBlockN / 16][4],
                                                   const std::uint32_t (&bits)[kDropWords<Config>]) {
#pragma unroll
  for (int kk = 0; kk < Config::kBlockN / 16; ++kk) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int x = 8 * kk + 2 * j, bit = x % 32 / 2;
      pf[kk][j] &= ~ptx::prmt_b32<0xBB99>(bits[x / 32] << (15 - bit), 0u);
    }
  }
}

// Whether key block n_block needs the mask (for this consumer's rows under kConsumerKeyRange), decided
// apart from the scores: kEarlyBlockFlags computes it while the block's S GEMM still runs (consumer_loop).
template <class Config>
__device__ __forceinline__ bool block_masked(const ForwardKernelParams& p, const WorkTile& w, int n_block,
                                             const UnmaskedBlocks& clean, int consumer) {
  if constexpr (Config::kTileMaskRange) {
    return n_block < clean.lo || n_block >= clean.hi;
  } else if constexpr (Config::kConsumerKeyRange) {
    return rows_block_needs_mask<Config>(p, w, n_block, w.m_block * Config::kBlockM + 64 * consumer, 64);
  } else {
    return block_needs_mask<Config>(p, w, n_block);
  }
}

// Softcap, then ALiBi (slope_s != 0): the score transforms that run before the mask.
template <class Config>
__device__ __forceinline__ void transform_scores(float (&s)[Config::kBlockN / 2],
                                                 const ForwardKernelParams& p, const WorkTile& w,
                                                 float slope_s, int n_block, int row0) {
  if (p.softcap_in != 0.f) {
#pragma unroll
    for (int i = 0; i < Config::kBlockN / 2; ++i) s[i] = ptx::tanh_approx_f32(s[i] * p.softcap_in);
  }
  if (slope_s != 0.f) apply_alibi<Config::kBlockN>(s, w, slope_s, row0, n_block * Config::kBlockN);
}

// Turns raw scores into what the softmax consumes: the transforms, then the mask where block_masked says
// the block needs it. clean: the tile's blocks that need no mask (kTileMaskRange), else unused.
template <class Config>
__device__ __forceinline__ void prepare_scores(float (&s)[Config::kBlockN / 2], const ForwardKernelParams& p,
                                               const WorkTile& w, float slope_s, int n_block, int row0,
                                               const UnmaskedBlocks& clean, int consumer) {
  transform_scores<Config>(s, p, w, slope_s, n_block, row0);
  if (block_masked<Config>(p, w, n_block, clean, consumer)) {
    apply_score_mask<Config::kBlockN, Config::kMaskForm>(s, p, w, row0, n_block * Config::kBlockN);
  }
}

// prepare_scores with the mask decision made by the caller (block_masked, while the block's S GEMM ran).
template <class Config>
__device__ __forceinline__ void prepare_scores_decided(float (&s)[Config::kBlockN / 2],
                                                       const ForwardKernelParams& p, const WorkTile& w,
                                                       float slope_s, int n_block, int row0, bool masked) {
  transform_scores<Config>(s, p, w, slope_s, n_block, row0);
  if (masked) apply_score_mask<Config::kBlockN, Config::kMaskForm>(s, p, w, row0, n_block * Config::kBlockN);
}

// kDecoded: the producer hands the tiles over decoded (Config::kDecodedHandoff; not in the paged kernels,
// whose consumers spilled in the key-block loop with it: forward_kernel). kPaged: K/V through a block table
// (producer_loop_paged).
template <class Config, bool kDecoded, bool kPaged>
__device__ void consumer_loop(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe,
                              int consumer) {
  constexpr int kO = Config::kPVN / 2;  // O's accumulators (kRowSumMma: then the row sums)
  // Config::kEarlyNextS, except in the paged kernels with O over V (kOOverV): their producer loads a block's
  // K and V together, so a consumer that skips the next tile's top block (skip_top_keys) would wait for that
  // tile's second K, issued after its first V, which waits for the O this consumer has yet to store. There
  // the epilogue goes first; Q is still free after the tile's last S.
  constexpr bool kEarlyNextS = Config::kEarlyNextS && !(kPaged && Config::kOOverV);
  constexpr bool kEarlyNextTile = Config::kEarlyNextTile && kEarlyNextS;
  constexpr int kS = Config::kBlockN / 2;
  const int thread = threadIdx.x % 128;
  const int lane = thread % 32;
  const bool warp_leader = lane == 0;
  constexpr int kConsumers = Config::kConsumerWarpgroups;
  const int my_turn = kIssueTurn + consumer;
  const int next_turn = kIssueTurn + (consumer + 1 == kConsumers ? 0 : consumer + 1);
  // The issue turns (named_barriers.h); a single consumer (the decode kernel) has nobody to take turns with.
  // FlashAttention 3 drops its equivalent above d = 128; here the d >= 192 consumers issuing as they come
  // read 1-2.5% slower at d256 non-causal 512-4k and no faster causal (session 35, s35_free_issue.sh).
  constexpr bool kTurns = kConsumers > 1;
  auto wait_turn = [&] {
    if constexpr (kTurns) ptx::bar_sync(my_turn, 256);
  };
  auto pass_turn = [&] {
    if constexpr (kTurns) ptx::bar_arrive(next_turn, 256);
  };
  const std::uint32_t q_rows = pipe.q() + consumer * 64 * Config::kRowBytes;
  // Config::kRegisterQSteps (the paged instances included: forward_config.h).
  constexpr bool kRegisterQ = Config::kRegisterQSteps > 0;
  std::uint32_t qf[Config::kQFragmentSteps][4];
  // S = Q K^T for the K block (or stand-in) at k; with kRegisterQ, partly or wholly from the fragments of the
  // tile's Q.
  auto gemm_s = [&](float(&acc)[Config::kBlockN / 2], std::uint32_t k) {
    if constexpr (kRegisterQ) {
      gemm_qk_register_q<Config>(acc, qf, q_rows, k);
    } else {
      gemm_qk<Config>(acc, q_rows, k);
    }
  };
  // The received tile's Q fragments (kRegisterQ), before the wgmma fence of its first S: every S GEMM of the
  // previous tile has been waited for by then, and Q's buffer is released only after the tile's last S.
  // (Its first S from shared memory and the fragments loaded after that GEMM's issue read 1.4-3% slower at
  // 512 / 1k keys: bench/integration/s34_rq2.sh.)
  auto load_q = [&] {
    if constexpr (kRegisterQ) load_q_fragments<Config>(qf, q_rows, thread);
  };

  // The last warpgroup opens the first turn for the first one.
  if constexpr (kTurns) {
    if (consumer == kConsumers - 1) ptx::bar_arrive(kIssueTurn, 256);
  }

  RingPosition<Config::kStages> ring;  // K's; V's through vring (the same without kOOverV)
  VRing<Config> vring;
  std::uint32_t q_phase = 0;
  float s[kS];
  WorkTile next_w{};
  KeyBlockRange next_range{};
  int next_item = 0;  // the work item (split_tail.h): its tile index, or under kSplitTail a tail piece
  bool next_keys = false;
  // kConsumerKeyRange: the key blocks of the next tile this consumer's rows see (else the tile's), and
  // where in the ring the V stages of the blocks it skips at the top of the range start.
  KeyBlockRange next_own{};
  RingPosition<Config::kStages> skip_ring;
  // Receives the next tile (false: no work left), waits for its Q and decodes it.
  // kDecoded: the producer hands the tile over decoded, so `decode` only derives this
  // consumer's share.
  auto receive_next = [&]() -> bool {
    int tile;
    if constexpr (kDecoded) {
      const DecodedTile d = receive_decoded_tile(pipe.tile_handoff(), q_phase);  // one tile per Q so far
      tile = d.tile, next_w = d.w, next_range = KeyBlockRange{d.first_block, d.end_block};
    } else {
      tile = receive_tile(pipe.tile_handoff(), q_phase);  // one index per Q so far
    }
    const bool more_tiles = is_work<Config>(p, tile);
    auto decode = [&] {
      if constexpr (!kDecoded) {
        if (Config::kSplitTail && is_tail_item(tile)) {
          tail_piece_work<Config::kClusterM>(p, tile, next_w, next_range);
        } else {
          next_w = work_tile<Config>(p, tile);
          next_range = work_key_blocks<Config>(p, tile, next_w);
        }
      }
      next_item = tile;
      next_keys = next_range.end > next_range.begin;
      if constexpr (Config::kConsumerKeyRange)
        next_own = consumer_key_block_range<Config>(p, next_w, consumer, next_range);
    };
    next_keys = false;
    if (more_tiles) {
      if constexpr (Config::kEarlyDecode) {
        // The producer publishes the index before it loads Q: decode while Q lands.
        decode();
        ptx::mbarrier_wait_parity(pipe.q_full(consumer), q_phase);
        q_phase ^= 1;
      } else {
        ptx::mbarrier_wait_parity(pipe.q_full(consumer), q_phase);
        q_phase ^= 1;
        decode();
      }
    }
    return more_tiles;
  };
  // kEarlyNextS: the received tile's first S GEMM (the last key block in key order), which
  // the tile's body waits for. It is issued on every path: an accumulator issued on one
  // side of a branch and waited for after it makes ptxas serialise every wgmma of the
  // kernel (C7518). With no key block (a tile that sees no key, or no tile left) it
  // multiplies Q's buffer by itself outside the issue rotation, a result nobody reads: Q's
  // rows are not rewritten before the wait (q_empty follows it) and past the last tile
  // nothing writes shared memory.
  // kConsumerKeyRange: the blocks at the top of the tile's range that this consumer's rows do not see
  // (processed first), before its first S: each block's K stage is released once its full barrier
  // completed for this use (an earlier arrive would count toward the stage's previous phase, which the
  // other consumer may still read), and the consumer takes the block's issue turn empty (waits for
  // its turn, passes it on), where its S would have been issued: every consumer then takes as many
  // turns per tile as the tile has blocks + 1 (the rotation is strict), and the others never wait
  // longer for a turn than they would if this one had issued the block. The K stages are released at
  // once, the V stages only after the first S: the producer loads K(j), V(j), K(j - 1), ..., so it can
  // reach the first S's K stage only if no V load before it needs one of the deferred releases, i.e.
  // at most kStages blocks are skipped. Shapes that may skip more (forward_config.h kEagerSkipRelease: the
  // d = 256 masked cluster instance) release each skipped block's V stage in the skip too, once it landed.
  // (Owing the turn to the tile's end made the other consumer's last P V wait for this one's epilogue: d256
  // causal -16..-20%, run 1.) The skipped blocks' V stages follow in the tile's body (skip_ring).
  auto skip_top_keys = [&]() {
    if constexpr (Config::kConsumerKeyRange) {
      skip_ring = ring;
#pragma unroll 1
      for (int n = next_range.end; n > next_own.end; --n) {
        ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
        pipe.release_kv_if(pipe.k_empty(ring.stage), warp_leader);
        if constexpr (Config::kEagerSkipRelease) {
          ptx::mbarrier_wait_parity(pipe.v_full(ring.stage), ring.phase);
          pipe.release_kv_if(pipe.v_empty(ring.stage), warp_leader);
        }
        ring.advance();
        wait_turn();
        pass_turn();
      }
    }
  };
  auto issue_first_s = [&]() {
    if (next_keys) {
      skip_top_keys();
      ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
      wait_turn();
    }
    load_q();
    ptx::wgmma_fence();
    gemm_s(s, next_keys ? pipe.k(ring.stage) : pipe.q());
    ptx::wgmma_commit_group();
    if (next_keys) pass_turn();
  };
  auto begin_tile = [&]() -> bool {
    const bool more_tiles = receive_next();
    if constexpr (kEarlyNextS) issue_first_s();
    return more_tiles;
  };

  bool more = begin_tile();
  while (more) {
    const WorkTile w = next_w;
    [[maybe_unused]] const int item = next_item;
    // kConsumerKeyRange: `range` is this consumer's blocks, `tile_range` the tile's (the producer's).
    const KeyBlockRange tile_range = next_range;
    const KeyBlockRange range = Config::kConsumerKeyRange ? next_own : next_range;
    if constexpr (kEarlyNextS) {
      ptx::wgmma_wait_group<0>();  // the tile's first S GEMM (begin_tile), on every path
      ptx::wgmma_fence_operand(s);
    }
    const float slope_s = p.alibi_slopes != nullptr
                              ? p.alibi_slopes[w.batch * p.alibi_batch_stride + w.head] * p.alibi_to_s
                              : 0.f;
    const int n_blocks = range.end - range.begin;
    // kSplitTail: a piece of its unit's key blocks, whose rows split_tail_combine records and combines (its
    // row sums then without the sink, which the combined rows count once).
    // kSplitKV: likewise a piece of a split tile (split_kv.h). (Chosen at compile time: `|| false`
    // after the tail's test changed the SASS of the tail's kernel, spills included.)
    const bool split = [&] {
      if constexpr (Config::kSplitKV) {
        return splits_keys<Config>(p, item);
      } else {
        return Config::kSplitTail && is_tail_item(item) && split_piece(p, range);
      }
    }();
    // Where the finalisation runs, not here: a pointer held through the key-block loop moved the register
    // allocation of every kernel.
    auto sink = [&]() -> const float* { return p.sink != nullptr && !split ? p.sink + w.head : nullptr; };
    UnmaskedBlocks clean{};
    if constexpr (Config::kTileMaskRange) clean = unmasked_blocks<Config>(p, w);
    const int row0 = w.m_block * Config::kBlockM + consumer * 64 + (thread / 32) * 16 + lane / 4;

    float o[kO];
#pragma unroll
    for (int i = 0; i < kO; ++i) o[i] = 0.f;
    SoftmaxRows rows;
    rows.reset();

    // The epilogue's normalisation factors and its O buffer are made ready while the
    // last P V GEMM runs (they need only the final row state), not after it
    // (kRowSumMma: after it, which yields the row sums).
    RowFinal final_rows;
    if (n_blocks == 0) {
      final_rows = softmax_finalize<!Config::kRowSumMma, Config::kFastFinalize>(rows, p.score_log2, sink());
      claim_output_buffer<Config>(consumer);
      if (!Config::kQFreeAfterS) {
        // nothing to release before the epilogue: it hands Q back itself
      } else if (warp_leader) {
        ptx::mbarrier_arrive(pipe.q_empty(consumer));
      }
      if constexpr (kEarlyNextTile) more = receive_next();
    } else {
      std::uint32_t pf[Config::kBlockN / 16][4];
      float correction[2];
      [[maybe_unused]] std::uint32_t drop[kDropWords<Config>];  // Config::kDropout: the block's drop bits

      // First key block (the last one in key order): S only (issued by begin_tile with
      // kEarlyNextS).
      int n = range.end - 1;
      if constexpr (!kEarlyNextS) skip_top_keys();
      // Stage whose V the next P V GEMM reads (kConsumerKeyRange: first the skipped blocks' V).
      RingPosition<Config::kStages> pv_ring =
          vring.at(Config::kConsumerKeyRange && !Config::kEagerSkipRelease ? skip_ring : ring);
      if constexpr (!kEarlyNextS) {
        ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
        load_q();
        wait_turn();
        ptx::wgmma_fence();
        gemm_s(s, pipe.k(ring.stage));
        ptx::wgmma_commit_group();
        pass_turn();
        ptx::wgmma_wait_group<0>();
        ptx::wgmma_fence_operand(s);
      }
      if (warp_leader) {
        pipe.release_kv(pipe.k_empty(ring.stage));
        if (Config::kQFreeAfterS && n_blocks == 1) ptx::mbarrier_arrive(pipe.q_empty(consumer));
      }
      ring.advance();
      // kConsumerKeyRange: the V stages of the top blocks this consumer skips (skip_top_keys), released
      // here rather than before the first S: the producer loads V(top) before K(top - 1), so by now it
      // has landed, and the first S did not wait for it.
      if constexpr (Config::kConsumerKeyRange && !Config::kEagerSkipRelease) {
#pragma unroll 1
        for (int skipped = tile_range.end; skipped > range.end; --skipped) {
          ptx::mbarrier_wait_parity(pipe.v_full(pv_ring.stage), pv_ring.phase);
          pipe.release_kv_if(pipe.v_empty(pv_ring.stage), warp_leader);
          pv_ring.advance();
        }
      }
      // kRescaleBySum: whether the last block moved a reference (softmax.h softmax_update_by_sum). After a
      // masked first block (a causal diagonal, a window's edge, a ragged end) some rows' references come from
      // few keys, so the second block takes the exact way at once rather than after a triggered pass.
      [[maybe_unused]] bool max_first = false;
      if constexpr (Config::kDropout) block_drop_bits<Config>(drop, p, w, n, row0, lane);
      if constexpr (Config::kRescaleBySum) {
        max_first = block_masked<Config>(p, w, n, clean, consumer);
        prepare_scores_decided<Config>(s, p, w, slope_s, n, row0, max_first);
      } else {
        prepare_scores<Config>(s, p, w, slope_s, n, row0, clean, consumer);
      }
      softmax_update<Config::kBlockN, Config::kConditionalRescale, Config::kTreeReductions,
                     !Config::kRowSumMma, Config::kProbabilityShift>(s, rows, p.score_log2, correction);
      convert_p<Config>(s, pf);
      if constexpr (Config::kDropout) drop_probabilities<Config>(pf, drop);

      // kEarlyBlockFlags: softcap or ALiBi in this tile (then every block is transformed).
      const bool transforms = p.softcap_in != 0.f || slope_s != 0.f;
      for (int i = 1; i < n_blocks; ++i) {
        n = range.end - 1 - i;
        ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
        ptx::mbarrier_wait_parity(pipe.v_full(pv_ring.stage), pv_ring.phase);
        wait_turn();
        ptx::wgmma_fence_operand(o);
        ptx::wgmma_fence();
        gemm_s(s, pipe.k(ring.stage));
        ptx::wgmma_commit_group();
        gemm_pv<Config>(o, pf, pipe.v(pv_ring.stage), pipe.ones());
        ptx::wgmma_commit_group();
        pass_turn();
        if constexpr (Config::kDropout) block_drop_bits<Config>(drop, p, w, n, row0, lane);

        if constexpr (Config::kEarlyBlockFlags) {
          // Everything between S's completion and the softmax that does not need S is decided
          // here, while S runs, and the stage releases are predicated arrives rather than a
          // warp leader's branch: the path from the S wait to the first row maximum is then
          // ~14 mostly independent instructions instead of ~45 dependent ones with three
          // branches (d128 SASS; ~10% of the consumer warps' stall samples sat on that chain).
          const bool masked = block_masked<Config>(p, w, n, clean, consumer);
          const bool special = masked || transforms;
          const bool last_s = Config::kQFreeAfterS && i == n_blocks - 1;
          const std::uint32_t k_empty = pipe.k_empty(ring.stage);
          ring.advance();
          ptx::wgmma_wait_group<1>();  // S(n) done; P V still running
          ptx::wgmma_fence_operand(s);
          pipe.release_kv_if(k_empty, warp_leader);
          if constexpr (Config::kQFreeAfterS)
            ptx::mbarrier_arrive_if(pipe.q_empty(consumer), warp_leader && last_s);
          if (special) prepare_scores_decided<Config>(s, p, w, slope_s, n, row0, masked);
        } else {
          ptx::wgmma_wait_group<1>();  // S(n) done; P V still running
          ptx::wgmma_fence_operand(s);
          if (warp_leader) {
            pipe.release_kv(pipe.k_empty(ring.stage));
            if (Config::kQFreeAfterS && i == n_blocks - 1) ptx::mbarrier_arrive(pipe.q_empty(consumer));
          }
          ring.advance();
          prepare_scores<Config>(s, p, w, slope_s, n, row0, clean, consumer);
        }
        // P V done: its V stage is free, O may be rescaled.
        auto finish_pv = [&]() {
          ptx::wgmma_wait_group<0>();
          ptx::wgmma_fence_operand(o);
          if constexpr (Config::kEarlyBlockFlags) {
            pipe.release_kv_if(pipe.v_empty(pv_ring.stage), warp_leader);
          } else if (warp_leader) {
            pipe.release_kv(pipe.v_empty(pv_ring.stage));
          }
          pv_ring.advance();
        };
        bool rescale;
        if constexpr (Config::kRescaleBySum) {
          // The probabilities go straight into P V's register operand: its GEMM must be done first.
          finish_pv();
          rescale = softmax_update_by_sum<Config::kBlockN, Config::kTreeReductions, !Config::kRowSumMma,
                                          Config::kProbabilityShift>(
              s, pf, rows, p.score_log2, correction,
              [](float lo, float hi) { return pack_pair<typename Config::Element>(lo, hi); }, max_first);
          max_first = rescale;
        } else {
          rescale = softmax_update<Config::kBlockN, Config::kConditionalRescale, Config::kTreeReductions,
                                   !Config::kRowSumMma>(s, rows, p.score_log2, correction);
          finish_pv();
        }
        if (rescale) {  // warp-uniform; rare once the rows' large scores were seen (softmax.h)
#pragma unroll
          for (int j = 0; j < kO; ++j) o[j] *= correction[(j / 2) % 2];
        }
        if constexpr (!Config::kRescaleBySum) convert_p<Config>(s, pf);
        if constexpr (Config::kDropout) drop_probabilities<Config>(pf, drop);
      }

      // Last P V.
      ptx::mbarrier_wait_parity(pipe.v_full(pv_ring.stage), pv_ring.phase);
      wait_turn();
      ptx::wgmma_fence_operand(o);
      ptx::wgmma_fence();
      gemm_pv<Config>(o, pf, pipe.v(pv_ring.stage), pipe.ones());
      ptx::wgmma_commit_group();
      pass_turn();
      if constexpr (!Config::kRowSumMma) {
        final_rows = softmax_finalize<true, Config::kFastFinalize>(rows, p.score_log2, sink());
        if constexpr (Config::kDropout) {
          final_rows.scale[0] *= p.dropout_rescale;
          final_rows.scale[1] *= p.dropout_rescale;
        }
      }
      claim_output_buffer<Config>(consumer);
      // kEarlyNextTile: the next tile's index, Q and decoding while this P V runs too.
      if constexpr (kEarlyNextTile) more = receive_next();
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(o);
      if (warp_leader) pipe.release_kv(pipe.v_empty(pv_ring.stage));
      // kConsumerKeyRange: the blocks at the bottom of the tile's range this consumer's rows do not see
      // (a left window: the later rows' first keys are later), in order: the block's K and V stages
      // released once full, then its issue turn taken empty (skip_top_keys). In this order the other
      // consumer, whose S of the block's successor needs that turn, never waits on a stage that only a
      // later release of this one would free.
      if constexpr (Config::kConsumerKeyRange) {
#pragma unroll 1
        for (int skipped = tile_range.begin; skipped < range.begin; ++skipped) {
          ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
          pipe.release_kv_if(pipe.k_empty(ring.stage), warp_leader);
          const RingPosition<Config::kStages> v_use = vring.at(ring);
          ptx::mbarrier_wait_parity(pipe.v_full(v_use.stage), v_use.phase);
          pipe.release_kv_if(pipe.v_empty(v_use.stage), warp_leader);
          ring.advance();
          wait_turn();
          pass_turn();
        }
      }
      if constexpr (Config::kRowSumMma) {
        // The whole rows' sums, from the last P V GEMM (any of the 8 ones columns).
        rows.sum[0] = o[Config::kGemmDimV / 2];
        rows.sum[1] = o[Config::kGemmDimV / 2 + 2];
        final_rows = softmax_finalize<false, Config::kFastFinalize, Config::kProbabilityShift>(
            rows, p.score_log2, sink());
      }
    }
    // kOOverV: this consumer's O goes over the V stage of the consumer-th V-ring use after the tile's
    // blocks (the producer hands them over in order: give_output_slots); the next tile's V uses follow.
    // The first use's stage takes the next tile's first V, which waits for the O stored there: consumer 0
    // finishes first and takes it. (Under kEarlyNextS, consumer 0 may wait for the next tile's second K
    // before its epilogue, where it skips that tile's top block: the dense producer issues each K one block
    // ahead of V, so that K never waits for this O; the paged kernels store O first: kEarlyNextS above.)
    RingPosition<Config::kStages> o_slot = vring.at(ring);
    if (consumer == 1) o_slot.advance();
    vring.pass_output_slots();
    // kSplitTail / kSplitKV: a split piece's rows are stored by the warpgroup that completes its unit or tile
    // (split_tail.h, split_kv.h).
    auto epilogue = [&] {
      if constexpr (Config::kSplitTail) {
        if (split &&
            !split_tail_combine<Config>(p, w.head, item, consumer, kEpilogue + consumer, o, final_rows))
          return;
      }
      if constexpr (Config::kSplitKV) {
        if (split && !split_kv_combine<Config>(p, w.head, item, kEpilogue + consumer, o, final_rows)) return;
      }
      store_output<Config>(p, pipe, w, consumer, o, final_rows, o_slot);
    };
    if constexpr (kEarlyNextS) {
      // The next tile's first S GEMM goes to the tensor cores before this tile's epilogue,
      // which then runs beside it instead of in front of it.
      if constexpr (kEarlyNextTile) {
        issue_first_s();
      } else {
        more = begin_tile();
      }
      epilogue();
    } else {
      epilogue();
      more = begin_tile();
    }
  }

  // kEarlyNextS: the end marker's stand-in S GEMM (issue_first_s) is still in flight here;
  // no warp leaves with an accumulator pending.
  if constexpr (kEarlyNextS) ptx::wgmma_wait_group<0>();
  // Balance the ping-pong: the last warpgroup's last arrive on the first's turn is consumed here.
  if constexpr (kTurns) {
    if (consumer == 0) ptx::bar_sync(kIssueTurn, 256);
  }
  if (thread == 0) ptx::cp_async_bulk_wait_group<0>();
}

}  // namespace flashattn::detail::cuda_sm90
