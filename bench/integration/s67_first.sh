#!/usr/bin/env bash
# Session 67 (prepared in session 66; run on df14e93, where the switch existed): DQ_V_STAGES2 (backward_dq_kernel.h,
# default 0; the default's PTX identical to the tree before, compared locally): the dQ pass's V in two stages at d = 192 / (192, 128), where they fit (d192
# 192 KB), so that the next key block's V loads while this one's dP is computed; the dQ pass is 36-41% of a
# (192, 128) call (s66_stalls.sh: its stalls gmma 2.28, wait 1.92, long scoreboard 1.18 per issued instruction).
# The tree and its tests built with the switch on (d192, d256: the latter keeps one stage), against the default
# as the base package: every CUDA backward suite, racecheck / synccheck over the d192 grid cases, then d192 and
# 192x128 at 1k / 4k / 16k. Predicted 0.98-1.0x the time (the dQ pass 0.95-1.0x).
# Measured (s67_first_summary.txt): 0.978-1.017x the time, level; suites 29 passed, racecheck / synccheck clean.
# Not kept: the switch is removed; its code is s67_dq_v_stages2.patch (apply it to re-run this script).
#   bash bench/integration/s67_first.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s67f
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_BWD_DQ_V_STAGES2=1" tree_and_flag_base "192;256" "" -DFLASHATTN_BACKWARD=ON
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d192_*' 150 racecheck synccheck
backward_compare_vs_base dq_v_stages 200 --hdims 192,192x128 --seqlens 1024,4096,16384 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
log total
