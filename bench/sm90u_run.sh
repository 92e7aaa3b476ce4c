#!/usr/bin/env bash
# One device call of helper sm90u (session 7, issue 6: sm90 forward short rows; the consumer index made
# provably warp-uniform, FLASHATTN_SM90_UNIFORM_CONSUMER, alone and with SPLIT_Q). Run from this tree's
# root, carried inside the main checkout:
#   cd .device-carry/sm90u && DEADLINE=250 timeout 262 bash bench/sm90u_run.sh
# Builds from THIS tree, all in parallel, differing only by compile flags (90a, forward only):
#   Python extensions (bf16, d 64/128/256), PY_BUILDS = "name=flags;..." (base's extension is installed
#   a second time as "ctrl": identical kernels, the noise floor); test builds (d 64/128/256, fp16 +
#   bf16) with TEST_FLAGS (and TEST2_FLAGS if set).
# Every build finishes before anything is timed (no compiler beside the A/B). Then, each step under a
# timeout: SASS counts of the forward kernels (cuobjdump), bench/sm90s_ab.py (every build + ctrl + cuDNN
# in one process) on d 64/128/256 x causal x s 512..2k and on d128 8k, the sm90 suites of the test
# builds, racecheck + synccheck on SAN_FILTER. Everything returned is one tar under $OUT.
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
left() { echo $((${DEADLINE:-250} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

u1="-DFLASHATTN_SM90_UNIFORM_CONSUMER=1"
PY_BUILDS=${PY_BUILDS:-"base=;U=$u1;UQ=$u1 -DFLASHATTN_SM90_SPLIT_Q=1"}
TEST_FLAGS=${TEST_FLAGS:-"$u1 -DFLASHATTN_SM90_SPLIT_Q=1"}

build_py() { PY_DIMS="64;128;256" sm90_build_py "$1" "$2" "${PY_JOBS:-4}" 170 -DFLASHATTN_PTXAS_VERBOSE=ON; }
pids=()
names=()
IFS=';' read -ra specs <<<"$PY_BUILDS"
for spec in "${specs[@]}"; do
  build_py "${spec%%=*}" "${spec#*=}" & pids+=($!)
  names+=("${spec%%=*}")
done
test_build() {  # test_build DIR FLAGS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="${TEST_DIMS:-64;128;256}" -DFLASHATTN_DTYPES="fp16;bf16" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$2" >"$out/$1_configure.log" 2>&1 &&
    timeout 170 cmake --build "$bld/$1" -j "${TEST_JOBS:-4}" --target flashattn_tests >"$out/$1_build.log" 2>&1
  echo "rc=$?" >>"$out/$1_build.log"
}
test_build gpu "$TEST_FLAGS" & pids+=($!)
[[ -n ${TEST2_FLAGS:-} ]] && { test_build gpu2 "$TEST2_FLAGS" & pids+=($!); }
for pid in "${pids[@]}"; do wait "$pid"; done
builds=$(IFS=,; echo "${names[*]}")
if [[ -d $bld/pyroot/flashattn_base ]]; then
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py" && builds+=,ctrl
fi
log "builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[458]' "$out"/py_*_build.log "$out"/gpu*_build.log | tr '\n' ' ')"
for f in "$out"/py_*_build.log "$out"/gpu*_build.log; do
  echo "-- $(basename "$f"): wgmma serialisation (C7514/C7515/C7518) lines $(grep -c -E 'C751[458]' "$f")"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$f" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 c\4 long\5 cluster\6 paged\7/'
done >"$out/ptxas.txt" 2>&1
# SASS per forward kernel: instructions, R2UR, uniform ops, HGMMA, local memory; the d128 SASS itself.
if command -v cuobjdump >/dev/null; then
  for b in "${names[@]}"; do
    [[ -f "$bld/py-$b/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim128_bf16.cu.o" ]] &&
      timeout 20 cuobjdump -sass "$bld/py-$b/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim128_bf16.cu.o" |
      gzip >"$out/sass_${b}_d128.txt.gz"
    for o in "$bld/py-$b"/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim{64,128,256}_bf16.cu.o; do
      [[ -f $o ]] || continue
      timeout 20 cuobjdump -sass "$o" | awk -v f="$b $(basename "$o")" '
        /Function : .*forward_kernel/ {name = $3; next}
        /Function :/ {name = ""}
        name != "" && /\/\*[0-9a-f]+\*\// {n[name]++}
        name != "" && /R2UR/ {r[name]++}
        name != "" && / U[A-Z0-9]+[ .]/ {u[name]++}
        name != "" && /HGMMA/ {h[name]++}
        name != "" && /LDL|STL/ {l[name]++}
        END {for (k in n) printf "%s %s instr %d R2UR %d U-ops %d HGMMA %d LDL/STL %d\n", f, substr(k, 1, 90), n[k], r[k] + 0, u[k] + 0, h[k] + 0, l[k] + 0}'
    done
  done >"$out/sass_counts.txt" 2>&1
fi
log "sass counts done"

ab() {  # ab HDIMS SEQLENS TIMEOUT
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$3")" python3 bench/sm90s_ab.py --builds "$builds" \
    --hdims "$1" --seqlens "$2" --rep "${AB_REP:-40}" 2>&1 | grep -v Warning | tee -a "$out/ab.jsonl"
  log "ab $1 x $2 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
ab "${AB_HDIMS:-64,128,256}" "${AB_SEQLENS:-512,1024,2048}" "${AB_TIMEOUT:-75}"
ab 128 8192 25

run_tests() {  # run_tests DIR
  local tests=$bld/$1/tests/flashattn_tests start
  log "test build $1: $(tail -1 "$out/$1_build.log")"
  start=$(date +%s)
  timeout "$(cap 50)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests_$1.log" 2>&1
  log "sm90 suites ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests_$1.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests_$1.log" | head -20 | tee -a "$out/summary.txt"
  local san=${SAN_FILTER:-'Grid/*cuda_sm90*_d128_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_98_239x1*:Grid/KVCacheTest.*cuda_sm90_3?_*'}
  for tool in ${SAN_TOOLS:-racecheck synccheck}; do
    (($(left) > 8)) || break
    start=$(date +%s)
    timeout "$(cap 35)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$1_$tool.log" 2>&1
    log "$tool ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$1_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$1_$tool.log" | tr '\n' ' ')"
  done
}
run_tests gpu
[[ -n ${TEST2_FLAGS:-} ]] && run_tests gpu2
log "total"
