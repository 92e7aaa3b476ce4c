#!/usr/bin/env bash
# Session 60's final tree: the dQ writer kept for deterministic mode at d = 128 only (BackwardConfig::kDqWriter;
# the default-mode kernels and d64's deterministic one have the SASS of 90a13a6, verified by s60_det.sh).
# Tests: the backward grid and drawn cases, the determinism suite's backward cases, the Api suite on cuda_sm90;
# the sanitizers over the deterministic cases; pytest's interface / binding files; then the standard grid's
# backward beside cuDNN and cuda_sm80, both modes.
#   bash bench/integration/s60_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60f
tests_and_py_build "64;128"
first_cases '*DeterminismTest.Backward*cuda_sm90*:Grid/BackwardTest.*cuda_sm90_*_d128_*_det*' 90 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.*cuda_sm90*:Api.*' 240
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_det*' 200 racecheck synccheck memcheck
py_tests_on_gpu test_interface.py test_binding.py
(PYTHONPATH=$bld/pyroot timeout 330 python3 bench/backward_compare.py --hdims 64,128 \
  --seqlens 512,1024,2048,4096,8192,16384 --rounds 2 --settle-ms 100 \
  --backends cuda_sm90,cuda_sm90:det,cuda_sm80,cuda_sm80:det --out "$out/final.json" >"$out/final.jsonl" \
  2>"$out/final.err")
log "compare rc=$? $(tail -2 "$out/final.err" | cut -c1-300)"
log total
