#!/usr/bin/env bash
# (Ran at commit 0f39d88; the switches were renamed FLASHATTN_SM90_D64_ALT_* and FLASHATTN_SM90_D64_P_SMEM_MIN_CONSUMERS
# removed afterwards: check that commit out to repeat it.)
# Run 2 of helper sm90r (session 9, issue 6): cuda_sm90 d64 forward at long rows with FOUR consumer
# warpgroups (kBlockM 256, 112 registers each, 64-key blocks; forward_config.h use_d64_wide_blocks) against
# the current kernels, cuDNN and a control, in one device call, with the suites and sanitizers of the new
# kernels. Run 1 (bench/sm90r_run1.sh) found the wider key blocks no faster. Run from this tree's root:
#   cd .device-carry/sm90r && DEADLINE=245 timeout 262 bash bench/sm90r_run2.sh
# Builds from THIS tree (90a, forward only, d 64; the sm80 family's sm_80 gencodes dropped from the carried
# copy's src/cuda/CMakeLists.txt: nothing that runs on an H200 changes), all in parallel:
#   py base    Python extension, bf16, the defaults (main's kernels); installed again as "ctrl"
#   py c4r     four consumers, 64-key blocks, P in registers, on every d64 row >= 1k
#   py c4s     four consumers, 64-key blocks, P through shared memory
#   py c4s96   four consumers, 96-key blocks, P through shared memory (ptxas: 68 B of spills)
#   T3, T4     tests, fp16 + bf16, the four-consumer kernels on EVERY dense d64 case (T3: c4r, T4: c4s)
# Then bench/sm90r_ab.py (all builds + cuDNN in one process; d64 x causal x 1k..16k; two passes, the build
# order reversed), the sm90 suites of T1 and T2, racecheck + synccheck on small d64 cases. One tar in $OUT.
set -uo pipefail
out=/tmp/sm90r2-out
bld=/tmp/sm90r2-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90r2-out.tgz" sm90r2-out; }
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

wide() {  # wide UNMASKED_N UNMASKED_C MASKED_N MASKED_C MIN_SEQLEN
  echo "-DFLASHATTN_SM90_D64_WIDE_BLOCK_N=$1 -DFLASHATTN_SM90_D64_WIDE_CONSUMERS=$2" \
    "-DFLASHATTN_SM90_D64_WIDE_BLOCK_N_MASKED=$3 -DFLASHATTN_SM90_D64_WIDE_CONSUMERS_MASKED=$4" \
    "-DFLASHATTN_SM90_D64_WIDE_MIN_SEQLEN=$5 -DFLASHATTN_SM90_D64_WIDE_MIN_SEQLEN_MASKED=$5"
}
build_py() { PY_DIMS=64 sm90_build_py "$1" "$2" 5 170 -DFLASHATTN_PTXAS_VERBOSE=ON; }
# shellcheck disable=SC2086  # $4 may name several targets
cpp_build() {  # cpp_build NAME DTYPES TESTS(ON/OFF) TARGETS FLAGS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS=64 -DFLASHATTN_DTYPES="$2" -DFLASHATTN_BUILD_TESTS="$3" -DFLASHATTN_BUILD_CLI=OFF \
    -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON \
    -DCMAKE_CUDA_FLAGS="$5" >"$out/$1_configure.log" 2>&1 &&
    timeout 170 cmake --build "$bld/$1" -j 8 --target $4 >"$out/$1_build.log" 2>&1
  echo "rc=$?" >>"$out/$1_build.log"
  log "build $1 $(tail -1 "$out/$1_build.log")"
}
pids=()
build_py base "" & pids+=($!)
build_py c4r "$(wide 64 4 64 4 1024) -DFLASHATTN_SM90_D64_P_SMEM_MIN_CONSUMERS=5" & pids+=($!)
build_py c4s "$(wide 64 4 64 4 1024)" & pids+=($!)
build_py c4s96 "$(wide 96 4 96 4 1024)" & pids+=($!)
cpp_build T3 "fp16;bf16" ON flashattn_tests "$(wide 64 4 64 4 0) -DFLASHATTN_SM90_D64_P_SMEM_MIN_CONSUMERS=5" & pids+=($!)
cpp_build T4 "fp16;bf16" ON flashattn_tests "$(wide 64 4 64 4 0)" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
builds=base,c4r,c4s,c4s96
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
sm90_sass_counts "$bld/T3" >"$out/sass_counts.txt" 2>&1

ab() {  # ab BUILDS SEQLENS TIMEOUT TAG
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$3")" python3 bench/sm90r_ab.py --builds "$1" \
    --hdims 64 --seqlens "$2" --rep "${AB_REP:-50}" 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$4\", /" |
    tee -a "$out/ab.jsonl"
  log "ab $4 $1 x $2 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
ab "$builds" 1024,2048,4096,8192,16384 75 p1

run_tests() {  # run_tests BUILD
  local start tests=$bld/$1/tests/flashattn_tests
  [[ -x $tests ]] || { log "tests $1 missing"; return 0; }
  (($(left) > 10)) || return 0
  start=$(date +%s)
  timeout "$(cap 40)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests_$1.log" 2>&1
  log "sm90 suites ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests_$1.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests_$1.log" | head -20 | tee -a "$out/summary.txt"
}
sanitize() {  # sanitize BUILD
  local start tool tests=$bld/$1/tests/flashattn_tests
  local san='Grid/*cuda_sm90*_d64_*:Grid/*cuda_sm90*_113x203_*:-*4100*:*4097x*:*2048x*:*1023x*:*1000x*:*2113x*'
  [[ -x $tests ]] || return 0
  for tool in racecheck synccheck; do
    (($(left) > 8)) || break
    start=$(date +%s)
    timeout "$(cap 30)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" \
      --gtest_brief=1 >"$out/sanitize_$1_$tool.log" 2>&1
    log "$tool ($1) rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$1_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$1_$tool.log" | tr '\n' ' ')"
  done
}
run_tests T3
run_tests T4
sanitize T3
sanitize T4
ab "$(echo "$builds" | tr ',' '\n' | tac | paste -sd,)" 1024,2048,4096,8192,16384 75 p2
log "total"
