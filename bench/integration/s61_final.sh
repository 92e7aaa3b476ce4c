#!/usr/bin/env bash
# Session 61, the final kernels: racecheck, synccheck and memcheck over the new d = 256 backward's grid cases
# (s61_d256.sh's racecheck filter matched no test), the cuda_sm90 backward suites and Api once more, pytest's
# interface tests, and d256 training steps beside SDPA (bench/training_step.py --dims 256; session 60 read
# d256 causal 4k at 0.75x SDPA's step with cuda_sm80's backward). Predicted: d256 steps 0.80-0.85x SDPA's.
#   bash bench/integration/s61_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s61f
tests_and_py_build "64;128;256" || exit 1
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*_det*:*dropout*:*2048x2048*' 150 racecheck
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d256_*:-*_det*:*dropout*:*2048x2048*' 60 synccheck memcheck
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*:Api.*' 150
py_tests_on_gpu test_interface.py
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 120 python3 "$OLDPWD/bench/training_step.py" --rounds 3 --dims 256 \
  >"$out/steps.jsonl" 2>"$out/steps.err")
log "steps rc=$? $(tail -2 "$out/steps.err" | cut -c1-300)"
log total
