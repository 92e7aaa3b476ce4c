#!/usr/bin/env bash
# Needs branch sm90i's tree: FLASHATTN_SM90_SOFTMAX_PIPELINE was measured slower and is not on main.
# The one device call of helper sm90i (session 5, issue 6: the d 64 two-consumer kernel's
# exponentials; forward_config.h FLASHATTN_SM90_SOFTMAX_PIPELINE). Run from this tree's root,
# carried inside the main checkout:
#   cd .device-carry/sm90i && bash bench/sm90i_run.sh
# Builds from THIS tree, differing only by compile flags, all in parallel: five Python extensions
# (90a, bf16, d 64): base (today's defaults), new (pipeline 1), var (pipeline 2), var2 (pipeline 1
# + sm90h's row sums on the tensor cores + per-tile mask range in the two-consumer kernels), var3
# (pipeline 2 + the same); two test builds (fp16 + bf16): tA = pipeline 1 (d 64), tB =
# pipeline 2 + both switches (d 64 + 128) (together every new code path). Then: the sm90 suites of both; the
# SASS of the five d 64 objects (cuobjdump, returned whole, and opcode counts); bench/sm90i_ab.py
# (five builds + cuDNN in one process); racecheck + synccheck of both test builds on the d 64
# grid cases while time is left. Every step under a timeout; the whole call ends by ~190 s;
# everything returned is one tar under $OUT.
set -uo pipefail
out=/tmp/sm90i-out
bld=/tmp/sm90i-build
rm -rf "$out" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90i-out.tgz" sm90i-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-188} - ($(date +%s) - t0))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
nvcc --version >>"$out/gpu.txt" 2>&1
cp COMMIT "$out/commit.txt" 2>/dev/null
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

sw="-DFLASHATTN_SM90_ROW_SUM_MMA=1 -DFLASHATTN_SM90_TILE_MASK_RANGE=1"
pipe() { echo "-DFLASHATTN_SM90_SOFTMAX_PIPELINE=$1"; }
build_py() { PY_DIMS=64 sm90_build_py "$1" "$2" 3 130 -DFLASHATTN_PTXAS_VERBOSE=ON; }
build_tests() {  # NAME FLAGS DIMS
  cmake -S . -B "$bld/$1" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90a -DFLASHATTN_BACKWARD=OFF \
    -DFLASHATTN_HEAD_DIMS="$3" -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON \
    -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=OFF \
    -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$2" >"$out/${1}_configure.log" 2>&1 &&
    timeout 130 cmake --build "$bld/$1" -j 4 --target flashattn_tests >"$out/${1}_build.log" 2>&1
  log "test build $1 (d $3; $2) rc=$?"
}
ptxas_table() {  # build log -> sm90 forward kernels: registers and spills
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$1" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 consumers \4 long_n \5 paged \6/' |
    paste - -
}

rm -rf "$bld/pyroot"
pids=()
build_py base "" & pids+=($!)
build_py new "$(pipe 1)" & pids+=($!)
build_py var "$(pipe 2)" & pids+=($!)
build_py var2 "$(pipe 1) $sw" & pids+=($!)
build_py var3 "$(pipe 2) $sw" & pids+=($!)
build_tests tA "$(pipe 1)" 64 & pids+=($!)
build_tests tB "$(pipe 2) $sw" "64;128" & pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
for name in base new var var2 var3; do
  [[ -f $out/py_${name}_build.log ]] && ptxas_table "$out/py_${name}_build.log" >"$out/py_${name}_ptxas.txt"
done

suite() {  # NAME
  local tests=$bld/$1/tests/flashattn_tests start=$(date +%s)
  [[ -x $tests ]] || { log "$1: no test binary"; return 1; }
  timeout 40 "$tests" --gtest_filter='*cuda_sm90*' --gtest_brief=1 >"$out/${1}_tests.log" 2>&1
  local rc=$?
  log "$1 sm90 suites rc=$rc in $(($(date +%s) - start)) s: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${1}_tests.log" | tr '\n' ' ')"
  grep -E 'FAILED' "$out/${1}_tests.log" | head -10 | tee -a "$out/summary.txt"
  return $rc
}
suite tA; okA=$?
suite tB; okB=$?

if command -v cuobjdump >/dev/null; then
  for name in base new var var2 var3; do
    o=$bld/py-$name/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim64_bf16.cu.o
    [[ -f $o ]] && cuobjdump -sass "$o" >"$out/sass_${name}_d64.txt" 2>&1
  done
  log "sass dumped: $(ls "$out"/sass_*_d64.txt 2>/dev/null | wc -l) files"
fi

start=$(date +%s)
t=$(left); ((t > 70)) && t=70
if ((t > 20)); then
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$t" python3 bench/sm90i_ab.py 2>&1 | grep -v Warning |
    tee "$out/ab.jsonl"
  log "ab rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
else
  log "ab skipped: $t s left"
fi

san() {  # NAME TOOL
  local t
  t=$(left)
  ((t < 12)) && { log "$1 $2 skipped: $t s left"; return; }
  ((t > 40)) && t=40
  timeout "$t" compute-sanitizer --tool "$2" --error-exitcode 3 "$bld/$1/tests/flashattn_tests" \
    --gtest_filter='Grid/*cuda_sm90*_d64_*' --gtest_brief=1 >"$out/${1}_sanitize_$2.log" 2>&1
  log "$1 $2 rc=$?: $(grep -E -m1 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/${1}_sanitize_$2.log") $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/${1}_sanitize_$2.log" | tr '\n' ' ')"
}
[[ $okB == 0 ]] && san tB racecheck
[[ $okA == 0 ]] && san tA racecheck
[[ $okB == 0 ]] && san tB synccheck
[[ $okA == 0 ]] && san tA synccheck
cat "$out/summary.txt"
