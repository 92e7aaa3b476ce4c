#!/usr/bin/env bash
# Session 59's final tree (after the d64 instance and its consumer count by length) on the GPU: the build with
# head dims 64 and 128, the backward grid and drawn cases on both CUDA backends, the cuda_sm90 forward grid,
# the API / validation / determinism suites, memcheck / racecheck over the cuda_sm90 backward cases, pytest's
# GPU files, and the backward comparison at d64 / d128 over 512 / 2k / 8k (one round).
#   bash bench/integration/s59_final2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s59g
tests_and_py_build "64;128"
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x2100*' 60 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm*:Random/BackwardRandomTest.*cuda*:Grid/ForwardTest.*cuda_sm90*:Api.*:Validation*:Backends/DeterminismTest.*' 240
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d64_*:Grid/BackwardTest.*cuda_sm90_*300x517*d128*' 200 racecheck memcheck
py_tests_on_gpu test_interface.py test_dispatch.py test_modules.py test_errors.py
(PYTHONPATH=$bld/pyroot timeout 200 python3 bench/backward_compare.py --hdims 64,128 --seqlens 512,2048,8192 \
  --rounds 1 --out "$out/bwd.json" >"$out/bwd.jsonl" 2>"$out/bwd.err")
log "compare rc=$? $(tail -2 "$out/bwd.err" | cut -c1-300)"
log total
