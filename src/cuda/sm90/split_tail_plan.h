// The split tail's plan (forward_config.h SPLIT_TAIL; the kernel side in split_tail.h): which units of the
// static schedule form the tail and how its key blocks are shared among the clusters, and the workspace
// records of the pieces. Host and device, without CUDA headers (tests/split_tail_test.cpp walks plans).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.h"

namespace flashattn::detail::cuda_sm90 {

// The static schedule (kernel_params.h ForwardKernelParams) of units (kClusterM tiles: a cluster's query
// blocks of one head) ends with `units` units cut into key-block ranges, cluster c taking blocks [lo(c),
// lo(c + 1)) of their units * key_blocks in order, lo(c) = c * per_cluster + c * extra / clusters (the floor
// of c * blocks / clusters without 32-bit overflow). start_tile: the tiles before the tail (a multiple of
// the grid; num_tiles when there is no tail).
struct SplitTail {
  int start_tile = 0, start_unit = 0, units = 0;
  int key_blocks = 1;  // per tile (every tile of an unmasked problem of one length has them all)
  int clusters = 1, per_cluster = 0, extra = 0;
  float* partials = nullptr;  // workspace: per CTA two records (its first and last piece) per consumer
  int* arrivals = nullptr;    // workspace, zeroed by the launch: per (tail unit, rank, consumer) pieces done
};

// lo(c): the first tail block of cluster c's share (c <= clusters).
FLASHATTN_HD int tail_share_begin(const SplitTail& t, int cluster) {
  return cluster * t.per_cluster + cluster * t.extra / t.clusters;
}

// At most this many pieces per unit: with a cluster's share of at least half a unit (split_tail_plan) a
// unit meets at most three shares; the plan checks it.
inline constexpr int kMaxTailPieces = 3;

// A consumer warpgroup's record of one piece: per thread its kHeadDimV / 8 float4 of O (the accumulator's
// order), stored thread-fastest so that each of a warp's stores is 512 contiguous bytes, then one float2
// of LSE (its two rows) per thread.
template <int kHeadDimV>
constexpr FLASHATTN_HD std::size_t split_tail_record_floats() {
  return (kHeadDimV / 8) * 128 * 4 + 128 * 2;
}
// Every CTA has two records per consumer (its first and its last piece: the only ones that may be split).
template <int kHeadDimV, int kConsumers>
constexpr FLASHATTN_HD std::size_t split_tail_cta_bytes() {
  return 2 * kConsumers * split_tail_record_floats<kHeadDimV>() * sizeof(float);
}

// Host: the tail of a static schedule of `units` units of kClusterM tiles with `key_blocks` blocks each on
// `clusters` clusters: none (start_tile = num_tiles) when the rounds are whole or a unit has fewer than two
// key blocks. The tail is the last partial round, joined by the full round before it when it fills less
// than half a round, so that every cluster's share is at least half a unit.
inline SplitTail split_tail_plan(int units, int cluster_size, int key_blocks, int clusters) {
  SplitTail t;
  const int num_tiles = units * cluster_size;
  t.start_tile = num_tiles;
  const int rounds = units / clusters, rest = units % clusters;
  // (Work items at or past 2^30 are tail pieces: split_tail.h kTailItem.)
  if (rest == 0 || key_blocks < 2 || clusters < 2 || num_tiles >= (1 << 30)) return t;
  int tail_units = rest;
  if (2 * rest < clusters) {
    if (rounds == 0) return t;
    tail_units += clusters;
  }
  const std::int64_t blocks = static_cast<std::int64_t>(tail_units) * key_blocks;
  if (blocks > (std::int64_t{1} << 30)) return t;  // lo(c) in 32 bits (units of ~1 G keys: never in practice)
  t.units = tail_units;
  t.start_unit = units - tail_units;
  t.start_tile = t.start_unit * cluster_size;
  t.key_blocks = key_blocks;
  t.clusters = clusters;
  t.per_cluster = static_cast<int>(blocks / clusters);
  t.extra = static_cast<int>(blocks % clusters);
  // Pieces per unit, checked rather than trusted to the bound above.
  int c = 0;
  for (int u = 0; u < tail_units; ++u) {
    const int first = u * key_blocks, end = first + key_blocks;
    while (tail_share_begin(t, c + 1) <= first) ++c;
    int last = c;
    while (tail_share_begin(t, last + 1) < end) ++last;
    if (last - c + 1 > kMaxTailPieces) {
      t.start_tile = num_tiles;
      return t;
    }
  }
  return t;
}

}  // namespace flashattn::detail::cuda_sm90
