#!/usr/bin/env bash
# Session 59: d64's backward on three consumer warpgroups (192-key blocks, 160 registers each: 7 LDL of spilled
# loop invariants a step) against two (128-key blocks, the kernel measured in s59_bwd3.sh), built as
# flashattn_base with FLASHATTN_SM90_BWD_D64_CONSUMERS=2, in one process; the tree's d64 backward cases (grid and
# drawn) and racecheck on the three-consumer kernel first.
#   bash bench/integration/s59_d64.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s59e
PY_DIMS=64 sm90_build_py base "-DFLASHATTN_SM90_BWD_D64_CONSUMERS=2" 6 400 -DFLASHATTN_BACKWARD=ON &
tests_and_py_build "64"
wait
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x517_b2_gqa4x2_d64_*' 60 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d64_*' 200 racecheck memcheck
(PYTHONPATH=$bld/pyroot timeout 240 python3 bench/backward_compare.py --hdims 64 --seqlens 512,2048,8192 \
  --rounds 2 --base-package flashattn_base --out "$out/bwd.json" >"$out/bwd.jsonl" 2>"$out/bwd.err")
log "compare rc=$? $(tail -2 "$out/bwd.err" | cut -c1-300)"
log total
