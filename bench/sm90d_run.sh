#!/usr/bin/env bash
# One device call of the sm90d work (session 4: d = 128 key block width for long key
# sequences). Run from this tree's root, carried inside the main checkout:
#   cd .device-carry/sm90d && bash bench/sm90d_run.sh [sm90_ab.py args, e.g. --hdims 128]
# Every build comes from THIS tree and differs only by compile flags, so the A/B isolates
# the flags: base (BASE_FLAGS, default: long-key blocks off = the kernel of the branch
# point), new (NEW_FLAGS), var (VAR_FLAGS), var2 (VAR2_FLAGS; both optional).
# Steps, each under its own timeout: the Python extension of each (90a, d 128, bf16) and a
# test/CLI build (90a, TEST_DIMS, fp16 + bf16, TEST_FLAGS, ptxas -v; optionally a second one,
# TEST2_DIMS / TEST2_FLAGS) in parallel; the sm90
# suites; SASS counts; racecheck + synccheck on SAN_FILTER; CLI sampled checks at long
# sequences; bench/sm90_ab.py (base, new, var, var2, cuDNN in one process).
# Build dirs live in /tmp/sm90d-build (kept while the device machine stays warm);
# everything returned lands in one tar under $OUT.
# Session 4's run 2, in today's flag names (it used -DFLASHATTN_SM90_TREE_REDUCTIONS=1 and a
# default FLASHATTN_SM90_LONG_KEY_BLOCK_N of 160; the PTX of both spellings is identical):
#   PY_DIMS="64;128" NEW_FLAGS="-DFLASHATTN_SM90_LONG_KEY_BLOCK_N=160" \
#   VAR_FLAGS="-DFLASHATTN_SM90_LONG_KEY_BLOCK_N=160 -DFLASHATTN_SM90_TREE_REDUCTIONS_MAX_D=256" \
#   TEST_DIMS="64;96;128;192;256" TEST_FLAGS="-DFLASHATTN_SM90_LONG_KEY_BLOCK_N=160 $forced" \
#   TEST2_DIMS="64;128" TEST2_FLAGS="-DFLASHATTN_SM90_LONG_KEY_BLOCK_N=160 $forced -DFLASHATTN_SM90_TREE_REDUCTIONS_MAX_D=256" \
#   bash bench/sm90d_run.sh --hdims 64,128
# ($forced: the two MIN_SEQLEN flags = 0, below.)
set -uo pipefail
here=$PWD
out=/tmp/sm90d-out
bld=/tmp/sm90d-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90d-out.tgz" sm90d-out; }
trap finish EXIT
log() { echo "== $*" | tee -a "$out/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv \
  | tee "$out/gpu.txt"
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
t0=$(date +%s)

# name, flags: the Python extension of this tree with these CUDA flags (sm90_device_common.sh).
build_py() { sm90_build_py "$1" "$2" 6 220; }
rm -rf "$bld/pyroot"
pids=()
build_py base "${BASE_FLAGS:--DFLASHATTN_SM90_LONG_KEY_BLOCK_N=0}" & pids+=($!)
build_py new "${NEW_FLAGS:-}" & pids+=($!)
[[ -n ${VAR_FLAGS:-} ]] && { build_py var "$VAR_FLAGS" & pids+=($!); }
[[ -n ${VAR2_FLAGS:-} ]] && { build_py var2 "$VAR2_FLAGS" & pids+=($!); }

# A test/CLI build: name, head dims, CUDA flags (by default every d = 128 call takes the
# long-key kernel, so the suites exercise it on every shape).
forced='-DFLASHATTN_SM90_LONG_KEY_MIN_SEQLEN=0 -DFLASHATTN_SM90_LONG_KEY_MIN_SEQLEN_MASKED=0'
build_tests() {
  local name=$1 dims=$2 flags=$3 jobs=$4
  cmake -S . -B "$bld/$name" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$dims" -DFLASHATTN_DTYPES="fp16;bf16" \
    -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$flags" >"$out/${name}_configure.log" 2>&1
  timeout 220 cmake --build "$bld/$name" -j "$jobs" --target flashattn_tests flashattn_cli >"$out/${name}_build.log" 2>&1
  local rc=$?
  echo "== test build $name (dims $dims; $flags) rc=$rc at $(( $(date +%s) - t0 )) s" >>"$out/summary.txt"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$out/${name}_build.log" | grep -E "entry|spill" \
    | sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 consumers \4 long_n \5 paged \6/' \
    >"$out/${name}_ptxas.txt"
  return $rc
}
# name: the sm90 suites, SASS counts, racecheck + synccheck, CLI checks at long sequences.
check_tests() {
  local name=$1 tests=$bld/$1/tests/flashattn_tests start tool
  local cli=$bld/$1/tools/cli/flashattn
  start=$(date +%s)
  timeout 120 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/${name}_tests.log" 2>&1
  log "$name sm90 suites rc=$? in $(( $(date +%s) - start )) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${name}_tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/${name}_tests.log" | head -20 | tee -a "$out/summary.txt"
  sm90_sass_counts "$bld/$name" >"$out/${name}_sass.txt" 2>&1
  local san=${SAN_FILTER:-'Grid/*cuda_sm90*_d128_*:Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/KVCacheTest.*cuda_sm90_3?_*'}
  for tool in racecheck synccheck; do
    start=$(date +%s)
    timeout 90 compute-sanitizer --tool "$tool" --error-exitcode 3 "$tests" --gtest_filter="$san" --gtest_brief=1 \
      >"$out/${name}_sanitize_$tool.log" 2>&1
    log "$name $tool rc=$? in $(( $(date +%s) - start )) s: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/${name}_sanitize_$tool.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${name}_sanitize_$tool.log" | tr '\n' ' ')"
  done
  # Long sequences through the CLI, each row checked on sampled rows against float64.
  if [[ -x $cli ]]; then
    timeout 60 "$cli" bench --backend cuda_sm90 --head-dims 128 --seqlens 4096,16384 --mask both \
      --verify sample --repeat 3 >>"$out/${name}_cli.txt" 2>&1
    echo "rc=$? (bench bf16)" >>"$out/${name}_cli.txt"
    for args in "--dtype fp16 --batch 2 --seqlen-q 8192" "--dtype bf16 --batch 4 --seqlen-q 8192 --varlen --causal" \
      "--dtype bf16 --batch 2 --seqlen-q 1000 --seqlen-k 9000 --window 700,300 --heads-kv 4"; do
      timeout 40 "$cli" run --backend cuda_sm90 --head-dim 128 --heads 16 $args --verify sample --repeat 3 \
        >>"$out/${name}_cli.txt" 2>&1
      echo "rc=$? (run $args)" >>"$out/${name}_cli.txt"
    done
    log "$name cli: $(grep -c 'PASS$' "$out/${name}_cli.txt") PASS lines, $(grep -E '[0-9]+ passed the check' "$out/${name}_cli.txt")"
  fi
}
tpid=
if [[ -n ${TEST2_FLAGS:-} ]]; then
  build_tests gpu2 "${TEST2_DIMS:-64;128}" "$TEST2_FLAGS" 6 & tpid=$!
fi
build_tests gpu "${TEST_DIMS:-96;128}" "${TEST_FLAGS-$forced}" 10 && check_tests gpu
if [[ -n $tpid ]]; then wait "$tpid" && check_tests gpu2; fi

for pid in "${pids[@]}"; do wait "$pid"; done
# Whole SASS of the d = 128 bf16 kernels of each Python build (reduction chains, HGMMA order).
if command -v cuobjdump >/dev/null; then
  for name in base new var var2; do
    o=$bld/py-$name/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim128_bf16.cu.o
    [[ -f $o ]] && cuobjdump -sass "$o" | gzip >"$out/sass_d128_bf16_$name.txt.gz"
  done
fi
start=$(date +%s)
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "${AB_TIMEOUT:-120}" python3 bench/sm90_ab.py "$@" \
  2>&1 | grep -v Warning | tee "$out/ab.jsonl"
log "ab rc=${PIPESTATUS[0]} in $(( $(date +%s) - start )) s; total $(( $(date +%s) - t0 )) s"
cat "$out/summary.txt"
