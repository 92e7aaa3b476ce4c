#!/usr/bin/env bash
# Run 1 of helper sm90k (session 8, issue 6): cuda_sm90 d256 forward with 64-key blocks
# (forward_config.h use_d256_block64) against the 80-key kernel, dense and paged, in one device call.
# Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90k && DEADLINE=245 timeout 262 bash bench/sm90k_run1.sh
# Builds from THIS tree (90a, forward only, d 256; the sm80 family's sm_80 gencodes dropped from the
# carried copy's src/cuda/CMakeLists.txt: nothing that runs on an H200 changes), all in parallel, all
# finished before anything is timed:
#   py base  Python extension, bf16, the defaults (64-key blocks never: main's kernels); installed a
#            second time as "ctrl" (identical kernels: the noise floor of the run)
#   py k64   Python extension, bf16, 64-key blocks on every d256 problem (dense at any length, masked
#            or not, and paged)
#   N        tests + CLI, fp16 + bf16, as k64 (every d256 test case runs the 64-key kernel)
#   A        CLI, fp16, the defaults
# Then: bench/sm90s_ab.py (base, k64, ctrl, cuDNN in one process; d256 x causal x s 512..16k; two
# passes, the build order reversed), `flashattn run` paged tables (A = 80 keys, B = 64 keys, A2 = A
# again), the sm90 suites of N, racecheck + synccheck on small d256 cases. One tar under $OUT.
set -uo pipefail
out=/tmp/sm90k-out
bld=/tmp/sm90k-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90k-out.tgz" sm90k-out; }
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

all64="-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN=1073741824 -DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=1073741824 -DFLASHATTN_SM90_D256_BLOCK64_PAGED=1"
K64_FLAGS=${K64_FLAGS:-$all64}
BASE_FLAGS=${BASE_FLAGS:-}
build_py() { PY_DIMS=256 sm90_build_py "$1" "$2" 8 170 -DFLASHATTN_PTXAS_VERBOSE=ON; }
# shellcheck disable=SC2086  # $4 may name several targets
cpp_build() {  # cpp_build NAME DTYPES TESTS(ON/OFF) TARGETS FLAGS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS=256 -DFLASHATTN_DTYPES="$2" -DFLASHATTN_BUILD_TESTS="$3" -DFLASHATTN_BUILD_CLI=ON \
    -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON \
    -DCMAKE_CUDA_FLAGS="$5" >"$out/$1_configure.log" 2>&1 &&
    timeout 170 cmake --build "$bld/$1" -j 16 --target $4 >"$out/$1_build.log" 2>&1
  echo "rc=$?" >>"$out/$1_build.log"
  log "build $1 $(tail -1 "$out/$1_build.log")"
}
pids=()
build_py base "$BASE_FLAGS" & pids+=($!)
build_py k64 "$K64_FLAGS" & pids+=($!)
cpp_build N "fp16;bf16" ON "flashattn_tests flashattn_cli" "$K64_FLAGS" & pids+=($!)
cpp_build A fp16 OFF flashattn_cli "$BASE_FLAGS" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
builds=base,k64
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
ab "$builds" 512,1024,2048,4096,8192,16384 45 p1
ab "$(echo "$builds" | tr ',' '\n' | tac | paste -sd,)" 512,1024,2048,4096,8192,16384 45 p2

cli_a=$bld/A/tools/cli/flashattn
cli_b=$bld/N/tools/cli/flashattn
tests=$bld/N/tests/flashattn_tests
# cell LABEL PAGE COLUMNS ARGS...: one line per column: "label page column kernel time".
cell() {
  local label=$1 page=$2 columns=$3
  shift 3
  (($(left) > ${cell_reserve:-70})) || {
    echo "$label $page skipped (time)" | tee -a "$out/paged.txt"
    return
  }
  local paged=() column cli line
  [[ $page != dense ]] && paged=(--paged "$page")
  for column in $columns; do
    cli=$cli_a
    [[ $column == B ]] && cli=$cli_b
    [[ -x $cli ]] || continue
    line=$(timeout 30 "$cli" run --backend cuda_sm90 --dtype fp16 --repeat 20 --verify none "$@" "${paged[@]}" \
      2>&1 | tee -a "$out/paged_raw.txt" | grep -E "^kernel|^time|not run|rror" | head -2 | tr -s ' \n' ' ')
    echo "$label $page $column ${line:-FAILED}" | tee -a "$out/paged.txt"
  done
}
s8k=(--head-dim 256 --seqlen-q 8192 --batch 1 --heads 4)
s4k=(--head-dim 256 --seqlen-q 4096 --batch 4 --heads 16)
cell_reserve=45
cell d256_s8192_b1_h4 dense "A B A2" "${s8k[@]}"
cell d256_s8192_b1_h4 64 "B A" "${s8k[@]}"
cell d256_s8192_b1_h4 256 "A B A2" "${s8k[@]}"
cell d256_s8192_b1_h4 16 "B A" "${s8k[@]}"
for page in dense 64 256; do cell d256_s4096_b4_h16 "$page" "B A" "${s4k[@]}"; done
log "paged timing done"
# Paged d256 through the 64-key kernel against the float64 reference (64-row boxes at pages of 64 / 256,
# 16-row boxes at 16, 8-row at 8; variable lengths).
for page in 64 256 16 8; do
  (($(left) > 40)) || break
  timeout 20 "$cli_b" run --backend cuda_sm90 --dtype fp16 --head-dim 256 --seqlen-q 400 --batch 3 --heads 4 \
    --heads-kv 2 --varlen --paged $page --verify full --repeat 1 >>"$out/verify.txt" 2>&1
  echo "verify d256 page $page rc=$?" >>"$out/verify_summary.txt"
done
log "verify: $(grep -c PASS "$out/verify.txt") PASS, $(grep -c FAIL "$out/verify.txt") FAIL"

run_tests() {
  local start
  (($(left) > 10)) || return 0
  start=$(date +%s)
  timeout "$(cap 45)" "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/tests.log" 2>&1
  log "sm90 suites (N, 64-key d256 everywhere) rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.log" | head -20 | tee -a "$out/summary.txt"
  local san='*cuda_sm90*d256*:-*2048x2048*:*2113x2100*:*1023x1024*:*1000x1001*'
  for tool in racecheck synccheck; do
    (($(left) > 8)) || break
    start=$(date +%s)
    timeout "$(cap 30)" compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/sanitize_$tool.log" 2>&1
    log "$tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/sanitize_$tool.log" | tr '\n' ' ')"
  done
}
run_tests
# Paged rows left out above, while time is left.
cell_reserve=5
cell d256_s8192_b1_h4 128 "B A" "${s8k[@]}"
for page in 16 128; do cell d256_s4096_b4_h16 "$page" "B A" "${s4k[@]}"; done
log "total"
