#!/usr/bin/env bash
# Run 2 of helper sm90t (session 8, issue 6): the tile order found in run 1, measured and verified.
#   cd .device-carry/sm90t && DEADLINE=248 timeout 262 bash bench/sm90t_run2.sh
# Python extensions (90a, bf16, d 64/128, forward only) of this tree, all built in parallel with the test
# build before anything is timed:
#   base = main 0f879a8's order (FLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=0, FLASHATTN_SM90_SECTION_L2_DIVISOR=2)
#   HM   = head-major order for unmasked rows of every length, other schedules as main (divisor 2)
#   new  = this tree's defaults: HM + sections of 1/8 of L2 for the causal / windowed / varlen schedules
#          (run 2's tree, 8ed2918: at d64 and d128; the committed default after it keeps 1/8 at d128 only)
#   S1   = HM + sections of one kv head for those schedules too (divisor 2^20: one head's K/V is more)
#   ctrl = base's extension installed a second time (identical kernels: the noise floor)
# A/B (bench/sm90s_ab.py, all builds + cuDNN in one process, each row forward then reverse order, rotated
# per row): d 64/128 x causal x s 512..4k, then non-causal 8k / 16k. Then the test build (this tree's
# defaults, bf16, d 64/128): the sm90 suites, racecheck and synccheck on a small filter; ncu of the causal
# s 512 rows (base vs new vs cuDNN, d128 and d64: DRAM bytes, stalls) if time is left. One tar under $OUT.
set -uo pipefail
out=/tmp/sm90t-out
bld=/tmp/sm90t-build2
rm -rf "$out" "$bld" /tmp/sm90t-build && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90t-out.tgz" sm90t-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-248} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

off="-DFLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=0 -DFLASHATTN_SM90_SECTION_L2_DIVISOR=2"
PY_BUILDS=${PY_BUILDS:-"base=$off;HM=-DFLASHATTN_SM90_SECTION_L2_DIVISOR=2;new=;S1=-DFLASHATTN_SM90_SECTION_L2_DIVISOR=1048576"}
build_py() { PY_DIMS="64;128" sm90_build_py "$1" "$2" "${PY_JOBS:-2}" "$(cap 170)" -DFLASHATTN_PTXAS_VERBOSE=ON; }
pids=()
names=()
IFS=';' read -ra specs <<<"$PY_BUILDS"
for spec in "${specs[@]}"; do
  build_py "${spec%%=*}" "${spec#*=}" & pids+=($!)
  names+=("${spec%%=*}")
done
(cmake -S . -B "$bld/gpu" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
  -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF >"$out/gpu_configure.log" 2>&1 &&
  timeout "$(cap 180)" cmake --build "$bld/gpu" -j "${TEST_JOBS:-8}" --target flashattn_tests >"$out/gpu_build.log" 2>&1
  echo "rc=$?" >>"$out/gpu_build.log"; log "test build: $(tail -1 "$out/gpu_build.log")") & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
builds=""
for b in "${names[@]}"; do
  pkg=flashattn_$b
  [[ $b == new ]] && pkg=flashattn
  [[ -d $bld/pyroot/$pkg ]] && builds+="${builds:+,}$b"
done
if [[ -d $bld/pyroot/flashattn_base ]]; then
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py" && builds+=,ctrl
fi
log "builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[3458]' "$out"/py_*_build.log | tr '\n' ' ')"
if command -v cuobjdump >/dev/null; then
  for b in "${names[@]}"; do
    for o in "$bld/py-$b"/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim{64,128}_bf16.cu.o; do
      [[ -f $o ]] && timeout 20 cuobjdump -sass "$o" | grep -E '^\s+/\*[0-9a-f]+\*/' | md5sum | sed "s|-|$b $(basename "$o")|"
    done
  done >"$out/sass_md5.txt" 2>&1
fi

ab() {  # ab HDIMS CAUSAL SEQLENS TIMEOUT
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$4")" python3 bench/sm90s_ab.py --builds "$builds" \
    --hdims "$1" --causal "$2" --seqlens "$3" --rep "${AB_REP:-40}" 2>&1 | grep -v Warning | tee -a "$out/ab.jsonl"
  log "ab d $1 causal $2 s $3 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
ab 64,128 0,1 512,1024,2048,4096 "${AB_TIMEOUT:-45}"
ab 128,64 0 8192,16384 20

tests=$bld/gpu/tests/flashattn_tests
if [[ -x $tests ]]; then
  start=$(date +%s)
  timeout "$(cap 50)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
  log "sm90 suites rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"
  san=${SAN_FILTER:-'Grid/*cuda_sm90*_d128_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_98_239x1*:Grid/KVCacheTest.*cuda_sm90_3?_*'}
  for tool in racecheck synccheck; do
    (($(left) > 10)) || break
    start=$(date +%s)
    timeout "$(cap 35)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$tool.log" 2>&1
    log "$tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$tool.log" | tr '\n' ' ')"
  done
fi
if command -v ncu >/dev/null && (($(left) > 30)); then
  start=$(date +%s)
  # shellcheck disable=SC2086
  SM90T_CAUSAL=1 PYTHONPATH=$bld/pyroot timeout "$(cap 40)" ncu --profile-from-start off --import-source no \
    --section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__cycles_active.avg,gpc__cycles_elapsed.max \
    -o "$out/ncu_causal" python3 bench/sm90t_ncu_target.py ${NCU_TARGETS:-base new} >"$out/ncu_causal.log" 2>&1
  log "ncu causal rc=$? in $(($(date +%s) - start)) s"
  [[ -f $out/ncu_causal.ncu-rep ]] &&
    timeout "$(cap 15)" ncu -i "$out/ncu_causal.ncu-rep" --page raw --csv 2>/dev/null | gzip >"$out/ncu_causal_raw.csv.gz"
  rm -f "$out"/ncu_causal.ncu-rep
fi
log "total"
