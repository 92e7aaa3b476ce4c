#!/usr/bin/env bash
# One call on a GPU machine (the device tool): build with the CUDA backends,
# run every C++ suite against them, sanitizers on a reduced grid, and the CLI's
# GPU bench. Everything lands under $OUT (or ./gpu-check-out). Each step has its
# own time limit so a slow step cannot swallow the others' results.
#   FLASHATTN_GPU_STEPS="build tests sanitize bench"  (default: all)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
steps="${FLASHATTN_GPU_STEPS:-build tests sanitize bench}"
build=build/gpu
log() { echo "== $*" | tee -a "$out/summary.txt"; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
nvcc --version | tail -1 >>"$out/gpu.txt"

if [[ " $steps " == *" build "* ]]; then
  start=$(date +%s)
  cmake -S . -B "$build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS="80;90a" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=ON ${FLASHATTN_CMAKE_ARGS:-} >"$out/configure.log" 2>&1
  timeout 360 cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1
  rc=$?
  log "build rc=$rc in $(( $(date +%s) - start )) s on $(nproc) cores"
  # Per-object compile seconds (ninja log): the data behind the 2-core build-time estimate.
  awk 'NR > 1 {printf "%.1f %s\n", ($2 - $1) / 1000, $4}' "$build/.ninja_log" | sort -rn >"$out/compile_times.txt"
  awk '{s += $1} END {printf "== sum of compile seconds: %.0f (2-core estimate %.0f min)\n", s, s / 2 / 60}' \
    "$out/compile_times.txt" | tee -a "$out/summary.txt"
  [[ $rc == 0 ]] || { tail -40 "$out/build.log"; exit 1; }
fi

tests="$build/tests/flashattn_tests"
if [[ " $steps " == *" tests "* ]]; then
  start=$(date +%s)
  timeout 300 "$tests" --gtest_filter='*cuda_sm*' --gtest_brief=1 \
    --gtest_output="xml:$out/gpu_tests.xml" >"$out/gpu_tests.log" 2>&1
  rc=$?
  log "GPU suites rc=$rc in $(( $(date +%s) - start )) s"
  grep -E '^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]' "$out/gpu_tests.log" | sort | uniq -c | sort -rn | head -60 \
    | tee -a "$out/summary.txt"
  tail -5 "$out/gpu_tests.log" | tee -a "$out/summary.txt"
fi

if [[ " $steps " == *" sanitize "* ]]; then
  for tool in memcheck racecheck synccheck; do
    start=$(date +%s)
    timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" \
      --gtest_filter='Grid/*cuda_sm*_113x203_*:Grid/*cuda_sm*_128x217_*:Grid/*cuda_sm*_max113x203_*' \
      --gtest_brief=1 >"$out/sanitize_$tool.log" 2>&1
    log "compute-sanitizer $tool rc=$? in $(( $(date +%s) - start )) s: $(grep -m1 'ERROR SUMMARY' "$out/sanitize_$tool.log")"
  done
fi

if [[ " $steps " == *" bench "* ]]; then
  "$build/tools/cli/flashattn" info | tee "$out/info.txt"
  timeout 150 "$build/tools/cli/flashattn" bench --json "$out/bench.json" >"$out/bench.txt" 2>&1
  log "bench rc=$?"
  cat "$out/bench.txt"
fi
cat "$out/summary.txt"
