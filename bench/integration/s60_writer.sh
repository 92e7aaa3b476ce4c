#!/usr/bin/env bash
# Session 60: the backward's dQ writer (a thread of the producer warpgroup's warp 1 issues the bulk reductions
# and, in deterministic mode, waits for their turns; the consumers only wait for a free staging buffer).
# s60_writer.patch is that change; the tree with it reversed is built beside as flashattn_base. Predicted:
# deterministic mode 0.74-0.80 -> ~0.9 of the default mode's speed at d128, 0.55-0.73 -> ~0.8 at d64; default
# mode within +-2% (+1-3% at short rows, where the leader's waits for the copy engine sat in the step).
# Second form (after the first run: d64 1-6% slower, deterministic d64 unchanged): the writer waits for the
# copy engine once a step, after issuing the step's reductions, and the consumers wait for a free buffer at the
# step's start (d64 three-consumer kernel: 4 local loads a step, 7 before).
#   bash bench/integration/s60_writer.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60w
tests_and_base_around_patch bench/integration/s60_writer.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x517_b2_mha4_d128*:*DeterminismTest.Backward*cuda_sm90*' 90 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:Grid/BackwardTest.*cuda_sm90_*_d64_*:-*1023x1024*' 240 \
  racecheck synccheck memcheck
backward_compare_vs_base writer 300 --hdims 64,128 --seqlens 512,1024,2048,8192 --rounds 2 \
  --backends cuda_sm90,cuda_sm90:det --base-backends cuda_sm90,cuda_sm90:det
log total
