#!/usr/bin/env bash
# Session 59, third run: the d = 64 instance (each consumer's dQ over its own keys) beside d = 128. A case alone under a
# short timeout (a hang shows there), the backward grid's cuda_sm90 cases (and cuda_sm80's beside them),
# memcheck / racecheck / synccheck over a few of them, the kernel's registers and local memory, pytest's
# interface file, then bench/backward_compare.py (sm90 / sm80 / SDPA cuDNN / SDPA FA2) on a reduced grid.
#   bash bench/integration/s59_bwd3.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s59d
tests_and_py_build "64;128"
cuobjdump -res-usage "$bld/full/src/CMakeFiles/flashattn.dir/cuda/sm90/backward_hdim128_bf16.cu.o" "$bld/full/src/CMakeFiles/flashattn.dir/cuda/sm90/backward_hdim64_bf16.cu.o" 2>&1 |
  grep -A1 backward_kernel | cut -c1-160 >>"$out/summary.txt"
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x517_b2_mha4_d128*' 60 || exit 1
first_cases 'Grid/BackwardTest.*cuda_sm90_*300x517_b2_gqa4x2_d64_*' 60 || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm9*:Grid/BackwardTest.*cuda_sm80*d128*:Grid/BackwardTest.*cuda_sm80*d64_*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:Grid/BackwardTest.*cuda_sm90_*_d64_*:-*1023x1024*' 240 memcheck racecheck synccheck
py_tests_on_gpu test_interface.py
(PYTHONPATH=$bld/pyroot timeout 360 python3 bench/backward_compare.py --hdims 64,128 --seqlens 512,1024,2048,4096,8192,16384 --rounds 2 \
  --out "$out/bwd.json" >"$out/bwd.jsonl" 2>"$out/bwd.err")
log "compare rc=$? $(tail -2 "$out/bwd.err" | cut -c1-300)"
cp "$out/bwd.json" "${OUT:-/tmp}/" 2>/dev/null
log total
