#!/usr/bin/env bash
# One device call of the sm90e work (session 4b: short sequences, the per-tile fixed cost).
# Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90e && bash bench/sm90e_run.sh
# Builds from THIS tree, differing only by compile flags: Python extensions "base"
# (BASE_FLAGS, default -DFLASHATTN_SM90_EARLY_NEXT_S=0) and "new" (NEW_FLAGS, default =1),
# optionally "var" (VAR_FLAGS); d PY_DIMS (default 64;128), bf16, 90a. Beside them one
# test/CLI build with TEST_FLAGS (default = NEW_FLAGS), every head dim, fp16 + bf16.
# Steps, each under a timeout: the sm90 suites; ncu (WarpStateStats, SourceCounters,
# SchedulerStats, SpeedOfLight) of base/new d128 s=512 and base s=8192 (NCU=0 skips);
# bench/sm90_ab.py (base, new, var, cuDNN in one process, AB_ARGS); racecheck + synccheck
# on SAN_FILTER when the call has time left (SAN=1 forces, SAN=0 skips).
# Everything returned lands in one tar under $OUT.
# The two runs of 2026-11-22 (docs/performance-sm90.md, "Session 4b"):
#   run 1: bash bench/sm90e_run.sh        (base 0, new 1, ncu, tests + sanitizers with 1)
#   run 2: NCU=0 SAN=1 VAR_FLAGS=-DFLASHATTN_SM90_EARLY_NEXT_S=2 TEST2_FLAGS=-DFLASHATTN_SM90_EARLY_NEXT_S=2 \
#          bash bench/sm90e_run.sh
set -uo pipefail
out=/tmp/sm90e-out
bld=/tmp/sm90e-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90e-out.tgz" sm90e-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(( $(date +%s) - t0 ))s $*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv \
  | tee "$out/gpu.txt"
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
BASE_FLAGS=${BASE_FLAGS:--DFLASHATTN_SM90_EARLY_NEXT_S=0}
NEW_FLAGS=${NEW_FLAGS:--DFLASHATTN_SM90_EARLY_NEXT_S=1}

build_py() { PY_DIMS=${PY_DIMS:-64;128} sm90_build_py "$1" "$2" 5 200 -DFLASHATTN_PTXAS_VERBOSE=ON; }
rm -rf "$bld/pyroot"
pids=()
build_py base "$BASE_FLAGS" & pids+=($!)
build_py new "$NEW_FLAGS" & pids+=($!)
[[ -n ${VAR_FLAGS:-} ]] && { build_py var "$VAR_FLAGS" & pids+=($!); }

tests=$bld/gpu/tests/flashattn_tests
cmake -S . -B "$bld/gpu" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_HEAD_DIMS="${TEST_DIMS:-64;128;192;256}" -DFLASHATTN_DTYPES="fp16;bf16" \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
  -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="${TEST_FLAGS:-$NEW_FLAGS}" >"$out/gpu_configure.log" 2>&1
timeout 220 cmake --build "$bld/gpu" -j 8 --target flashattn_tests flashattn_cli >"$out/gpu_build.log" 2>&1 &
tb=$!
# Optional second test build (TEST2_FLAGS), e.g. the variant's flags.
if [[ -n ${TEST2_FLAGS:-} ]]; then
  cmake -S . -B "$bld/gpu2" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="${TEST_DIMS:-64;128;192;256}" -DFLASHATTN_DTYPES="fp16;bf16" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$TEST2_FLAGS" >"$out/gpu2_configure.log" 2>&1
  timeout 220 cmake --build "$bld/gpu2" -j 6 --target flashattn_tests >"$out/gpu2_build.log" 2>&1
  log "test build 2 ($TEST2_FLAGS) rc=$?"
fi
wait $tb
log "test build rc=$?"
for pid in "${pids[@]}"; do wait "$pid"; done
# ptxas: spills and wgmma serialisation (C7518) of every sm90 forward kernel of each build.
for f in "$out"/gpu_build.log "$out"/py_*_build.log; do
  echo "-- $(basename "$f"): C7518 lines $(grep -c C7518 "$f")"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$f" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 c\4 long\5 paged\6/'
done >"$out/ptxas.txt" 2>&1
log "ptxas: $(grep -c C7518 "$out"/*_build.log | tr '\n' ' ')"

start=$(date +%s)
timeout 120 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "sm90 suites rc=$? in $(( $(date +%s) - start )) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"
tests2=$bld/gpu2/tests/flashattn_tests
if [[ -n ${TEST2_FLAGS:-} ]]; then
  timeout 120 "$tests2" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests2.log" 2>&1
  log "sm90 suites (build 2) rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests2.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests2.log" | head -20 | tee -a "$out/summary.txt"
fi

if [[ ${NCU:-1} == 1 ]]; then
  sections="--section WarpStateStats --section SourceCounters --section SchedulerStats --section SpeedOfLight"
  PYTHONPATH=$bld/pyroot timeout 60 ncu $sections -k regex:forward_kernel --launch-count 3 -o "$out/ncu_d128" \
    python3 bench/sm90e_ncu_target.py >"$out/ncu.log" 2>&1
  log "ncu rc=$?"
  if [[ -f $out/ncu_d128.ncu-rep ]]; then
    timeout 30 ncu -i "$out/ncu_d128.ncu-rep" --page details >"$out/ncu_d128.txt" 2>&1
    timeout 30 ncu -i "$out/ncu_d128.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip >"$out/ncu_sass_d128.csv.gz"
    log "ncu export done"
  fi
fi

start=$(date +%s)
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${AB_TIMEOUT:-90}" python3 bench/sm90_ab.py ${AB_ARGS:---hdims 64,128} \
  2>&1 | grep -v Warning | tee "$out/ab.jsonl"
log "ab rc=${PIPESTATUS[0]} in $(( $(date +%s) - start )) s"

san=${SAN_FILTER:-'Grid/*cuda_sm90*_d128_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_98_239x1*:Grid/KVCacheTest.*cuda_sm90_3?_*'}
if [[ ${SAN:-auto} == 1 || ( ${SAN:-auto} == auto && $(( $(date +%s) - t0 )) -lt 240 ) ]]; then
  for tool in racecheck synccheck; do
    start=$(date +%s)
    timeout 40 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$tool.log" 2>&1
    log "$tool rc=$? in $(( $(date +%s) - start )) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$tool.log" | tr '\n' ' ')"
    if [[ -x $tests2 ]]; then
      timeout 40 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests2" --gtest_filter="$san" --gtest_brief=1 \
        >"$out/sanitize2_$tool.log" 2>&1
      log "$tool (build 2) rc=$?: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize2_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize2_$tool.log" | tr '\n' ' ')"
    fi
  done
fi
log "total"
cat "$out/summary.txt"
