#!/usr/bin/env bash
# One device call for the cuda_sm90 backend: build the library + tests + CLI with
# CUDA (80;90a), run the team's suites on cuda_sm90, racecheck/synccheck on a
# reduced grid, and optionally the CLI bench. Results under $OUT.
#   bench/sm90_suite_run.sh [steps: "build tests sanitize bench"]
# If the working tree's sm80 sources (edited concurrently by others) do not
# build, this copy falls back to their committed versions (only on this machine).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${OUT:-$PWD/sm90-suite-out}"
mkdir -p "$out"
steps="${1:-build tests sanitize}"
build=build/gpu
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
if [[ " $steps " == *" build "* ]]; then
  configure() {
    cmake -S . -B "$build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS="80;90a" -DFLASHATTN_BUILD_TESTS=ON \
      -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_PTXAS_VERBOSE=ON >"$out/configure.log" 2>&1
  }
  configure && timeout 300 cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1
  rc=$?
  if [[ $rc != 0 ]]; then
    echo "== build rc=$rc; retrying with the committed sm80 sources"; grep -m5 error "$out/build.log"
    git checkout HEAD -- src/cuda/sm80 src/cuda/generate_kernels.py
    configure && timeout 300 cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1
    rc=$?
  fi
  echo "== build rc=$rc"
  grep -A2 "sm90.*forward_kernel\|cuda_sm9014forward_kernel" "$out/build.log" | grep -E "spill|Used" | sort | uniq -c
  [[ $rc == 0 ]] || { grep -B2 -A5 error "$out/build.log" | head -40; exit 1; }
fi
tests="$build/tests/flashattn_tests"
if [[ " $steps " == *" tests "* ]]; then
  timeout 240 "$tests" --gtest_filter='*cuda_sm90*' >"$out/tests.log" 2>&1
  echo "== suites rc=$?"
  grep -E '^\[       OK' "$out/tests.log" | sed 's/ (.*//; s/.*MatchesReference\///' | tr '\n' ' '; echo
  grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log"
  grep -E '^\[  FAILED  \]' "$out/tests.log" | head -30
  grep -B3 -A12 'Failure' "$out/tests.log" | head -80
  # Reasons for skips, counted.
  grep -A1 'SKIPPED \]' "$out/tests.log" | grep -v SKIPPED | sort | uniq -c | sort -rn | head -12
fi
if [[ " $steps " == *" sanitize "* ]]; then
  for tool in racecheck synccheck; do
    timeout 100 compute-sanitizer --tool "$tool" "$tests" \
      --gtest_filter='Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_max113x203_*:Grid/*cuda_sm90*_max128x217_*' \
      --gtest_brief=1 >"$out/sanitize_$tool.log" 2>&1
    echo "== $tool rc=$? $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -cE '^\[       OK' "$out/sanitize_$tool.log") ok"
    grep -m6 -E "Race|Hazard|Error|at .*sm90" "$out/sanitize_$tool.log"
  done
fi
if [[ " $steps " == *" bench "* ]]; then
  timeout 150 "$build/tools/cli/flashattn" bench --backend cuda_sm90 --dtype bf16 ${FLASHATTN_BENCH_ARGS:-} \
    >"$out/bench.txt" 2>&1
  echo "== bench rc=$?"; cat "$out/bench.txt"
fi
if [[ " $steps " == *" peers "* ]]; then
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/sm90_sdpa_peers.py "${FLASHATTN_PEER_DIMS:-128}" 2>&1 | grep -v Warning \
    | tee "$out/peers.txt"
fi
