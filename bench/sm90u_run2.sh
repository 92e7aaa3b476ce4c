#!/usr/bin/env bash
# Run 2 of helper sm90u (session 7): the candidates of run 1 again beside the joined tile boundary, each
# build from the tree whose code would be merged, and the suites + sanitizers of every candidate.
#   cd .device-carry/sm90u && DEADLINE=255 timeout 268 bash bench/sm90u_run2.sh
# Trees (both carried): treeA/ = commit f24b6f9 (main + FLASHATTN_SM90_UNIFORM_CONSUMER + sm90q's SPLIT_Q,
# run 1's code: with both switches 0 its kernels are main's), . = commit 275d374 (+ FLASHATTN_SM90_JOINED_TILES,
# Q buffers as a ring). Python extensions (bf16, d 64/128/256): base = treeA defaults (main's kernels),
# ctrl = base's extension again, U = treeA UNIFORM_CONSUMER 1, UQ = treeA + SPLIT_Q 1, UJ = . with
# UNIFORM_CONSUMER 1 + JOINED_TILES 1. Test builds (d 64/128/256, fp16 + bf16): tU (treeA), tUJ (.); UQ's
# (treeA with both switches) is run 1's test build, the same tree and flags.
# Nothing is timed while a compiler runs. A/B by bench/sm90s_ab.py (all builds + cuDNN in one process):
# d 64/128/256 x causal x s 512..2k, then d128 s 8k; then each test build's sm90 suites, racecheck,
# synccheck (U's first). One tar under $OUT.
set -uo pipefail
out=/tmp/sm90u-out
bld=/tmp/sm90u-build
# A warm device keeps /tmp between calls: run 2 found run 1's build folders, whose CMake caches named
# another source folder (its treeA configures failed; run 1's installed packages were timed instead).
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90u-out.tgz" sm90u-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-255} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
root=$(pwd)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

u1="-DFLASHATTN_SM90_UNIFORM_CONSUMER=1"
q1="-DFLASHATTN_SM90_SPLIT_Q=1"
j1="-DFLASHATTN_SM90_JOINED_TILES=1"
build_py() { (cd "$1" && PY_DIMS="64;128;256" sm90_build_py "$2" "$3" "${PY_JOBS:-3}" 175 -DFLASHATTN_PTXAS_VERBOSE=ON); }
test_build() {  # test_build TREE DIR FLAGS
  (cd "$1" && cmake -S . -B "$bld/$2" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="64;128;256" -DFLASHATTN_DTYPES="fp16;bf16" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$3" >"$out/$2_configure.log" 2>&1 &&
    timeout 180 cmake --build "$bld/$2" -j "${TEST_JOBS:-2}" --target flashattn_tests >"$out/$2_build.log" 2>&1)
  echo "rc=$?" >>"$out/$2_build.log"
}
pids=()
build_py treeA base "" & pids+=($!)
build_py treeA U "$u1" & pids+=($!)
build_py treeA UQ "$u1 $q1" & pids+=($!)
build_py "$root" UJ "$u1 $j1" & pids+=($!)
test_build treeA tU "$u1" & pids+=($!)
test_build "$root" tUJ "$u1 $j1" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
builds=base,U,UQ,UJ
if [[ -d $bld/pyroot/flashattn_base ]]; then
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py" && builds+=,ctrl
fi
log "builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[458]' "$out"/py_*_build.log "$out"/t*_build.log | tr '\n' ' ')"
for f in "$out"/py_*_build.log "$out"/t*_build.log; do
  echo "-- $(basename "$f"): wgmma serialisation (C7514/C7515/C7518) lines $(grep -c -E 'C751[458]' "$f")"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$f" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 c\4 long\5 cluster\6 paged\7/'
done >"$out/ptxas.txt" 2>&1
if command -v cuobjdump >/dev/null; then
  for b in base U UQ UJ; do
    for o in "$bld/py-$b"/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim{64,128,256}_bf16.cu.o; do
      [[ -f $o ]] || continue
      timeout 20 cuobjdump -sass "$o" | gzip >"$out/sass_${b}_$(basename "$o" .cu.o).txt.gz"
    done
  done
fi
log "sass done"

ab() {  # ab HDIMS SEQLENS TIMEOUT
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$3")" python3 bench/sm90s_ab.py --builds "$builds" \
    --hdims "$1" --seqlens "$2" --rep "${AB_REP:-40}" 2>&1 | grep -v Warning | tee -a "$out/ab.jsonl"
  log "ab $1 x $2 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
ab 64,128,256 512,1024,2048 70
ab 128 8192 25

run_tests() {  # run_tests DIR
  local tests=$bld/$1/tests/flashattn_tests start
  (($(left) > 10)) || return 0
  log "test build $1: $(tail -1 "$out/$1_build.log")"
  start=$(date +%s)
  timeout "$(cap 40)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests_$1.log" 2>&1
  log "sm90 suites ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests_$1.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests_$1.log" | head -20 | tee -a "$out/summary.txt"
  local san='Grid/*cuda_sm90*_d128_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_98_239x1*:Grid/KVCacheTest.*cuda_sm90_3?_*'
  for tool in racecheck synccheck; do
    (($(left) > 8)) || break
    start=$(date +%s)
    timeout "$(cap 30)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$1_$tool.log" 2>&1
    log "$tool ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$1_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$1_$tool.log" | tr '\n' ' ')"
  done
}
run_tests tU
run_tests tUJ
log "total"
