#!/usr/bin/env bash
# One call on a GPU machine (the device tool): build with the CUDA backends,
# run every C++ suite against them, sanitizers on a reduced grid, and the CLI's
# GPU bench; then the Python package built with CUDA, its pytest suite on the GPU, and
# bench/compare.py (flashattn beside SDPA's FA2/cuDNN). Everything lands under $OUT (or
# ./gpu-check-out). Each step has its own time limit so a slow step cannot swallow the
# others' results.
#   FLASHATTN_GPU_STEPS="build tests sanitize ptxjit bench python compare"  (default: all)
#   FLASHATTN_COMPARE_ARGS  extra bench/compare.py arguments (e.g. "--modes fwd --hdims 128")
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
steps="${FLASHATTN_GPU_STEPS:-build tests sanitize ptxjit bench python compare}"
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
  # Every sm90 kernel of this build keeps its wgmma pipeline (the ctest sm90_wgmma_pipelines, run here too
  # because the GPU suites below run the test binary directly).
  start=$(date +%s)
  timeout 300 ctest --test-dir "$build" -R '^sm90_wgmma_pipelines$' --output-on-failure >"$out/wgmma_pipelines.log" 2>&1
  log "sm90 wgmma pipelines rc=$? in $(( $(date +%s) - start )) s: $(tail -1 "$out/wgmma_pipelines.log")"
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
  # A reduced grid: the odd shapes of every suite on both CUDA backends, ten backward cases
  # (every option among them) and ten KV-cache cases (paged, append, rotary, packed GQA).
  sanitize_filter='Grid/*cuda_sm*_113x203_*:Grid/*cuda_sm*_128x217_*:Grid/*cuda_sm*_max113x203_*'
  sanitize_filter+=':Grid/BackwardTest.*cuda_sm80_4?_*:Grid/KVCacheTest.*cuda_sm*_3?_*'
  sanitize_filter+=':Grid/*cuda_sm*_4100x4100_*'  # sm90: the four-consumer d64 kernel (both instances); sm80: the d64 main entry
  sanitize_filter+=':Grid/*cuda_sm90*_8193x300_*:Grid/*cuda_sm90*_8200x333_*'  # sm90: the three-consumer d64 kernel
  sanitize_filter+=':Sm90/ConsumerKeyRangeTest.*'  # sm90: per-consumer key ranges (d256; d64 four consumers)
  sanitize_filter+=':Grid/ForwardTest.*cuda_sm90_*_2048x2048_*_d128_*'  # sm90: d128 K/V multicast clusters
  sanitize_filter+=':Spread/ForwardSpreadTest.*cuda_sm90_*'  # sm90: the softmax's exact ways (wide / trending scores)
  for tool in memcheck racecheck synccheck; do
    start=$(date +%s)
    timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" \
      --gtest_filter="$sanitize_filter" \
      --gtest_brief=1 >"$out/sanitize_$tool.log" 2>&1
    log "compute-sanitizer $tool rc=$? in $(( $(date +%s) - start )) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log")"
  done
fi

if [[ " $steps " == *" ptxjit "* ]]; then
  # The sm80 backward kernels JIT-compiled from their compute_80 PTX on this device (what a 9.x GPU runs
  # when a build has no sm_90 SASS): that code has no bulk dQ path, so the host must not choose it
  # (decide_dq_bulk). Backward cases only: the sm90 kernels have no PTX to JIT and would fail to load.
  start=$(date +%s)
  CUDA_FORCE_PTX_JIT=1 timeout 300 "$tests" --gtest_brief=1 \
    --gtest_filter='Grid/BackwardTest.*cuda_sm80_*_2048x2048_*:Grid/BackwardTest.*cuda_sm80_*_300x517_*:Grid/BackwardTest.*cuda_sm80_*_1023x1024_*' \
    >"$out/ptxjit.log" 2>&1
  log "backward under CUDA_FORCE_PTX_JIT=1 rc=$? in $(( $(date +%s) - start )) s: $(grep -E '^\[  (PASSED|FAILED)' "$out/ptxjit.log" | tr '\n' ' ')"
fi

if [[ " $steps " == *" bench "* ]]; then
  "$build/tools/cli/flashattn" info | tee "$out/info.txt"
  timeout 150 "$build/tools/cli/flashattn" bench --json "$out/bench.json" >"$out/bench.txt" 2>&1
  log "bench rc=$?"
  cat "$out/bench.txt"
fi
if [[ " $steps " == *" python "* ]]; then
  # The device machine's Python already has torch, nanobind and scikit-build-core. When the build
  # step ran, add the extension to that build (only the binding compiles) and put it beside a copy
  # of python/flashattn; otherwise `pip install .` with CUDA (every kernel compiles again).
  start=$(date +%s)
  if [[ -f "$build/build.ninja" ]]; then
    cmake -S . -B "$build" -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" \
      >>"$out/configure.log" 2>&1 && timeout 360 cmake --build "$build" --target _C -j "$(nproc)" \
      >"$out/python_build.log" 2>&1
    rc=$?
    rm -rf build/pyroot && mkdir -p build/pyroot && cp -r python/flashattn build/pyroot/ &&
      cp "$build"/python/_C*.so build/pyroot/flashattn/ || rc=1
    export PYTHONPATH=$PWD/build/pyroot
  else
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout 360 python3 -m pip install -q --no-build-isolation \
      --no-deps --force-reinstall . -Cbuild-dir=build/py-cuda -Ccmake.define.FLASHATTN_CUDA=ON \
      -Ccmake.define.FLASHATTN_CUDA_ARCHS="80;90a" ${FLASHATTN_PY_CMAKE_ARGS:-} >"$out/python_build.log" 2>&1
    rc=$?
  fi
  log "python extension (CUDA) rc=$rc in $(( $(date +%s) - start )) s"
  start=$(date +%s)
  # Run outside the source tree so the built package, not python/flashattn, is imported.
  (cd /tmp && timeout 400 python3 -m pytest "$OLDPWD/tests/python" -q -p no:cacheprovider -rs \
    --junitxml="$out/pytest.xml") >"$out/pytest.log" 2>&1
  log "pytest rc=$? in $(( $(date +%s) - start )) s: $(tail -1 "$out/pytest.log")"
  grep -E '^(FAILED|ERROR|SKIPPED)' "$out/pytest.log" | head -30 | tee -a "$out/summary.txt"
fi

if [[ " $steps " == *" compare "* ]]; then
  start=$(date +%s)
  # shellcheck disable=SC2086  # FLASHATTN_COMPARE_ARGS is a list of arguments
  PYTHONUNBUFFERED=1 timeout 420 python3 "$PWD/bench/compare.py" --out "$out/compare" ${FLASHATTN_COMPARE_ARGS:-} \
    >"$out/compare.log" 2>&1
  log "compare rc=$? in $(( $(date +%s) - start )) s"
  sed -n '/^# /,$p' "$out/compare.log"
fi
cat "$out/summary.txt"
