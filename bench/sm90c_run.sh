#!/usr/bin/env bash
# One device call of the sm90c work (session 3): this tree against the base commit, same card,
# same process. Run from this tree's root, carried inside the main checkout (whose root is the
# base build's source):
#   cd .device-carry/sm90c && bash bench/sm90c_run.sh [ab args, e.g. --gap]
# Steps, each under its own timeout: build this tree (CUDA 80;90a, forward only, tests, CLI,
# Python extension, ptxas -v); build the base's Python extension (90a, d 64/128/256, bf16) in the
# background; the sm90 suites; SASS counts (HGMMA, local memory) of every sm90 forward kernel;
# racecheck + synccheck on the reduced grid; bench/sm90_ab.py (new, base, cuDNN).
# Everything lands in one tar under $OUT (the device tool brings back at most 8 files).
set -uo pipefail
here=$PWD
base_src=$(realpath "${BASE_SRC:-../..}")
out=/tmp/sm90c-out
rm -rf "$out" && mkdir -p "$out"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90c-out.tgz" sm90c-out; }
trap finish EXIT
log() { echo "== $*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv \
  | tee "$out/gpu.txt"
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

start=$(date +%s)
cmake -S . -B build/gpu -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS="80;90a" -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=ON \
  -DPython_EXECUTABLE="$py" -DFLASHATTN_PTXAS_VERBOSE=ON ${SM90C_CMAKE_ARGS:-} >"$out/configure.log" 2>&1
timeout 200 cmake --build build/gpu -j 16 --target flashattn_tests _C >"$out/build.log" 2>&1
rc=$?
log "build rc=$rc in $(( $(date +%s) - start )) s"
[[ $rc == 0 ]] || { tail -30 "$out/build.log"; exit 1; }
grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$out/build.log" | grep -E "entry|spill|Used" \
  | sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])E.*/kernel d\1 dv\2 \3 consumers \4/' \
  >"$out/ptxas.txt"
rm -rf build/pyroot && mkdir -p build/pyroot && cp -r python/flashattn build/pyroot/ &&
  cp build/gpu/python/_C*.so build/pyroot/flashattn/

# The base's extension, built while the GPU runs the suites.
(
  cd "$base_src" &&
    cmake -S . -B build/sm90c-base -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
      -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
      -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
      -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$py" >"$out/base_configure.log" 2>&1 &&
    timeout 200 cmake --build build/sm90c-base -j 8 --target _C >"$out/base_build.log" 2>&1 &&
    mkdir -p "$here/build/pyroot/flashattn_base" && cp -r python/flashattn/. "$here/build/pyroot/flashattn_base/" &&
    cp build/sm90c-base/python/_C*.so "$here/build/pyroot/flashattn_base/" &&
    sed -i 's/"flashattn::/"flashattn_base::/' "$here/build/pyroot/flashattn_base/_ops.py" &&
    git -C "$base_src" log -1 --oneline >"$out/base_commit.txt"
  echo "base build rc=$?" >>"$out/summary.txt"
) &
base_pid=$!
# A variant: this tree with SM90C_VARIANT_FLAGS (e.g. -DFLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV=64),
# or another tree (SM90C_VARIANT_SRC, e.g. an earlier commit carried beside this one), same way.
var_pid=
if [[ -n ${SM90C_VARIANT_FLAGS:-}${SM90C_VARIANT_SRC:-} ]]; then
  (
    cmake -S "${SM90C_VARIANT_SRC:-.}" -B build/sm90c-var -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a \
      -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF \
      -DFLASHATTN_BUILD_TESTS=OFF -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
      -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$py" -DCMAKE_CUDA_FLAGS="${SM90C_VARIANT_FLAGS:-}" \
      >"$out/var_configure.log" 2>&1 &&
      timeout 200 cmake --build build/sm90c-var -j 8 --target _C >"$out/var_build.log" 2>&1 &&
      mkdir -p build/pyroot/flashattn_var && cp -r python/flashattn/. build/pyroot/flashattn_var/ &&
      cp build/sm90c-var/python/_C*.so build/pyroot/flashattn_var/ &&
      sed -i 's/"flashattn::/"flashattn_var::/' build/pyroot/flashattn_var/_ops.py
    echo "variant (${SM90C_VARIANT_SRC:-.} ${SM90C_VARIANT_FLAGS:-}) build rc=$?" >>"$out/summary.txt"
  ) &
  var_pid=$!
fi

tests=build/gpu/tests/flashattn_tests
start=$(date +%s)
timeout 150 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "sm90 suites rc=$? in $(( $(date +%s) - start )) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"

if command -v cuobjdump >/dev/null; then
  sm90_sass_counts build/gpu >"$out/sass.txt" 2>&1
  cuobjdump -sass build/gpu/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim128_bf16.cu.o >"$out/sass_d128_bf16.txt"
  log "sass: $(awk '{s += $NF} END {print s + 0}' "$out/sass.txt") LDL/STL in all sm90 forward kernels"
fi

san='Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/KVCacheTest.*cuda_sm90_3?_*'
for tool in racecheck synccheck; do
  start=$(date +%s)
  timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
    >"$out/sanitize_$tool.log" 2>&1
  log "$tool rc=$? in $(( $(date +%s) - start )) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED)' "$out/sanitize_$tool.log" | tr '\n' ' ')"
done

wait "$base_pid"
[[ -n $var_pid ]] && wait "$var_pid"
start=$(date +%s)
PYTHONPATH=$here/build/pyroot PYTHONUNBUFFERED=1 timeout "${AB_TIMEOUT:-200}" python3 bench/sm90_ab.py "$@" \
  2>&1 | grep -v Warning | tee "$out/ab.jsonl"
log "ab rc=${PIPESTATUS[0]} in $(( $(date +%s) - start )) s"
cat "$out/summary.txt"
