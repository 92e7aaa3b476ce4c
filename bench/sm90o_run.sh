#!/usr/bin/env bash
# The one device run of helper sm90o (session 8, issue 6): d256 short rows, tile order + O in Q's buffer.
# Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90o && DEADLINE=245 timeout 262 bash bench/sm90o_run.sh
# Ran once, at commit 89024f7 (results: docs/performance-sm90.md "Session 8, helper sm90o"). Since 08eaa0b the
# default is HEAD_MAJOR_MAX_D=256 (base below passes 128 to stay main 9179e56's order) and DIRECT_O no longer
# exists outside 89024f7 (there dir / hd equal base / hm).
# Builds from THIS tree (90a, forward only; the sm80 family's sm_80 gencodes dropped from the carried copy's
# src/cuda/CMakeLists.txt), all in parallel, all finished before anything is timed:
#   py base  Python extension, bf16, d256, main's behaviour (both switches off); installed again as "ctrl"
#   py hm    FLASHATTN_SM90_HEAD_MAJOR_MAX_D=256 (sm90t's head-major order at d192 / d256 too)
#   py dir   FLASHATTN_SM90_DIRECT_O=1 (O from registers to global memory, Q released after the last S,
#            kEarlyNextS on the d192 / d256 kernels)
#   py hd    both
#   N        tests, fp16 + bf16, d192 + d256, both switches on
# Then: bench/sm90s_ab.py (base, hm, dir, hd, ctrl, cuDNN in one process; d256 x causal x 512..8k), the sm90
# suites of N, racecheck + synccheck on small d256 cases, a second A/B pass in reversed build order, and ncu
# DRAM bytes at d256 s 512 (base, hm, cuDNN) if time is left. One tar under $OUT.
set -uo pipefail
out=/tmp/sm90o-out
bld=/tmp/sm90o-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90o-out.tgz" sm90o-out; }
trap finish EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-245} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
sed -i 's/^set(FLASHATTN_SM80_GENCODE -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80)/set(FLASHATTN_SM80_GENCODE)/' \
  src/cuda/CMakeLists.txt
log "sm80 gencode dropped: $(grep -c 'set(FLASHATTN_SM80_GENCODE)' src/cuda/CMakeLists.txt)"

hm="-DFLASHATTN_SM90_HEAD_MAJOR_MAX_D=256"
old_order="-DFLASHATTN_SM90_HEAD_MAJOR_MAX_D=128"
dir="-DFLASHATTN_SM90_DIRECT_O=1"
build_py() { PY_DIMS=256 sm90_build_py "$1" "$2" 3 150 -DFLASHATTN_PTXAS_VERBOSE=ON; }
cpp_build() {  # cpp_build NAME DIMS DTYPES FLAGS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$2" -DFLASHATTN_DTYPES="$3" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF \
    -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON \
    -DCMAKE_CUDA_FLAGS="$4" >"$out/$1_configure.log" 2>&1 &&
    timeout 160 cmake --build "$bld/$1" -j 5 --target flashattn_tests >"$out/$1_build.log" 2>&1
  echo "rc=$?" >>"$out/$1_build.log"
  log "build $1 $(tail -1 "$out/$1_build.log")"
}
pids=()
cpp_build N "192;256" "fp16;bf16" "$hm $dir" & pids+=($!)
build_py base "$old_order" & pids+=($!)
build_py hm "$hm" & pids+=($!)
build_py dir "$old_order $dir" & pids+=($!)
build_py hd "$hm $dir" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
builds=base,hm,dir,hd
if [[ -d $bld/pyroot/flashattn_base ]]; then
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py" && builds+=,ctrl
fi
log "builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[458]' "$out"/*_build.log | tr '\n' ' ')"
for f in "$out"/*_build.log; do
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$f" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 c\4 blockN\5 cluster\6 paged\7/' |
    sed "s|^|$(basename "$f" _build.log): |"
done >"$out/ptxas.txt" 2>&1
sm90_sass_counts "$bld/N" >"$out/sass_counts.txt" 2>&1

ab() {  # ab BUILDS SEQLENS TIMEOUT TAG
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$3")" python3 bench/sm90s_ab.py --builds "$1" \
    --hdims 256 --seqlens "$2" --rep "${AB_REP:-50}" 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$4\", /" |
    tee -a "$out/ab.jsonl"
  log "ab $4 $1 x $2 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
seqlens=512,1024,2048,8192
ab "$builds" $seqlens 45 p1

tests=$bld/N/tests/flashattn_tests
run_tests() {
  local start
  [[ -x $tests ]] || { log "no test binary"; return 0; }
  (($(left) > 10)) || return 0
  start=$(date +%s)
  timeout "$(cap 60)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
  log "sm90 suites (N: d192 + d256, fp16 + bf16, both switches on) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"
  local san='*cuda_sm90*d256*:-*2048x2048*:*2113x2100*:*1023x1024*:*1000x1001*'
  for tool in racecheck synccheck; do
    (($(left) > 40)) || break
    start=$(date +%s)
    timeout "$(cap 30)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$tool.log" 2>&1
    log "$tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$tool.log" | tr '\n' ' ')"
  done
}
run_tests
(($(left) > 35)) && ab "$(echo "$builds" | tr ',' '\n' | tac | paste -sd,)" $seqlens 40 p2
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >>"$out/gpu.txt" 2>&1

if command -v ncu >/dev/null && (($(left) > 20)); then
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot timeout "$(cap 30)" ncu --profile-from-start off --csv \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
    python3 bench/sm90o_ncu_target.py base hm hd >"$out/ncu.csv" 2>&1
  log "ncu rc=$? in $(($(date +%s) - start)) s"
fi
log "total"
