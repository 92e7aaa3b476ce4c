#!/usr/bin/env bash
# Session 69, verification of the final tree (padded head dims on cuda_sm90, forward and backward): the full build
# (every head dim, both dtypes, sm_90a), pytest's interface tests on the GPU, Api and the backward's padded grid
# cases once more; then the padded backward beside cuda_sm80's own backward (bench/backward_compare.py: the
# backward call alone, cuda_sm80 forced by name), SDPA's FA2 and cuDNN.
#   bash bench/integration/s69_final.sh
# Run: build 62 s; suites 18 passed; pytest 99 passed; the padded backward 1.18-1.74x cuda_sm80.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s69f
tests_and_py_build "32;64;96;128;160;192;224;256"
gtest_suites 'Api.*:Grid/BackwardTest.*cuda_sm90*_d40_*:Grid/BackwardTest.*cuda_sm90*_d80_*:Grid/BackwardTest.*cuda_sm90*_d224_*' 120
py_tests_on_gpu test_interface.py
(PYTHONPATH=$bld/pyroot timeout 240 python3 bench/backward_compare.py --hdims 40,80,96,160 --seqlens 512,4096 \
  --backends cuda_sm90,cuda_sm80 --rounds 2 --settle-ms 100 --check-max-seqlen 512 --out "$out/bwd_sm80.json" \
  >"$out/bwd_sm80.jsonl" 2>"$out/bwd_sm80.err")
log "backward_compare rc=$? $(tail -2 "$out/bwd_sm80.err" | cut -c1-300)"
log total
