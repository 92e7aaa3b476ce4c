#!/usr/bin/env bash
# Needs branch sm90x's tree: the FLASHATTN_SM90_EXP2_POLY_* switches it builds were removed from main (slower).
# One device call of the sm90x work (session 5: exponentials on the FMA pipe, issue 6).
# Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90x && bash bench/sm90x_run.sh [sm90_ab.py args]
# Every build comes from THIS tree and differs only by compile flags
# (FLASHATTN_SM90_EXP2_POLY_{D64,D64_THREE,D128}: how many of every 16 exponentials run on the
# FMA pipe): Python extensions base / new / var / var2 (BASE_FLAGS, NEW_FLAGS, VAR_FLAGS,
# VAR2_FLAGS; the last two optional), d PY_DIMS (default 64;128), bf16, 90a; beside them one
# test/CLI build (TEST_DIMS, fp16 + bf16, TEST_FLAGS, ptxas -v).
# Steps, each under its own timeout: the sm90 suites and the Exp2Poly host test; SASS counts
# per forward kernel (MUFU.EX2, FFMA, FADD, HGMMA, LDL/STL) of the test build and of each
# Python build; CLI sampled float64 checks at long sequences; ncu of base and new at d 64
# (NCU=0 skips); bench/sm90_ab.py (base, new, var, var2, cuDNN in one process); last,
# racecheck + synccheck of the test build on SAN_FILTER with the time left (SAN=0 skips).
# The two runs of 2026-11-22 (docs/performance-sm90.md, "Session 5, helper sm90x"):
#   run 1: VAR_FLAGS="$(poly 2 2 4)" VAR2_FLAGS="$(poly 6 6 0)" SAN=0 NCU=0 bash bench/sm90x_run.sh --hdims 64,128
#          (base poly 0 0 0, new poly 4 4 2, tests with poly 16 16 16)
#   run 2: PY_DIMS=64 NEW_FLAGS="$(poly 2 2 2)" VAR_FLAGS="$(poly 0 0 0)" TEST_FLAGS="$(poly 4 4 4)" \
#          bash bench/sm90x_run.sh --hdims 64
# (poly A B C = -DFLASHATTN_SM90_EXP2_POLY_D64=A -DFLASHATTN_SM90_EXP2_POLY_D64_THREE=B
#  -DFLASHATTN_SM90_EXP2_POLY_D128=C, spelled out on the command line.)
# Everything returned lands in one tar under $OUT.
set -uo pipefail
out=/tmp/sm90x-out
bld=/tmp/sm90x-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90x-out.tgz" sm90x-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv |
  tee "$out/gpu.txt"
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

poly() { echo "-DFLASHATTN_SM90_EXP2_POLY_D64=$1 -DFLASHATTN_SM90_EXP2_POLY_D64_THREE=$2 -DFLASHATTN_SM90_EXP2_POLY_D128=$3"; }
build_py() { PY_DIMS=${PY_DIMS:-64;128} sm90_build_py "$1" "$2" 3 200 -DFLASHATTN_PTXAS_VERBOSE=ON; }
rm -rf "$bld/pyroot"
pids=()
build_py base "${BASE_FLAGS:-$(poly 0 0 0)}" & pids+=($!)
build_py new "${NEW_FLAGS:-$(poly 4 4 2)}" & pids+=($!)
[[ -n ${VAR_FLAGS:-} ]] && { build_py var "$VAR_FLAGS" & pids+=($!); }
[[ -n ${VAR2_FLAGS:-} ]] && { build_py var2 "$VAR2_FLAGS" & pids+=($!); }

# The SASS of every sm90 forward kernel in the objects given: per kernel the MUFU.EX2, FFMA,
# FADD, HGMMA and LDL/STL counts (the whole kernel: the softmax loop is unrolled inside it).
sass_counts() {
  command -v cuobjdump >/dev/null || return 0
  local o
  for o in "$@"; do
    [[ -f $o ]] || continue
    cuobjdump -sass "$o" | awk -v f="$(basename "$o")" '
      /Function : .*forward_kernel/ {name = $3; next}
      /Function :/ {name = ""}
      name == "" {next}
      /MUFU.EX2/ {m[name]++}
      /FFMA/ {fm[name]++}
      /FADD/ {fa[name]++}
      /HGMMA/ {h[name]++}
      /LDL|STL/ {l[name]++}
      END {for (n in h) printf "%s %s MUFU.EX2 %d FFMA %d FADD %d HGMMA %d LDL/STL %d\n", f, substr(n, 1, 110), m[n], fm[n], fa[n], h[n], l[n]}'
  done
}

build_tests() {
  local name=$1 dims=$2 flags=$3 jobs=$4
  cmake -S . -B "$bld/$name" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$dims" -DFLASHATTN_DTYPES="fp16;bf16" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$flags" >"$out/${name}_configure.log" 2>&1
  timeout 220 cmake --build "$bld/$name" -j "$jobs" --target flashattn_tests flashattn_cli >"$out/${name}_build.log" 2>&1
  local rc=$?
  log "test build $name (dims $dims; $flags) rc=$rc"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$out/${name}_build.log" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 consumers \4 long_n \5 paged \6/' |
    paste - - >"$out/${name}_ptxas.txt"
  return $rc
}

# racecheck + synccheck of build NAME on SAN_FILTER, each within what is left of SAN_BUDGET
# seconds after the start (default 280), skipped when under 30 s are left.
sanitize() {
  local name=$1 tests=$bld/$1/tests/flashattn_tests start tool left
  local san=${SAN_FILTER:-'Grid/*cuda_sm90*_d64_*:Grid/*cuda_sm90*_113x203_*'}
  for tool in racecheck synccheck; do
    left=$((${SAN_BUDGET:-280} - ($(date +%s) - t0)))
    if ((left < 30)); then
      log "$name $tool skipped: $left s left"
      continue
    fi
    start=$(date +%s)
    timeout $((left < 90 ? left : 90)) compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" \
      --gtest_filter="$san" --gtest_brief=1 >"$out/${name}_sanitize_$tool.log" 2>&1
    log "$name $tool rc=$? in $(($(date +%s) - start)) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/${name}_sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${name}_sanitize_$tool.log" | tr '\n' ' ')"
  done
}

check_tests() {
  local name=$1 tests=$bld/$1/tests/flashattn_tests start tool
  local cli=$bld/$1/tools/cli/flashattn
  start=$(date +%s)
  timeout 150 "$tests" --gtest_filter='*cuda_sm90*:Exp2Poly.*' --gtest_brief=1 >"$out/${name}_tests.log" 2>&1
  log "$name sm90 suites + Exp2Poly rc=$? in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${name}_tests.log" | tr '\n' ' ')"
  grep -E 'FAILED|exp2_poly degree' "$out/${name}_tests.log" | head -20 | tee -a "$out/summary.txt"
  sass_counts "$bld/$name"/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim*.cu.o >"$out/${name}_sass.txt" 2>&1
  # Long sequences through the CLI, each row checked on sampled rows against float64.
  if [[ -x $cli ]]; then
    timeout 60 "$cli" bench --backend cuda_sm90 --head-dims 64,128 --seqlens 4096,16384 --mask both \
      --verify sample --repeat 3 >>"$out/${name}_cli.txt" 2>&1
    echo "rc=$? (bench bf16)" >>"$out/${name}_cli.txt"
    for args in "--dtype fp16 --batch 2 --seqlen-q 8192" "--dtype fp16 --batch 4 --seqlen-q 8192 --varlen --causal" \
      "--dtype bf16 --batch 2 --seqlen-q 1000 --seqlen-k 9000 --window 700,300 --heads-kv 4"; do
      # shellcheck disable=SC2086  # args is a word list
      timeout 40 "$cli" run --backend cuda_sm90 --head-dim 64 --heads 16 $args --verify sample --repeat 3 \
        >>"$out/${name}_cli.txt" 2>&1
      echo "rc=$? (run d64 $args)" >>"$out/${name}_cli.txt"
    done
    log "$name cli: $(grep -c 'PASS$' "$out/${name}_cli.txt") PASS lines, $(grep -E -c 'FAIL' "$out/${name}_cli.txt") FAIL lines, rcs: $(grep -o 'rc=[0-9]*' "$out/${name}_cli.txt" | tr '\n' ' ')"
  fi
}

build_tests gpu "${TEST_DIMS:-64;128}" "${TEST_FLAGS:-$(poly 16 16 16)}" 6 && check_tests gpu
test_ok=$?

for pid in "${pids[@]}"; do wait "$pid"; done
for name in base new var var2; do
  d=$bld/py-$name/src/CMakeFiles/flashattn.dir/cuda/sm90
  [[ -d $d ]] && sass_counts "$d"/forward_hdim*.cu.o >"$out/py_${name}_sass.txt" 2>&1
  [[ -f $out/py_${name}_build.log ]] && grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$out/py_${name}_build.log" |
    grep -E "entry|spill" | sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 consumers \4 long_n \5 paged \6/' |
    paste - - >"$out/py_${name}_ptxas.txt"
done
# ncu of bench/sm90x_ncu_target.py's kernels (base and new, d 64, 2048 and 8192 keys): pipe
# utilisation (XU = MUFU, FMA, ALU), issue slots, warp stall reasons (NCU=0 skips).
if [[ ${NCU:-1} != 0 ]] && command -v ncu >/dev/null; then
  sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats"
  # shellcheck disable=SC2086  # sections is a word list
  PYTHONPATH=$bld/pyroot timeout 90 ncu $sections -k regex:forward_kernel --launch-count 4 -o "$out/ncu_d64" \
    python3 bench/sm90x_ncu_target.py >"$out/ncu.log" 2>&1
  log "ncu rc=$?"
  [[ -f $out/ncu_d64.ncu-rep ]] && timeout 30 ncu -i "$out/ncu_d64.ncu-rep" --page details >"$out/ncu_d64.txt" 2>&1
fi
start=$(date +%s)
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${AB_TIMEOUT:-110}" python3 bench/sm90_ab.py "$@" \
  2>&1 | grep -v Warning | tee "$out/ab.jsonl"
log "ab rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
[[ ${SAN:-1} != 0 && $test_ok == 0 ]] && sanitize gpu
cat "$out/summary.txt"
