#!/usr/bin/env bash
# Session 60: cuda_sm90's backward persistent (two consumers; s60_persistent.sh measured it) and in
# deterministic mode (ordered dQ reductions on per-query-block semaphores, tiles claimed in order). The tests
# (the Api routing, the backward grid with its new deterministic cases, the drawn cases, the determinism suite's
# backward cases on cuda_sm90), the sanitizers over the deterministic cases, then the speed of deterministic
# mode beside the default one and cuda_sm80's deterministic mode.
#   bash bench/integration/s60_det.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60d
tests_and_py_build "64;128"
first_cases 'Api.Sm90BackwardRouting:Grid/BackwardTest.*cuda_sm90_*_det*' 90 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 240
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_det*' 200 racecheck synccheck memcheck
(PYTHONPATH=$bld/pyroot timeout 240 python3 bench/backward_compare.py --hdims 64,128 --seqlens 512,2048,8192 \
  --rounds 1 --backends cuda_sm90,cuda_sm90:det,cuda_sm80:det --out "$out/det.json" >"$out/det.jsonl" \
  2>"$out/det.err")
log "compare rc=$? $(tail -2 "$out/det.err" | cut -c1-300)"
log total
