#!/usr/bin/env bash
# The device calls of helper sm90L (session 6, issue 6: d128 non-causal long rows). Run from this tree's
# root, carried inside the main checkout:
#   cd .device-carry/sm90L && bash bench/sm90L_run.sh
# Builds from THIS tree, differing only by compile flags, in parallel: Python extensions (90a, bf16,
# head dims PY_DIMS) base (BASE_FLAGS, default today's defaults), new (NEW_FLAGS), var (VAR_FLAGS), var2
# (VAR2_FLAGS; "none" skips a variant); base is also installed a second time as flashattn_ctl (the same
# .so: the noise control); one test build (TEST_DIMS, fp16 + bf16, TEST_FLAGS, ptxas -v). Steps, each
# under a timeout: bench/sm90L_ab.py (every build + cuDNN in one process, AB_ARGS); the sm90 suites of
# the test build; ncu of base, new and cuDNN's kernel at d128 s 8192 non-causal (NCU=0 skips; the
# source page with SASS as CSV; the raw page); SASS of the d128 objects (cuobjdump); racecheck +
# synccheck on SAN_FILTER with the time left. The call ends by DEADLINE s; one tar under $OUT.
# The switches (forward_config.h):
#   KV_MULTICAST_MIN_SEQLEN=1  d128 in clusters of two CTAs sharing K/V by TMA multicast ("mc")
#   DESCRIPTOR_ADDS=1          wgmma descriptors by adds ("da")
#   EARLY_BLOCK_FLAGS=1        per-block decisions while S runs, predicated releases ("ef")
#   SOFTMAX_AHEAD=1            exponentials before the row maxima, d96/128 ("sa")
# (da and sa measured no gain and were taken out of the tree again: running the two runs' flag sets
# as they were needs commit d77d708's tree; on later commits those flags are ignored. Since c177e41,
# ef is on and mc's threshold is 2048 by default: pass -DFLASHATTN_SM90_EARLY_BLOCK_FLAGS=0
# -DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0 as BASE_FLAGS for the runs' base.)
# Run 1 (2026-11-22 ~08:06 UTC): NEW=mc VAR=da VAR2="-DFLASHATTN_SM90_CONDITIONAL_RESCALE_MIN_DV=512"
#   PY_DIMS=128 TEST_DIMS="96;128" TEST_FLAGS="mc da" AB_ARGS="" (sm90L_ab.py's default rows), NCU=1.
# Run 2: the defaults below.
set -uo pipefail
out=/tmp/sm90L-out
bld=/tmp/sm90L-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90L-out.tgz" sm90L-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-275} - ($(date +%s) - t0))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

mc=-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=1
ef=-DFLASHATTN_SM90_EARLY_BLOCK_FLAGS=1
sa=-DFLASHATTN_SM90_SOFTMAX_AHEAD=1
da=-DFLASHATTN_SM90_DESCRIPTOR_ADDS=1
NEW_FLAGS=${NEW_FLAGS-$ef $sa}
BASE_FLAGS=${BASE_FLAGS-}
VAR_FLAGS=${VAR_FLAGS-$ef}
VAR2_FLAGS=${VAR2_FLAGS-$ef $sa $mc}
TEST_FLAGS=${TEST_FLAGS-$ef $sa $mc}
PY_DIMS=${PY_DIMS-64;128;256}
TEST_DIMS=${TEST_DIMS-64;128;192;256}
AB_ARGS=${AB_ARGS---passes 3 --rep 60 --rows 128:0:1024,128:0:2048,128:0:4096,128:0:8192,128:0:16384,128:1:2048,128:1:4096,128:1:8192,128:1:16384,64:0:2048,64:0:4096,64:0:8192,64:0:16384,64:1:2048,64:1:8192,64:1:16384,256:0:4096,256:0:16384,256:1:16384,128:0:4096:1,128:1:4096:1,64:0:2048:1}
SAN_FILTER=${SAN_FILTER-Grid/*cuda_sm90*_500x777_*:Grid/*cuda_sm90*_2048x2048_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*}
build_py() { PY_DIMS=$PY_DIMS sm90_build_py "$1" "$2" "${PY_JOBS:-3}" "${PY_LIMIT:-200}" -DFLASHATTN_PTXAS_VERBOSE=ON; }
build_tests() {  # NAME FLAGS DIMS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$3" -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON \
    -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$2" >"$out/${1}_configure.log" 2>&1 &&
    timeout "${TEST_LIMIT:-200}" cmake --build "$bld/$1" -j "${TEST_JOBS:-6}" --target flashattn_tests >"$out/${1}_build.log" 2>&1
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
build_py new "$NEW_FLAGS" & pids+=($!)
[[ $VAR_FLAGS != none ]] && { build_py var "$VAR_FLAGS" & pids+=($!); }
[[ $VAR2_FLAGS != none ]] && { build_py var2 "$VAR2_FLAGS" & pids+=($!); }
build_tests tests "$TEST_FLAGS" "$TEST_DIMS" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
if [[ -d $bld/pyroot/flashattn_base ]]; then
  cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctl::/' "$bld/pyroot/flashattn_ctl/_ops.py"
fi
for name in base new var var2; do
  [[ -f $out/py_${name}_build.log ]] && ptxas_table "$out/py_${name}_build.log" >"$out/py_${name}_ptxas.txt"
done
ptxas_table "$out/tests_build.log" >"$out/tests_ptxas.txt" 2>/dev/null
grep -h "C75" "$out"/*_build.log | sort | uniq -c | head >"$out/c75xx.txt"

suite() {  # NAME
  local tests=$bld/$1/tests/flashattn_tests start=$(date +%s) t
  [[ -x $tests ]] || { log "$1: no test binary"; return 1; }
  t=$(left); ((t > 45)) && t=45
  timeout "$t" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/${1}_tests.log" 2>&1
  local rc=$?
  log "$1 sm90 suites rc=$rc in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${1}_tests.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED' "$out/${1}_tests.log" | head -10 | tee -a "$out/summary.txt"
  return $rc
}
suite tests; ok=$?

t=$(left); ((t > ${AB_LIMIT:-95})) && t=${AB_LIMIT:-95}
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
  ((t > 40)) && t=40
  timeout "$t" compute-sanitizer --tool "$2" --error-exitcode 3 "$bld/$1/tests/flashattn_tests" \
    --gtest_filter="$SAN_FILTER" --gtest_brief=1 >"$out/${1}_sanitize_$2.log" 2>&1
  log "$1 $2 rc=$?: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/${1}_sanitize_$2.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${1}_sanitize_$2.log" | tr '\n' ' ')"
}
if [[ ${SAN:-1} != 0 && $ok == 0 ]]; then
  san tests racecheck
  san tests synccheck
fi

if [[ ${NCU:-1} != 0 ]] && command -v ncu >/dev/null && (($(left) > 40)); then
  sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
    --section WarpStateStats --section SchedulerStats --section InstructionStats --section LaunchStats
    --section Occupancy --section SourceCounters"
  t=$(left); ((t > 90)) && t=90
  PYTHONPATH=$bld/pyroot timeout $((t - 15)) ncu $sections --import-source no --profile-from-start off \
    --launch-count 8 -o "$out/ncu_d128" python3 bench/sm90L_ncu_target.py >"$out/ncu.log" 2>&1
  log "ncu rc=$?"
  if [[ -f $out/ncu_d128.ncu-rep ]]; then
    timeout 20 ncu -i "$out/ncu_d128.ncu-rep" --page details >"$out/ncu_d128.txt" 2>&1
    timeout 20 ncu -i "$out/ncu_d128.ncu-rep" --page raw --csv 2>&1 | gzip >"$out/ncu_raw.csv.gz"
    timeout 30 ncu -i "$out/ncu_d128.ncu-rep" --page source --csv --print-source sass 2>&1 |
      gzip >"$out/ncu_sass.csv.gz"
    rm -f "$out/ncu_d128.ncu-rep"
    log "ncu export done"
  fi
fi

if command -v cuobjdump >/dev/null; then
  for name in base new; do
    o=$bld/py-$name/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim128_bf16.cu.o
    [[ -f $o ]] && cuobjdump -sass "$o" | gzip >"$out/sass_${name}_d128.txt.gz"
  done
fi

cat "$out/summary.txt"
