#!/usr/bin/env bash
# Session 67, last call: the d <= 128 consumer's drop bits a step ahead, computed while the step before waits
# for its dV / dK / dQ GEMMs (s67_early_bits.patch), instead of after S^T and dP^T's issue, where at d64 the
# two GEMMs (~512 tensor cycles of both consumers) are shorter than 4 Philox calls of two warps a scheduler.
# The tree against the patch reversed (flashattn_base), in one process: cuda_sm90's general / dropout grid,
# drawn and determinism cases; dropout 0.1 at d64 / d128, 1k / 4k / 16k. Predicted d64 0.85-0.92x the time,
# d128 0.95-1.0x (local ptxas: d128's general kernel spills 32 bytes with it, 16 without).
#   bash bench/integration/s67_early_bits.sh
# Run (6cdcc95, the patch applied): suites 55 passed. d64 1.033-1.113x the time (slower), d128 0.964-1.021x
# (four rows faster by 1.6-3.6%, 16k causal slower): not kept, the code reverted (s67_early_bits.patch keeps it).
# At d64 the warps that compute the next step's Philox while the GEMMs run are the ones that must then stage dQ
# and reach the next step's barrier: the step's critical path grew rather than shrank. Record:
# s67_early_bits_summary.txt, s67_early_bits.jsonl.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67e
tests_and_base_around_patch bench/integration/s67_early_bits.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 120
backward_compare_vs_base early 150 --hdims 64,128 --seqlens 1024,4096,16384 --dropout 0.1 --rounds 2 \
  --settle-ms 100 --backends cuda_sm90 --base-backends cuda_sm90
log total
