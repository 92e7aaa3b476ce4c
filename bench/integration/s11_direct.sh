#!/usr/bin/env bash
# Session 11 (issue 6, d256 short rows), one device call: O stored from registers with 16-byte stores
# (FLASHATTN_SM90_DIRECT_O=1: a transpose across each quad, Q released after the last S GEMM, the next
# tile's first S before the epilogue) against the TMA store through Q's rows (the default), d192 / d256.
#  - Python extensions (90a, bf16, d256): base (DIRECT_O=0, twice: base and ctrl), do (DIRECT_O=1);
#    bench/sm90r_ab.py with cuDNN beside, d256 causal and non-causal 512 / 1k / 2k / 8k, two passes.
#  - C++ tests with DIRECT_O=1 (d192 + d256, bf16 + fp16): the '*cuda_sm90*' suites, then compute-sanitizer
#    memcheck / racecheck / synccheck on gpu_check.sh's reduced grid (its d192 / d256 cases).
#   bash bench/integration/s11_direct.sh
# Ran once (2026-11-27, commit eb547ff, which has the switch; records s11_direct_ab.jsonl, s11_direct_summary.txt):
# correct (40 suites, memcheck / racecheck / synccheck clean, 6 float64-checked CLI runs) but do / base 0.947-1.006,
# mean 0.976 over the eight d256 rows (session 8's 4-byte stores: 0.83-0.92). Not kept: later trees have no switch.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s11do
trap 'cp "$out/summary.txt" "$out"/*.jsonl "$out"/tests.txt "$out"/san_*.txt "$out"/cli.txt "${OUT:-/tmp}/" 2>/dev/null' EXIT  # more than device_call_begin brings back
PY_DIMS=256 sm90_build_py base "" 4 300 &
PY_DIMS=256 sm90_build_py do "-DFLASHATTN_SM90_DIRECT_O=1" 4 300 &
(cmake -S . -B "$bld/tests" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_HEAD_DIMS="192;256" \
   -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_PYTHON=OFF \
   -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_FLAGS="-DFLASHATTN_SM90_DIRECT_O=1" \
   -DFLASHATTN_PTXAS_VERBOSE=ON >"$out/tests_configure.log" 2>&1 &&
   timeout 330 cmake --build "$bld/tests" --target flashattn_tests flashattn_cli -j 8 >"$out/tests_build.log" 2>&1
 log "test build rc=$?") &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log "$out/tests_build.log" | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
ab() { sm90_ab "$1" "$2" 256 "$3" "$4" 40 150; }  # ab PASS BUILDS CAUSAL SEQLENS
ab p1 base,do,ctrl 1,0 512,1024,2048,8192
tests=$bld/tests/tests/flashattn_tests
if [[ -x $tests ]]; then
  timeout 120 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.txt" 2>&1
  log "suites rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.txt" | tr '\n' ' ')"
  grep -E "FAILED" "$out/tests.txt" | head -10
  f='Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_max113x203_*:Grid/KVCacheTest.*cuda_sm90*_3?_*'
  f+=':Sm90/ConsumerKeyRangeTest.*'
  for tool in memcheck racecheck synccheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 "$tests" --gtest_filter="$f" --gtest_brief=1 \
      >"$out/san_$tool.txt" 2>&1
    log "$tool rc=$? $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.txt") $(grep -E '^\[  PASSED' "$out/san_$tool.txt")"
  done
fi
# float64-checked runs of the direct store's address paths: packed GQA (decode and short prefill), variable
# lengths, sq != sk, fp16, a sink; every output row is also scanned for unwritten (NaN-poisoned) elements.
cli=$bld/tests/tools/cli/flashattn
run() { timeout 60 $cli run --repeat 2 --verify sample "$@" >>"$out/cli.txt" 2>&1; log "run [$*] rc=$?"; }
if [[ -x $cli ]]; then
  run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 1 --seqlen-k 4096 -b 8 --heads 32 --heads-kv 8
  run --backend cuda_sm90 --head-dim 256 --causal --seqlen-q 7 --seqlen-k 1000 -b 3 --heads 16 --heads-kv 2
  run --backend cuda_sm90 --head-dim 256 --causal --varlen --seqlen-q 2000 -b 3 --heads 8
  run --backend cuda_sm90 --head-dim 256 --seqlen-q 300 --seqlen-k 777 -b 2 --heads 8 --dtype fp16 --sink
  run --backend cuda_sm90 --head-dim 192 --causal --seqlen-q 1111 -b 2 --heads 8 --heads-kv 2
  run --backend cuda_sm90 --head-dim 256 --window 100,0 --seqlen-q 2048 -b 2 --heads 8
fi
ab p2 ctrl,do,base 1,0 512,1024,2048,8192
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base do ctrl | tee -a "$out/summary.txt"
log total
