#!/usr/bin/env bash
# Session 61: the softcap / ALiBi kernels' probabilities computed while dP^T's GEMM runs (s61_mods2.patch:
# backward_modified_probabilities, the tanh's derivative kept in fp16 pairs until dS^T), against the tree's one
# pass after both GEMMs (s61_mods.sh). Local ptxas: d128 4 LDL a step (spilled loop invariants), d64's
# three-consumer kernel 23 LDL / STL in all; the plain kernels' SASS unchanged. Predicted: d128 0.90-0.95x the
# time, d64 two consumers 0.85-0.92x, three consumers level or slower. The mods cases and suites on the patched
# tree first.
#   bash bench/integration/s61_mods2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61n
tests_and_base_around_patch bench/integration/s61_mods2.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
first_cases 'Grid/BackwardTest.*cuda_sm90_*_softcap_*:Grid/BackwardTest.*cuda_sm90_*_alibi*' 60 || exit 1
gtest_suites 'Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 100
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_softcap_*:Grid/BackwardTest.*cuda_sm90_*_alibi*:-*_det*:*1023x1024*' 80 racecheck
for mods in "--softcap 30" "--alibi"; do
  # shellcheck disable=SC2086  # the options' two words
  backward_compare_vs_base "mods2${mods//[- ]/}" 120 --hdims 128,64 --seqlens 1024,2048,8192 --rounds 2 --settle-ms 100 \
    --check-max-seqlen 2048 --backends cuda_sm90,cuda_sm90:det --base-backends cuda_sm90,cuda_sm90:det $mods
done
log total
