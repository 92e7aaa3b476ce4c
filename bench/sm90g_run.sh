#!/usr/bin/env bash
# One device call of the sm90g work (session 5: per-tile fixed cost at short sequences).
# The switches it builds exist only on branch sm90g (not merged on main: both measured slower).
# Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90g && bash bench/sm90g_run.sh
# Builds from THIS tree, differing only by compile flags (FLASHATTN_SM90_Q_BUFFERS: 2 = the
# next tile's first S joins the last P V's batch; FLASHATTN_SM90_DECODED_HANDOFF: 1 = the
# producer hands the decoded tile over): Python extensions base (BASE_FLAGS, default 1/0 =
# the branch point's kernels), new (NEW_FLAGS, default 2/0), var (VAR_FLAGS, default 2/1),
# var2 (VAR2_FLAGS, default 1/1; "-" leaves a variant out); d PY_DIMS (default 64;128;256),
# bf16, 90a. Beside them one test/CLI build with TEST_FLAGS (default = NEW_FLAGS), d 64,
# 128, 192, 256 (+ (192, 128), (64, 256/512)), fp16 + bf16.
# Steps, each under a timeout: the sm90 suites; the SASS around every LDL/STL of new's d128
# dense kernel; bench/sm90_ab.py (base, new, var, var2, cuDNN in one process, AB_ARGS);
# racecheck + synccheck on SAN_FILTER when the call has time left (SAN=1 forces, SAN=0 skips).
# Everything returned lands in one tar under $OUT.
# The two runs of 2026-11-22 (docs/performance-sm90.md, "Session 5, helper sm90g"):
#   run 1 (commit dc08fe2): NEW_FLAGS='-DFLASHATTN_SM90_Q_BUFFERS=2 -DFLASHATTN_SM90_DECODED_HANDOFF=1'
#          VAR_FLAGS='-DFLASHATTN_SM90_Q_BUFFERS=2 -DFLASHATTN_SM90_DECODED_HANDOFF=0' bash bench/sm90g_run.sh
#   run 2 (commit 1750ba4): SAN=1 TEST2_FLAGS='-DFLASHATTN_SM90_Q_BUFFERS=2 -DFLASHATTN_SM90_DECODED_HANDOFF=1' bash bench/sm90g_run.sh
set -uo pipefail
out=/tmp/sm90g-out
bld=/tmp/sm90g-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90g-out.tgz" sm90g-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(( $(date +%s) - t0 ))s $*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv \
  | tee "$out/gpu.txt"
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
BASE_FLAGS=${BASE_FLAGS:--DFLASHATTN_SM90_Q_BUFFERS=1 -DFLASHATTN_SM90_DECODED_HANDOFF=0}
NEW_FLAGS=${NEW_FLAGS:--DFLASHATTN_SM90_Q_BUFFERS=2 -DFLASHATTN_SM90_DECODED_HANDOFF=0}
VAR_FLAGS=${VAR_FLAGS:--DFLASHATTN_SM90_Q_BUFFERS=2 -DFLASHATTN_SM90_DECODED_HANDOFF=1}
VAR2_FLAGS=${VAR2_FLAGS:--DFLASHATTN_SM90_Q_BUFFERS=1 -DFLASHATTN_SM90_DECODED_HANDOFF=1}

build_py() { PY_DIMS=${PY_DIMS:-64;128;256} sm90_build_py "$1" "$2" 4 200 -DFLASHATTN_PTXAS_VERBOSE=ON; }
rm -rf "$bld/pyroot"
pids=()
[[ $BASE_FLAGS != - ]] && { build_py base "$BASE_FLAGS" & pids+=($!); }
build_py new "$NEW_FLAGS" & pids+=($!)
[[ $VAR_FLAGS != - ]] && { build_py var "$VAR_FLAGS" & pids+=($!); }
[[ $VAR2_FLAGS != - ]] && { build_py var2 "$VAR2_FLAGS" & pids+=($!); }

tests=$bld/gpu/tests/flashattn_tests
cmake -S . -B "$bld/gpu" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_HEAD_DIMS="${TEST_DIMS:-64;128;192;256}" -DFLASHATTN_DTYPES="fp16;bf16" \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
  -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="${TEST_FLAGS:-$NEW_FLAGS}" >"$out/gpu_configure.log" 2>&1
timeout 200 cmake --build "$bld/gpu" -j 6 --target flashattn_tests flashattn_cli >"$out/gpu_build.log" 2>&1 &
tb=$!
# Optional second test build (TEST2_FLAGS), e.g. the variant's flags.
if [[ -n ${TEST2_FLAGS:-} ]]; then
  cmake -S . -B "$bld/gpu2" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="${TEST_DIMS:-64;128;192;256}" -DFLASHATTN_DTYPES="fp16;bf16" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$TEST2_FLAGS" >"$out/gpu2_configure.log" 2>&1
  timeout 200 cmake --build "$bld/gpu2" -j 4 --target flashattn_tests >"$out/gpu2_build.log" 2>&1
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
timeout 60 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
log "sm90 suites rc=$? in $(( $(date +%s) - start )) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"
tests2=$bld/gpu2/tests/flashattn_tests
if [[ -n ${TEST2_FLAGS:-} ]]; then
  timeout 120 "$tests2" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests2.log" 2>&1
  log "sm90 suites (build 2) rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests2.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests2.log" | head -20 | tee -a "$out/summary.txt"
fi

# SASS of new's d128 bf16 dense kernel: counts, and every LDL/STL with its neighbours
# (which role spills: the producer's code follows USETMAXREG.DEALLOC).
if command -v cuobjdump >/dev/null; then
  obj=$bld/py-new/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim128_bf16.cu.o
  timeout 60 cuobjdump -sass "$obj" | awk '/Function : .*forward_kernel.*Lb0E/ {f=1} /Function :/ && !/Lb0E/ {f=0} f' \
    >"$out/sass_new_d128.txt" 2>&1
  grep -n -B4 -A2 -E 'LDL|STL|USETMAXREG' "$out/sass_new_d128.txt" >"$out/sass_new_d128_spills.txt"
  gzip "$out/sass_new_d128.txt"
  { for b in base new var var2; do echo "-- $b"; sm90_sass_counts "$bld/py-$b"; done; } >"$out/sass_counts.txt" 2>&1
  # Uniform-datapath check (run 1: two Q buffers moved the loop's descriptor arithmetic to R2UR):
  # R2UR / ULOP3 / instruction counts of each build's dense d64 and d128 kernels.
  for b in base new var var2; do
    for d in 64 128; do
      o=$bld/py-$b/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim${d}_bf16.cu.o
      [[ -f $o ]] || continue
      timeout 30 cuobjdump -sass "$o" | awk -v b="$b" -v d="$d" '
        /Function : .*forward_kernel/ {name = ($0 ~ /Lb0E/) ? substr($3, 60, 40) : ""; next}
        /Function :/ {name = ""}
        name != "" && /\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// {n[name]++; if (/R2UR/) r[name]++; if (/ULOP3|UIADD3/) u[name]++}
        END {for (k in n) printf "%s d%s %s instr %d R2UR %d ULOP3+UIADD3 %d\n", b, d, k, n[k], r[k], u[k]}'
    done
  done >"$out/uniform_counts.txt" 2>&1
  log "uniform: $(tr '\n' ';' <"$out/uniform_counts.txt")"
  log "sass: $(grep -c -E 'LDL|STL' "$out/sass_new_d128_spills.txt") LDL/STL lines in new d128"
fi

start=$(date +%s)
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${AB_TIMEOUT:-110}" python3 bench/sm90_ab.py ${AB_ARGS:---hdims 64,128,256} \
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
