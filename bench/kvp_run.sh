#!/usr/bin/env bash
# Session 7, helper kvp (issue 4/6): the cuda_sm80 forward with paged K/V against dense, before/after, in
# one device call (<= 240 s). Run from the repository root of the copy that holds two trees:
#   .device-carry/kvp/base  main 4a446bb (before)      .device-carry/kvp/new  branch kvp (after)
#  1. three builds in parallel (sm_80 + sm_90 SASS, no backward): A = base CLI and B = new CLI (d64/d128 fp16,
#     the timed kernels), T = new test binary (buckets 32/64/96/128/256, fp16 + bf16: the per-row loader,
#     the strided one with a row step below the swizzle period (d256, 4 warps) and the generic fallback
#     (bucket 96, 12 chunks per row for 128 threads));
#  2. `flashattn run --backend cuda_sm80 --dtype fp16 --repeat 20 --verify none`, dense and paged at several
#     page sizes, columns A, B, A again (control), interleaved per cell;
#  3. `--verify full` (float64 reference) with B per page size (1, 3, 16, 48, 64, 200, 256) on small varlen
#     problems, while the test build finishes;
#  4. T: the cuda_sm80 forward / varlen / KV-cache suites and CudaRobustness, then compute-sanitizer memcheck
#     (and racecheck if time is left) on small paged cases;
#  5. the largest problem (d128 4096 b4 h16) last, if time is left.
set -uo pipefail
root=$PWD
base=$root/.device-carry/kvp/base
new=$root/.device-carry/kvp/new
out=/tmp/kvp-out
final="${OUT:-$root/kvp-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -czf "$final/kvp.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
stamp() { echo "== [$(elapsed) s] $*" | tee -a "$out/run.txt"; }
# budget CAP [RESERVE]: seconds a step may take, at most CAP, leaving RESERVE before the 232 s mark (0: skip).
budget() {
  local left=$(( 232 - $(elapsed) - ${2:-0} ))
  (( left > $1 )) && left=$1
  (( left < 8 )) && left=0
  echo $left
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw \
  --format=csv,noheader >>"$out/run.txt" 2>&1
common=(-G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_BACKWARD=OFF
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_PTXAS_VERBOSE=ON)
cli_args=(-DFLASHATTN_HEAD_DIMS="64;128" -DFLASHATTN_DTYPES=fp16 -DFLASHATTN_BUILD_TESTS=OFF
  -DFLASHATTN_BUILD_CLI=ON)

build() {  # NAME SOURCE TARGET LIMIT cmake-args...
  local name=$1 src=$2 target=$3 limit=$4 niceness=0
  shift 4
  [[ $name == T ]] && niceness=19  # the test build yields to A and B, then to the timing
  cmake -S "$src" -B "$root/build/kvp-$name" "${common[@]}" "$@" >"$out/${name}_configure.log" 2>&1 &&
    nice -n $niceness timeout "$limit" cmake --build "$root/build/kvp-$name" --target "$target" -j 16 >"$out/${name}_build.log" 2>&1
  local rc=$?
  stamp "build $name rc=$rc"
  grep -E "Compiling entry|registers|spill" "$out/${name}_build.log" | sed 's/.*ForwardConfigILi//' \
    >"$out/${name}_ptxas.txt"
  return $rc
}
build A "$base" flashattn_cli 150 "${cli_args[@]}" &
build_a=$!
build B "$new" flashattn_cli 150 "${cli_args[@]}" &
build_b=$!
build T "$new" flashattn_tests 200 -DFLASHATTN_HEAD_DIMS="32;64;96;128;256" -DFLASHATTN_DTYPES="fp16;bf16" \
  -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF &
build_t=$!
wait $build_a
wait $build_b
cli_a=$root/build/kvp-A/tools/cli/flashattn
cli_b=$root/build/kvp-B/tools/cli/flashattn
tests=$root/build/kvp-T/tests/flashattn_tests
# The test build goes on at nice 19 while the timing runs (the CLI's per-call events include its host
# overhead, a few us: the control column shows what the load does to identical code).
stamp "timing starts (test build still running: $(kill -0 $build_t 2>/dev/null && echo yes || echo no))"

# cell PROBLEM_LABEL PAGE ARGS...: one line per column, "label page column time".
cell() {
  local label=$1 page=$2
  shift 2
  (( $(elapsed) < ${cell_deadline:-150} )) || { echo "$label $page skipped (time)" | tee -a "$out/timing.txt"; return; }
  local paged=()
  [[ $page != dense ]] && paged=(--paged "$page")
  local column cli
  for column in A B A2; do
    cli=$cli_a
    [[ $column == B ]] && cli=$cli_b
    [[ -x $cli ]] || continue
    local line
    line=$(timeout 30 "$cli" run --backend cuda_sm80 --dtype fp16 --repeat 20 --verify none "$@" "${paged[@]}" \
      2>&1 | tee -a "$out/timing_raw.txt" | grep -E "^time|not run" | head -1)
    echo "$label $page $column ${line:-FAILED}" | tee -a "$out/timing.txt"
  done
}
for page in dense 16 48 64 128 256; do
  cell d64_s8192_b1_h4 "$page" --head-dim 64 --seqlen-q 8192 --batch 1 --heads 4
done
stamp "d64 s8192 done"
for page in dense 16 48 64 128 200 256; do
  cell d128_s8192_b1_h4 "$page" --head-dim 128 --seqlen-q 8192 --batch 1 --heads 4
done
stamp "d128 s8192 done"
for d in 64 128; do
  for page in dense 16; do
    cell "d${d}_s2048_b8_h8_kv2" "$page" --head-dim $d --seqlen-q 2048 --batch 8 --heads 8 --heads-kv 2
  done
done
stamp "s2048 kv2 done"

# float64-checked runs per page size (B), small varlen problems (pages smaller and larger than a key tile,
# odd sizes), and a causal + GQA one.
for page in 1 3 16 48 64 200 256; do
  for d in 64 128; do
    (( $(elapsed) < 170 )) || continue
    timeout 30 "$cli_b" run --backend cuda_sm80 --dtype fp16 --head-dim $d --seqlen-q 400 --batch 3 --heads 4 \
      --heads-kv 2 --varlen --paged $page --verify full --repeat 1 >>"$out/verify.txt" 2>&1
    echo "verify d$d page $page rc=$?" >>"$out/verify_summary.txt"
  done
done
for page in 48 200; do
  (( $(elapsed) < 170 )) || continue
  timeout 30 "$cli_b" run --backend cuda_sm80 --dtype fp16 --head-dim 128 --seqlen-q 200 --seqlen-k 700 --batch 2 \
    --heads 8 --heads-kv 2 --causal --paged $page --verify full --repeat 1 >>"$out/verify.txt" 2>&1
  echo "verify causal d128 sq200 sk700 page $page rc=$?" >>"$out/verify_summary.txt"
done
stamp "verify: $(grep -c PASS "$out/verify.txt") PASS, $(grep -c FAIL "$out/verify.txt") FAIL, \
$(grep -c 'rc=0' "$out/verify_summary.txt")/$(wc -l <"$out/verify_summary.txt") rc=0"

wait $build_t
stamp "test build rc=$?"
filter='*KVCache*cuda_sm80*:*Varlen*cuda_sm80*:*Forward*cuda_sm80*:*CudaRobustness*'
if [[ -x $tests ]]; then
  "$tests" --gtest_filter="$filter" --gtest_list_tests 2>&1 | grep -E "_page|paged|^[A-Za-z]" >"$out/paged_tests.txt"
  left=$(budget 80 35)
  (( left > 0 )) && timeout $left "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$out/tests.txt" 2>&1
  stamp "tests rc=$? $(tail -3 "$out/tests.txt" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/tests.txt" | head -20
  sanitize='*CudaRobustness*paged*:Grid/VarlenTest.*cuda_sm80*_page3*:Grid/KVCacheTest.*cuda_sm80*_page3*:'
  sanitize+='Grid/KVCacheTest.*cuda_sm80*_page1_*:Grid/VarlenTest.*cuda_sm80*_page16*'
  left=$(budget 40)
  (( left > 0 )) && timeout $left compute-sanitizer --tool memcheck --error-exitcode 3 "$tests" \
    --gtest_filter="$sanitize" --gtest_brief=1 >"$out/memcheck.txt" 2>&1
  stamp "memcheck rc=$? $(grep -m1 'SUMMARY' "$out/memcheck.txt") $(tail -1 "$out/memcheck.txt")"
  left=$(budget 40)
  if (( left > 15 )); then
    timeout $left compute-sanitizer --tool racecheck --error-exitcode 3 "$tests" \
      --gtest_filter="$sanitize" --gtest_brief=1 >"$out/racecheck.txt" 2>&1
    stamp "racecheck rc=$? $(grep -m1 'SUMMARY' "$out/racecheck.txt") $(tail -1 "$out/racecheck.txt")"
  fi
fi

for page in dense 16 64 256; do
  cell_deadline=215 cell d128_s4096_b4_h16 "$page" --head-dim 128 --seqlen-q 4096 --batch 4 --heads 16
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1
stamp done
cp "$out/run.txt" "$out/timing.txt" "$final/" 2>/dev/null
