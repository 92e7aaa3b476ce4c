#!/usr/bin/env bash
# Session 11 (issue 4), one device call: the cuda_sm80 Q copy with the K/V panel layout (FLASHATTN_SM80_PANEL_Q=1,
# forward_kernel.h: table rows with panel_loads, i.e. the d256 rows) against the current generic strided Q copy.
#  - Python extensions (d256, bf16, the sm80 kernels compiled for sm_90a): new = the tree (PANEL_Q=0, as
#    flashattn), pq = PANEL_Q=1 (flashattn_pq); bench/sm80d_peers.py, 4 rounds per row, a / pq / FA2 / a2 (control).
#  - the C++ GPU suites '*cuda_sm80*' of a PANEL_Q=1 test build (d256 bf16), and racecheck on two odd shapes.
#   bash bench/integration/s11_pq.sh
# Ran once (2026-11-27, commit 27b18e9, which has the switch; records s11_pq_peers.jsonl, s11_pq_summary.txt): pq / a
# 1.028 and 1.002 at d256 non-causal 512 (two blocks), 0.99-1.014 elsewhere, mean +0.6%, within the control's
# spread; suites 28 / 28 and racecheck clean. Not kept: later trees have no switch (pq builds the tree's code).
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
here=$PWD
device_call_begin s11pq
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT  # more than device_call_begin brings back
PY_DIMS=256 sm90_build_py new "" 5 330 &
PY_DIMS=256 sm90_build_py pq "-DFLASHATTN_SM80_PANEL_Q=1" 5 330 &
(cmake -S . -B "$bld/tests" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS=256 \
   -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_PYTHON=OFF \
   -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM80_PANEL_Q=1" \
   >"$out/tests_configure.log" 2>&1 &&
   timeout 330 cmake --build "$bld/tests" --target flashattn_tests -j 6 >"$out/tests_build.log" 2>&1
 log "test build rc=$?") &
wait
log "builds done"
grep -h "spill" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
SM80D_OTHERS=pq PYTHONPATH=$bld/pyroot:$here/bench PYTHONUNBUFFERED=1 timeout 150 python3 bench/sm80d_peers.py 4 \
  256:0:512,256:0:1024,256:0:2048,256:1:512,256:1:2048,256:0:8192,256:1:8192,256:0:512 2>&1 | grep -v Warning |
  tee -a "$out/peers.jsonl"
log "peers"
tests=$bld/tests/tests/flashattn_tests
if [[ -x $tests ]]; then
  timeout 60 "$tests" --gtest_filter='*cuda_sm80*:-*GarbageIndices*' --gtest_brief=1 >"$out/tests.txt" 2>&1
  log "suites rc=$? $(tail -2 "$out/tests.txt" | tr '\n' ' ')"
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 "$tests" \
    --gtest_filter='Grid/*cuda_sm80*_113x203_*:Grid/*cuda_sm80*_128x217_*' --gtest_brief=1 >"$out/racecheck.txt" 2>&1
  log "racecheck rc=$? $(grep -m1 'SUMMARY' "$out/racecheck.txt")"
fi
python3 - "$out/peers.jsonl" <<'PY' | tee -a "$out/summary.txt"
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"): continue
    r = json.loads(line)
    keys = ["hdim", "causal", "seqlen", "median", "a_over_fa2", "control_a2_over_a", "pq_over_a", "pq_over_fa2"]
    print({k: r[k] for k in keys if k in r})
PY
log total
