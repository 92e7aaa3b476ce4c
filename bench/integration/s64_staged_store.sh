#!/usr/bin/env bash
# Session 64, call 3: STAGED_KEY_STORE (d64 / d128 consumers: dK / dV through shared memory and TMA stores
# instead of 4-byte stores from registers, which call 2's trace read at 6.8 us of a d128 tile's ~74 at 2k
# tokens, persistent, and 4.7 us causal; 2.2-2.3 us at d64). Tests on the tree (the switch on); the base
# package is the tree with it off. Predicted: d128 0.80-0.90x the time at 512, 0.92-0.96x at 2k, ~0.99x at 16k;
# d64 less (0.90-0.97x at 512-2k). Then the trace on the patched tree (s64_bwd_trace2.patch), the backward
# suites, synccheck and racecheck.
#   bash bench/integration/s64_staged_store.sh
# (Run in session 64: d128 0.891 / 0.946 / 0.969 / 0.963 / 0.982x the time causal at 512 / 1k / 2k / 4k / 16k,
# 0.930 / 0.970 / 0.991 / 1.000 / 0.991 non-causal; d64 causal 0.924 / 0.935 / 0.977 / 1.004 / 0.984, non-causal
# 0.99-1.005. The trace: d128 2k persistent dK / dV stores 6.75 -> 1.63 us a tile, the K / V wait now exposed
# (1.7 us median at 512). Suites: 107 passed, Api.Sm90BackwardRouting failed (a build without d256: fixed in the
# test); synccheck and racecheck clean over 34 cases. Kept: d07891f.)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s64s
tree_copy "$bld/trace-tree" bench/integration/s64_bwd_trace2.patch || exit 1
(cd "$bld/trace-tree" && PY_DIMS="64;128" sm90_build_py trace "" 3 400 -DFLASHATTN_BACKWARD=ON) &
tree_and_flag_base "64;128" "-DFLASHATTN_SM90_BWD_STAGED_KEY_STORE=0" -DFLASHATTN_BACKWARD=ON
wait
backward_sm90_first_cases 150
backward_compare_vs_base staged_vs_base 200 --hdims 64,128 --seqlens 512,1024,2048,4096,16384 --rounds 2 \
  --settle-ms 100 --check-max-seqlen 1024 --backends cuda_sm90 --base-backends cuda_sm90
backward_trace_rows
gtest_suites 'Grid/BackwardTest.*cuda*:Random/BackwardRandomTest.*cuda*:*DeterminismTest.Backward*cuda*:Api.*:*CudaRobustness*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*:-*dropout*:*2048x2048*' 100 synccheck racecheck
log total
