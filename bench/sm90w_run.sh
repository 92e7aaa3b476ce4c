#!/usr/bin/env bash
# The device calls of helper sm90w (session 7, issue 6: d128 long rows). Run from this tree's root,
# carried inside the main checkout:
#   cd .device-carry/sm90w && bash bench/sm90w_run.sh
# Builds from THIS tree, differing only by compile flags, in parallel: Python extensions (90a, bf16,
# head dims PY_DIMS) base (BASE_FLAGS), new (NEW_FLAGS), var (VAR_FLAGS), var2 (VAR2_FLAGS; "none" skips);
# base is installed a second time as flashattn_ctl (the same .so: the noise control); test builds t1
# (T1_FLAGS) and t2 (T2_FLAGS; "none" skips), d TEST_DIMS, fp16 + bf16, ptxas -v. Steps, each under a
# timeout: the sm90 suites of each test build; bench/sm90L_ab.py (every Python build + cuDNN in one
# process, AB_ARGS); racecheck + synccheck of t1 on SAN_FILTER (SAN=1); ncu of base/new/var/var2/cuDNN
# at d128 s 8192 (NCU=1, bench/sm90L_ncu_target.py); SASS counts (HGMMA, LDL/STL) of the d128 objects.
# The whole call ends by DEADLINE s; one tar under $OUT.
# Run 1 (2026-11-22 ~09:49 UTC): the defaults below. Run 2: NEW_FLAGS=rq VAR_FLAGS=none VAR2_FLAGS=none
#   NEW_COPY=1 T2_FLAGS=none TEST_DIMS="64;96;128" SAN=1 NCU=0 AB_ARGS (see docs/performance-sm90.md).
# Switches (src/cuda/sm90/forward_config.h):
#   REGISTER_Q=1          S GEMM with Q's A fragments in registers ("rq")
#   LONG_KEY_BLOCK_N=160  160-key blocks at d128 from LONG_KEY_MIN_SEQLEN(_MASKED) keys, with multicast ("n160")
set -uo pipefail
out=/tmp/sm90w-out
bld=/tmp/sm90w-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90w-out.tgz" sm90w-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-265} - ($(date +%s) - t0))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

rq=-DFLASHATTN_SM90_REGISTER_Q=1
n160=-DFLASHATTN_SM90_LONG_KEY_BLOCK_N=160
everywhere="-DFLASHATTN_SM90_LONG_KEY_MIN_SEQLEN=1 -DFLASHATTN_SM90_LONG_KEY_MIN_SEQLEN_MASKED=1 -DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=1"
BASE_FLAGS=${BASE_FLAGS-}
NEW_FLAGS=${NEW_FLAGS-$rq}
VAR_FLAGS=${VAR_FLAGS-$n160}
VAR2_FLAGS=${VAR2_FLAGS-$n160 -DFLASHATTN_SM90_KEEP_Q_DESCRIPTORS_MAX_BLOCK_N=128}
T1_FLAGS=${T1_FLAGS-$rq -DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=1}
T2_FLAGS=${T2_FLAGS-$n160 $everywhere}
PY_DIMS=${PY_DIMS-128}
TEST_DIMS=${TEST_DIMS-96;128}
AB_ARGS=${AB_ARGS---passes 3 --rep 70 --rows 128:0:1024,128:0:2048,128:0:4096,128:0:8192,128:0:16384,128:1:2048,128:1:4096,128:1:8192,128:1:16384,128:0:4096:1,128:1:16384:1,128:0:16384:1}
SAN_FILTER=${SAN_FILTER-Grid/*cuda_sm90*_500x777_*:Grid/*cuda_sm90*_2048x2048_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*}
build_py() { PY_DIMS=$PY_DIMS sm90_build_py "$1" "$2" "${PY_JOBS:-3}" "${PY_LIMIT:-170}" -DFLASHATTN_PTXAS_VERBOSE=ON; }
build_tests() {  # NAME FLAGS DIMS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$3" -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON \
    -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$2" >"$out/${1}_configure.log" 2>&1 &&
    timeout "${TEST_LIMIT:-170}" cmake --build "$bld/$1" -j "${TEST_JOBS:-3}" --target flashattn_tests >"$out/${1}_build.log" 2>&1
  log "test build $1 (d $3; $2) rc=$?"
}
ptxas_table() {  # build log -> sm90 forward kernels: registers and spills
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$1" | grep -E "entry|spill|registers" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)E(Li([0-9])E)?EELb([01]).*/kernel d\1 dv\2 \3 consumers \4 long_n \5 cluster \7 paged \8/' |
    paste - - -
}

rm -rf "$bld/pyroot"
pids=()
build_py base "$BASE_FLAGS" & pids+=($!)
[[ $NEW_FLAGS != none ]] && { build_py new "$NEW_FLAGS" & pids+=($!); }
[[ $VAR_FLAGS != none ]] && { build_py var "$VAR_FLAGS" & pids+=($!); }
[[ $VAR2_FLAGS != none ]] && { build_py var2 "$VAR2_FLAGS" & pids+=($!); }
build_tests t1 "$T1_FLAGS" "$TEST_DIMS" & pids+=($!)
[[ $T2_FLAGS != none ]] && { build_tests t2 "$T2_FLAGS" "$TEST_DIMS" & pids+=($!); }
for pid in "${pids[@]}"; do wait "$pid"; done
if [[ -d $bld/pyroot/flashattn_base ]]; then
  cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctl::/' "$bld/pyroot/flashattn_ctl/_ops.py"
fi
# NEW_COPY=1 (VAR_FLAGS=none): new installed a second time as flashattn_var, new's own noise control.
if [[ ${NEW_COPY:-0} != 0 && -d $bld/pyroot/flashattn && ! -d $bld/pyroot/flashattn_var ]]; then
  cp -r "$bld/pyroot/flashattn" "$bld/pyroot/flashattn_var" &&
    sed -i 's/"flashattn::/"flashattn_var::/' "$bld/pyroot/flashattn_var/_ops.py"
fi
for name in base new var var2; do
  [[ -f $out/py_${name}_build.log ]] && ptxas_table "$out/py_${name}_build.log" >"$out/py_${name}_ptxas.txt"
done
for name in t1 t2; do
  [[ -f $out/${name}_build.log ]] && ptxas_table "$out/${name}_build.log" >"$out/${name}_ptxas.txt"
done
grep -H "C75" "$out"/*_build.log | sed -E 's/function.*ForwardConfig/ForwardConfig/' | sort | uniq -c | head -20 >"$out/c75xx.txt"
for name in base new var var2; do
  [[ -d $bld/py-$name ]] && sm90_sass_counts "$bld/py-$name" >"$out/sass_counts_$name.txt" 2>&1
done

suite() {  # NAME
  local tests=$bld/$1/tests/flashattn_tests start=$(date +%s) t
  [[ -x $tests ]] || { log "$1: no test binary"; return 1; }
  t=$(left); ((t > ${SUITE_LIMIT:-40})) && t=${SUITE_LIMIT:-40}
  timeout "$t" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/${1}_tests.log" 2>&1
  local rc=$?
  log "$1 sm90 suites rc=$rc in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${1}_tests.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED' "$out/${1}_tests.log" | head -10 | tee -a "$out/summary.txt"
  return $rc
}
suite t1; ok=$?
[[ $T2_FLAGS != none ]] && suite t2

t=$(left); ((t > ${AB_LIMIT:-90})) && t=${AB_LIMIT:-90}
if ((t > 20)); then
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$t" python3 bench/sm90L_ab.py ${AB_ARGS:-} 2>&1 |
    grep -v Warning | tee "$out/ab.jsonl"
  log "ab rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
fi

san() {  # NAME TOOL
  local t
  t=$(left)
  ((t < 15)) && { log "$1 $2 skipped: $t s left"; return; }
  ((t > 35)) && t=35
  timeout "$t" compute-sanitizer --tool "$2" --error-exitcode 3 "$bld/$1/tests/flashattn_tests" \
    --gtest_filter="$SAN_FILTER" --gtest_brief=1 >"$out/${1}_sanitize_$2.log" 2>&1
  log "$1 $2 rc=$?: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/${1}_sanitize_$2.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${1}_sanitize_$2.log" | tr '\n' ' ')"
}
if [[ ${SAN:-0} != 0 && $ok == 0 ]]; then
  san "${SAN_BUILD:-t1}" racecheck
  san "${SAN_BUILD:-t1}" synccheck
fi

if [[ ${NCU:-1} != 0 ]] && command -v ncu >/dev/null && (($(left) > 45)); then
  sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
    --section WarpStateStats --section InstructionStats --section LaunchStats"
  t=$(left)
  PYTHONPATH=$bld/pyroot timeout $((t - 12)) ncu $sections --profile-from-start off \
    --launch-count 8 -o "$out/ncu_d128" python3 bench/sm90L_ncu_target.py >"$out/ncu.log" 2>&1
  log "ncu rc=$?"
  if [[ -f $out/ncu_d128.ncu-rep ]]; then
    timeout 8 ncu -i "$out/ncu_d128.ncu-rep" --page details >"$out/ncu_d128.txt" 2>&1
    rm -f "$out/ncu_d128.ncu-rep"
  fi
fi
cat "$out/summary.txt"
