#!/usr/bin/env bash
# Prepared in session 60, not run: the persistent backward with dynamic claims (s61_dynamic.patch: CTA c starts on
# tile c, its producer claims each further tile from a counter in the workspace that the preprocess zeroes and
# hands it to the other roles through tile_scheduler.h's slot; every two-consumer launch persistent again, causal
# and varlen included). s60_dynamic.patch hung (the producer's setmaxnreg at 32 left the two consumers' increase
# waiting forever); this one keeps 24 beside two consumers and static_asserts that the increase fits (local
# ptxas: d128's consumer region 2 local accesses a tile, none a step; the producer's claim walk spills a few
# words). Predicted against the tree before (one CTA per tile for causal): causal 1k 0.94-0.96 of the time,
# causal 16k within +-2%, non-causal within +-2%. A case alone first (30 s: a hang stops the call), the tests
# and racecheck, then the comparison.
#   bash bench/integration/s61_dynamic.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61y
tests_and_base_around_patch bench/integration/s61_dynamic.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x517_b2_mha4_d128*:Grid/BackwardTest.*cuda_sm90_*517x300*' 30 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 100
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:-*1023x1024*:*_det*' 60 racecheck
backward_compare_vs_base dynamic 90 --hdims 128,64 --seqlens 1024,16384 --rounds 2 --settle-ms 100 \
  --backends cuda_sm90
log total
