#!/usr/bin/env bash
# Session 42: the backward's host time per call. s42_py.sh read a forward + backward step of the Python
# interface at ~300-760 us of host time against SDPA's ~200-340 (the engine's own cost in both); this times the
# C++ backward call alone (`flashattn run --backward --host-time`, the auto backend: cuda_sm80's backward on the
# H200) beside the forward, and bench/host_calls.cu with cudaFuncGetAttributes and the occupancy query (the
# backward asks the first for the main kernel's PTX version on every call).
# Prediction: the C++ backward 20-40 us per call (4-6 launches and their allocations' absence); if far more, a
# per-call query is the cause.
# One H200 call (~3 minutes).
#   bash bench/integration/s42_bwdhost.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s42w
nvcc -O2 -std=c++17 -arch=sm_90a bench/host_calls.cu -o "$bld/host_calls" >"$out/host_calls_build.log" 2>&1 &&
  "$bld/host_calls" | tee "$out/host_calls.jsonl"
log "host_calls rc=$?"
cmake -S . -B "$bld/cli" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS=128 \
  -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=ON -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
  -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF >"$out/cli_configure.log" 2>&1 &&
  timeout 300 cmake --build "$bld/cli" -j 16 >"$out/cli_build.log" 2>&1
log "CLI build rc=$?"
for args in "-b 1 --seqlen-q 128 --heads 8" "-b 2 --seqlen-q 1024 --heads 16" "-b 1 --seqlen-q 128 --heads 8 --causal"; do
  for dir in "" "--backward"; do
    # shellcheck disable=SC2086  # lists of options
    timeout 60 "$bld/cli/tools/cli/flashattn" run --head-dim 128 --repeat 5 --host-time 50 $dir $args 2>&1 |
      grep -E "^flashattn run|^kernel|^time|^host|FAIL" | tee -a "$out/summary.txt"
  done
done
log "runs done"
