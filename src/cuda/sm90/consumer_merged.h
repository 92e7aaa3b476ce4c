// Config::kMergedBoundary (forward_config.h MERGED_BOUNDARY; being measured): consumer_loop with the tile
// boundary rearranged so that its epilogue runs beside tensor work:
//   ... softmax(S_1) -> P_1;  S_0 = QK_0, O += P_1 V_1;  wait S_0; softmax(S_0) -> P_0
//   next tile received; S'_top = Q'K'_top, O += P_0 V_0            (one issue turn)
//   wait S'_top; softmax(S'_top); wait P_0 V_0; O finalised and written to shared memory; O' = 0; P'_top
//   S'_top-1 = Q'K'_top-1, O' += P'_top V'_top; the written O stored by TMA, its LSE; ...
// consumer_loop instead issues the last P V alone, waits for it, receives the next tile, issues its first S
// and runs the whole epilogue before that S's softmax. The producer must have issued the next Q and first K
// by the time the last P V is due (producer_loop_early_head, kEarlyQRelease). Only the unmasked K/V
// multicast instance (every tile, split-tail pieces included, has key blocks; no per-consumer key ranges).
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/sm90/consumer.h"

namespace flashattn::detail::cuda_sm90 {

template <class Config>
__device__ void consumer_loop_merged(const ForwardKernelParams& p, const SharedPipeline<Config>& pipe,
                                     int consumer) {
  static_assert(Config::kMergedBoundary && Config::kConsumerWarpgroups == 2 && !Config::kConsumerKeyRange &&
                Config::kRowSumMma && Config::kRescaleBySum &&
                Config::kRegisterQSteps == Config::kHeadDim / 16 && !Config::kOOverV && Config::kSeparateO &&
                !Config::kDecodedHandoff);
  constexpr int kO = Config::kPVN / 2;  // O's accumulators, then the row sums
  constexpr int kS = Config::kBlockN / 2;
  const int thread = threadIdx.x % 128;
  const int lane = thread % 32;
  const bool warp_leader = lane == 0;
  const int my_turn = kIssueTurn + consumer;
  const int next_turn = kIssueTurn + (consumer == 0 ? 1 : 0);
  auto wait_turn = [&] { ptx::bar_sync(my_turn, 256); };
  auto pass_turn = [&] { ptx::bar_arrive(next_turn, 256); };
  const std::uint32_t q_rows = pipe.q() + consumer * 64 * Config::kRowBytes;
  std::uint32_t qf[Config::kQFragmentSteps][4];

  // The last warpgroup opens the first turn for the first one.
  if (consumer == 1) ptx::bar_arrive(kIssueTurn, 256);

  RingPosition<Config::kStages> ring;  // K's and V's
  std::uint32_t q_phase = 0;
  float s[kS];
  float o[kO];
  std::uint32_t pf[Config::kBlockN / 16][4];
  WorkTile next_w{};
  KeyBlockRange next_range{};
  int next_item = 0;
  bool next_keys = false;
  // Receives the next tile (false: no work left), decodes it and waits for its Q.
  auto receive_next = [&]() -> bool {
    const int tile = receive_tile(pipe.tile_handoff(), q_phase);  // one index per Q so far
    const bool more_tiles = is_work<Config>(p, tile);
    next_keys = false;
    if (more_tiles) {
      if (Config::kSplitTail && is_tail_item(tile)) {
        tail_piece_work<Config::kClusterM>(p, tile, next_w, next_range);
      } else {
        next_w = tile_work<Config::kClusterM>(p, tile);
        next_range = key_block_range<Config>(p, next_w);
      }
      next_item = tile;
      next_keys = next_range.end > next_range.begin;
      ptx::mbarrier_wait_parity(pipe.q_full(consumer), q_phase);
      q_phase ^= 1;
    }
    return more_tiles;
  };
  // The received tile's first S (with no key block, or past the last tile, Q's buffer times itself: a result
  // nobody reads, as consumer_loop's issue_first_s) and, in the same turn, the P V whose V is at v_stage (the
  // tile before's last; with_pv false before the first tile: an empty group in its place).
  auto issue_boundary = [&](auto with_pv, std::uint32_t v_stage) {
    if (next_keys) ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
    wait_turn();
    load_q_fragments<Config>(qf, q_rows, thread);
    ptx::wgmma_fence_operand(o);
    ptx::wgmma_fence();
    gemm_qk_register_q<Config>(s, qf, q_rows, next_keys ? pipe.k(ring.stage) : pipe.q());
    ptx::wgmma_commit_group();
    if constexpr (decltype(with_pv)::value) gemm_pv<Config>(o, pf, v_stage, pipe.ones());
    ptx::wgmma_commit_group();
    pass_turn();
  };

  // The tile whose last P V is in flight: what its epilogue needs.
  bool has_prev = false;
  int prev_item =
      0;  // decoded again where its WorkTile is needed: kept whole, it spilled beside the accumulators
  // The tile before's WorkTile, from its item.
  auto prev_tile = [&]() {
    if constexpr (Config::kSplitTail) {
      if (is_tail_item(prev_item))
        return tile_work<Config::kClusterM>(p, tail_piece<Config::kClusterM>(p, prev_item).tile);
    }
    return tile_work<Config::kClusterM>(p, prev_item);
  };
  bool prev_split = false;
  RingPosition<Config::kStages> prev_v{};
  float prev_max[2] = {0.f, 0.f};
  // Its last P V done (waited for by the caller): V's stage released, the rows finalised, O written to shared
  // memory (or, for a split piece, recorded and combined); whether this warpgroup then stores it
  // (epilogue_store).
  RowFinal prev_final{};
  auto epilogue_write = [&]() -> bool {
    if (warp_leader) pipe.release_kv(pipe.v_empty(prev_v.stage));
    SoftmaxRows rows;
    rows.max[0] = prev_max[0], rows.max[1] = prev_max[1];
    rows.sum[0] = o[Config::kHeadDimV / 2];
    rows.sum[1] = o[Config::kHeadDimV / 2 + 2];
    const float* sink = p.sink != nullptr && !prev_split ? p.sink + prev_tile().head : nullptr;
    prev_final =
        softmax_finalize<false, Config::kFastFinalize, Config::kProbabilityShift>(rows, p.score_log2, sink);
    claim_output_buffer<Config>(consumer);
    if constexpr (Config::kSplitTail) {
      if (prev_split && !split_tail_combine<Config>(p, prev_tile().head, prev_item, consumer,
                                                    kEpilogue + consumer, o, prev_final))
        return false;
    }
    write_output_box<Config>(pipe, consumer, o, prev_final, RingPosition<Config::kStages>{});
    return true;
  };
  auto epilogue_store = [&] {
    issue_output_store<Config>(p, pipe, prev_tile(), consumer, pipe.o(consumer), prev_final,
                               RingPosition<Config::kStages>{});
  };

  // O defined on entry (pinned by the first issue's operand fence; zeroed again before its first use).
#pragma unroll
  for (int i = 0; i < kO; ++i) o[i] = 0.f;
  bool more = receive_next();
  issue_boundary(std::false_type{}, 0);
  while (more) {
    const WorkTile w = next_w;
    const int item = next_item;
    const KeyBlockRange range = next_range;
    // The tile's first S and the tile before's last P V (issued together at the boundary). Waiting for the S
    // alone (wait_group<1>), with the softmax before the O write, made ptxas serialise the kernel's wgmmas
    // (C7514): the accumulators in flight then and the softmax's registers exceed the file.
    ptx::wgmma_wait_group<0>();
    ptx::wgmma_fence_operand(s);
    ptx::wgmma_fence_operand(o);
    const float slope_s = p.alibi_slopes != nullptr
                              ? p.alibi_slopes[w.batch * p.alibi_batch_stride + w.head] * p.alibi_to_s
                              : 0.f;
    const int n_blocks = range.end - range.begin;  // >= 1 (above)
    const bool split = Config::kSplitTail && is_tail_item(item) && split_piece(p, range);
    UnmaskedBlocks clean{};
    if constexpr (Config::kTileMaskRange) clean = unmasked_blocks<Config>(p, w);
    const int row0 = w.m_block * Config::kBlockM + consumer * 64 + (thread / 32) * 16 + lane / 4;
    SoftmaxRows rows;
    rows.reset();
    float correction[2];

    // First key block (the last in key order): its S is done.
    int n = range.end - 1;
    RingPosition<Config::kStages> pv_ring = ring;
    if (warp_leader) {
      pipe.release_kv(pipe.k_empty(ring.stage));
      ptx::mbarrier_arrive(pipe.q_empty(consumer));  // kEarlyQRelease: Q is in qf from here on
    }
    ring.advance();
    // The tile before: its O out of the accumulator (pf, its last P V's operand, is free from here on).
    bool store_prev = false;
    if (has_prev) store_prev = epilogue_write();
    bool max_first = block_masked<Config>(p, w, n, clean, consumer);
    prepare_scores_decided<Config>(s, p, w, slope_s, n, row0, max_first);
    softmax_update<Config::kBlockN, Config::kConditionalRescale, Config::kTreeReductions, false,
                   Config::kProbabilityShift>(s, rows, p.score_log2, correction);
#pragma unroll
    for (int i = 0; i < kO; ++i) o[i] = 0.f;
    convert_p<Config>(s, pf);

    const bool transforms = p.softcap_in != 0.f || slope_s != 0.f;
    for (int i = 1; i < n_blocks; ++i) {
      n = range.end - 1 - i;
      ptx::mbarrier_wait_parity(pipe.k_full(ring.stage), ring.phase);
      ptx::mbarrier_wait_parity(pipe.v_full(pv_ring.stage), pv_ring.phase);
      wait_turn();
      ptx::wgmma_fence_operand(o);
      ptx::wgmma_fence();
      gemm_qk_register_q<Config>(s, qf, q_rows, pipe.k(ring.stage));
      ptx::wgmma_commit_group();
      gemm_pv<Config>(o, pf, pipe.v(pv_ring.stage), pipe.ones());
      ptx::wgmma_commit_group();
      pass_turn();
      // The tile before's store, beside this tile's first GEMM pair.
      if (i == 1 && store_prev) {
        epilogue_store();
        store_prev = false;
      }
      const bool masked = block_masked<Config>(p, w, n, clean, consumer);
      const bool special = masked || transforms;
      const std::uint32_t k_empty = pipe.k_empty(ring.stage);
      ring.advance();
      ptx::wgmma_wait_group<1>();  // S(n) done; P V still running
      ptx::wgmma_fence_operand(s);
      pipe.release_kv_if(k_empty, warp_leader);
      if (special) prepare_scores_decided<Config>(s, p, w, slope_s, n, row0, masked);
      ptx::wgmma_wait_group<0>();
      ptx::wgmma_fence_operand(o);
      pipe.release_kv_if(pipe.v_empty(pv_ring.stage), warp_leader);
      pv_ring.advance();
      const bool rescale =
          softmax_update_by_sum<Config::kBlockN, Config::kTreeReductions, false, Config::kProbabilityShift>(
              s, pf, rows, p.score_log2, correction,
              [](float lo, float hi) { return pack_pair<typename Config::Element>(lo, hi); }, max_first);
      max_first = rescale;
      if (rescale) {  // warp-uniform; rare once the rows' large scores were seen (softmax.h)
#pragma unroll
        for (int j = 0; j < kO; ++j) o[j] *= correction[(j / 2) % 2];
      }
    }

    if (store_prev) epilogue_store();  // a one-block tile: the tile before's store is still due

    // The boundary: this tile's last P V goes out with the next tile's first S.
    ptx::mbarrier_wait_parity(pipe.v_full(pv_ring.stage), pv_ring.phase);
    has_prev = true, prev_item = item, prev_split = split, prev_v = pv_ring;
    prev_max[0] = rows.max[0], prev_max[1] = rows.max[1];
    more = receive_next();
    issue_boundary(std::true_type{}, pipe.v(pv_ring.stage));
  }
  // The last tile's epilogue (the end marker's stand-in S is waited for with its last P V); no warp leaves
  // with a group pending.
  ptx::wgmma_wait_group<0>();
  ptx::wgmma_fence_operand(o);
  if (has_prev && epilogue_write()) epilogue_store();
  // Balance the ping-pong: the last warpgroup's last arrive on the first's turn is consumed here.
  if (consumer == 0) ptx::bar_sync(kIssueTurn, 256);
  if (thread == 0) ptx::cp_async_bulk_wait_group<0>();
}

}  // namespace flashattn::detail::cuda_sm90
