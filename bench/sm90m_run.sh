#!/usr/bin/env bash
# The one device run of helper sm90m (session 8, issue 6): the score mask's forms measured and verified.
#   cd .device-carry/sm90m && DEADLINE=245 timeout 262 bash bench/sm90m_run.sh
# Python extensions (90a, bf16, d 64/128, forward only) of this tree differing only by
# FLASHATTN_SM90_MASK_FORM (src/cuda/sm90/score_mask.h), all built in parallel with the test build before
# anything is timed:
#   base = 0: each score's key compared with both bounds (main 2f570ed's kernels: identical SASS, nvdisasm)
#   cmp  = 1: each score's column offset compared with per-row limits (immediates), one-sided without a
#             left window
#   new  = 2 (this tree's default): per-row bit masks, R2P + one select per score, one-sided likewise
#   ctrl = base's extension installed a second time (identical kernels: the noise floor)
# A/B (bench/sm90s_ab.py, all builds + cuDNN in one process, each row forward then reverse order, rotated
# per row): d 64/128 causal s 512..4k, then d 64/128 non-causal 512 / 8k (must not regress). Then ncu
# instruction counts of the causal s 512 kernels (bench/sm90m_ncu_target.py: base, cmp, new, cuDNN), the
# test build (default form, bf16 + fp16, d 64/128): the sm90 suites, racecheck and synccheck on a small
# causal / windowed filter. One tar under $OUT.
set -uo pipefail
out=/tmp/sm90m-out
bld=/tmp/sm90m-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90m-out.tgz" sm90m-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-245} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

PY_BUILDS=${PY_BUILDS:-"base=-DFLASHATTN_SM90_MASK_FORM=0;cmp=-DFLASHATTN_SM90_MASK_FORM=1;new="}
build_py() { PY_DIMS="64;128" sm90_build_py "$1" "$2" "${PY_JOBS:-3}" "$(cap 150)" -DFLASHATTN_PTXAS_VERBOSE=ON; }
pids=()
names=()
IFS=';' read -ra specs <<<"$PY_BUILDS"
for spec in "${specs[@]}"; do
  build_py "${spec%%=*}" "${spec#*=}" & pids+=($!)
  names+=("${spec%%=*}")
done
(cmake -S . -B "$bld/gpu" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
  -DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES="bf16;fp16" -DFLASHATTN_BUILD_TESTS=ON \
  -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF >"$out/gpu_configure.log" 2>&1 &&
  timeout "$(cap 160)" cmake --build "$bld/gpu" -j "${TEST_JOBS:-8}" --target flashattn_tests >"$out/gpu_build.log" 2>&1
  echo "rc=$?" >>"$out/gpu_build.log"; log "test build: $(tail -1 "$out/gpu_build.log")") & pids+=($!)
# Everything is built before anything is timed (a compile beside the timing would disturb it).
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
log "py builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[3458]' "$out"/py_*_build.log | tr '\n' ' ')"
grep -h -E 'spill|Used [0-9]+ reg' "$out"/py_new_build.log | sort | uniq -c >"$out/ptxas_new.txt" 2>/dev/null
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
ab 64,128 1 512,1024,2048,4096 "${AB_TIMEOUT:-45}"
ab 64,128 0 512,8192 25

if command -v ncu >/dev/null && (($(left) > 60)); then
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot timeout "$(cap 35)" ncu --profile-from-start off --import-source no \
    --metrics smsp__inst_executed.sum,sm__cycles_active.avg,gpc__cycles_elapsed.max,gpu__time_duration.sum \
    --csv --page raw python3 bench/sm90m_ncu_target.py base cmp new >"$out/ncu_causal512.csv" 2>"$out/ncu.err"
  log "ncu causal 512 rc=$? in $(($(date +%s) - start)) s"
fi

tests=$bld/gpu/tests/flashattn_tests
if [[ -x $tests ]]; then
  start=$(date +%s)
  timeout "$(cap 45)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
  log "sm90 suites rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"
  san=${SAN_FILTER:-'Grid/ForwardTest.*cuda_sm90*causal*:Grid/ForwardTest.*cuda_sm90*local*:Grid/ForwardTest.*cuda_sm90*left*:Grid/ForwardTest.*cuda_sm90*right*-*1023x1024*:*2048x2048*'}
  for tool in racecheck synccheck; do
    (($(left) > 10)) || break
    start=$(date +%s)
    timeout "$(cap 30)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$tool.log" 2>&1
    log "$tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$tool.log" | tr '\n' ' ')"
  done
fi
log "total"
