#!/usr/bin/env bash
# Session 59's final tree on the GPU: the build with head dims 64 and 128 (cuda_sm90's backward d128 beside
# cuda_sm80's d64), the ptxas pipeline check of the sm90 units, the backward grid on both CUDA backends, the
# determinism suite, memcheck / racecheck over the cuda_sm90 backward cases, every pytest file that runs on the
# GPU, and the backward comparison at 2k and 16k tokens (one round) as a check of the numbers.
#   bash bench/integration/s59_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s59f
tests_and_py_build "64;128"
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x517_b2_mha4_d128*' 60 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm*:Backends/DeterminismTest.*:Api.*:Validation*' 240
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:-*1023x1024*' 240 memcheck racecheck
py_tests_on_gpu test_interface.py test_dispatch.py test_modules.py test_errors.py test_compile_and_graphs.py
(PYTHONPATH=$bld/pyroot timeout 150 python3 bench/backward_compare.py --seqlens 2048,16384 --rounds 1 \
  --out "$out/bwd.json" >"$out/bwd.jsonl" 2>"$out/bwd.err")
log "compare rc=$? $(tail -2 "$out/bwd.err" | cut -c1-300)"
log total
