#!/usr/bin/env bash
# One device call of helper sm90q (session 6, issue 6: sm90 forward short rows, Q per consumer
# warpgroup, FLASHATTN_SM90_SPLIT_Q). Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90q && timeout 235 bash bench/sm90q_run.sh
# Builds from THIS tree, in parallel, differing only by compile flags (90a, forward only):
#   Python extensions (bf16, d 64/128/256): base = the defaults (SPLIT_Q 0), new = SPLIT_Q 1 (NEW_FLAGS),
#   and base's extension installed again as "ctrl" (identical kernels: the noise floor);
#   one test build with TEST_FLAGS (default NEW_FLAGS), d 64;128;256, fp16 + bf16.
# Then, each step under a timeout: SASS counts of the d128 kernels (cuobjdump), bench/sm90s_ab.py
# (base, new, ctrl and cuDNN in one process, s 512..4k), the sm90 suites of the test build, racecheck
# + synccheck on SAN_FILTER. Everything returned is one tar under $OUT.
# The switches it measures (FLASHATTN_SM90_SPLIT_Q, FLASHATTN_SM90_STATIC_CONSUMER) lost and exist only
# in the trees of commits 2b5b0b6 (run 1) and 8536cd2 (run 2) of branch sm90q; at a later tree their -D
# flags are silently ignored, so rerun them from those commits (docs/performance-sm90.md, "sm90q").
set -uo pipefail
out=/tmp/sm90q-out
bld=/tmp/sm90q-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90q-out.tgz" sm90q-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-225} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

# Run 1 (commit 2b5b0b6): base = "-DFLASHATTN_SM90_SPLIT_Q=0", new = "-DFLASHATTN_SM90_SPLIT_Q=1", one test
# build with new's flags. Run 2: PY_BUILDS below (name=flags, ";"-separated), two test builds.
PY_BUILDS=${PY_BUILDS:-"base=-DFLASHATTN_SM90_SPLIT_Q=0;new=-DFLASHATTN_SM90_SPLIT_Q=1"}
TEST_FLAGS=${TEST_FLAGS:-"-DFLASHATTN_SM90_SPLIT_Q=1"}

build_py() { PY_DIMS="64;128;256" sm90_build_py "$1" "$2" "${PY_JOBS:-5}" 150 -DFLASHATTN_PTXAS_VERBOSE=ON; }
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
    nice -n 19 timeout 175 cmake --build "$bld/$1" -j "${TEST_JOBS:-6}" --target flashattn_tests >"$out/$1_build.log" 2>&1
  echo "rc=$?" >>"$out/$1_build.log"
}
test_build gpu "$TEST_FLAGS" & tb=$!
tb2=
[[ -n ${TEST2_FLAGS:-} ]] && { test_build gpu2 "$TEST2_FLAGS" & tb2=$!; }
for pid in "${pids[@]}"; do wait "$pid"; done
builds=$(IFS=,; echo "${names[*]}")
if [[ -d $bld/pyroot/flashattn_base ]]; then
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py" && builds+=,ctrl
fi
log "py builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[458]' "$out"/py_*_build.log | tr '\n' ' ')"
for f in "$out"/py_*_build.log; do
  echo "-- $(basename "$f"): wgmma serialisation (C7514/C7515/C7518) lines $(grep -c -E 'C751[458]' "$f")"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$f" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 c\4 long\5 cluster\6 paged\7/'
done >"$out/ptxas.txt" 2>&1
# SASS per d 128 / d 64 forward kernel: instructions, R2UR, uniform ops, HGMMA, local memory.
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

start=$(date +%s)
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "${AB_TIMEOUT:-75}")" python3 bench/sm90s_ab.py --builds "$builds" \
  --seqlens "${AB_SEQLENS:-512,1024,2048,4096}" --rep "${AB_REP:-40}" 2>&1 | grep -v Warning | tee "$out/ab.jsonl"
log "ab rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"

run_tests() {  # run_tests DIR TAG
  local tests=$bld/$1/tests/flashattn_tests start
  log "test build $1: $(tail -1 "$out/$1_build.log"); wgmma serialisation lines $(grep -c -E 'C751[458]' "$out/$1_build.log")"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$out/$1_build.log" | grep -E "spill" | sort | uniq -c >"$out/ptxas_$1.txt"
  start=$(date +%s)
  timeout "$(cap 50)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests_$1.log" 2>&1
  log "sm90 suites ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests_$1.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests_$1.log" | head -20 | tee -a "$out/summary.txt"
  local san=${SAN_FILTER:-'Grid/*cuda_sm90*_d128_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_98_239x1*:Grid/KVCacheTest.*cuda_sm90_3?_*'}
  for tool in racecheck synccheck; do
    (($(left) > 8)) || break
    start=$(date +%s)
    timeout "$(cap 35)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$1_$tool.log" 2>&1
    log "$tool ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$1_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$1_$tool.log" | tr '\n' ' ')"
  done
}
wait $tb
run_tests gpu
if [[ -n $tb2 ]]; then
  wait "$tb2"
  run_tests gpu2
fi
log "total"
