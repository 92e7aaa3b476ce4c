#!/usr/bin/env bash
set -uo pipefail
# The device run behind docs/performance-sm90.md "Features 2026-11-22": build (CUDA 80;90a, no backward),
# the cuda_sm90 C++ suites, memcheck + synccheck on the new cases, CLI timings with sampled checks,
# bench/kvcache_compare.py. Env: HD (head dims), BT/TT/ST/KT (step time limits), TF (gtest filter).
cd "$(dirname "$0")/.."
nvidia-smi -L
start=$(date +%s)
cmake -S . -B build/g -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS="80;90a" -DFLASHATTN_HEAD_DIMS="${HD:-64;96;128;256}" \
  -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=ON -DFLASHATTN_PTXAS_VERBOSE=ON \
  -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" > $OUT/cfg.log 2>&1
timeout ${BT:-330} cmake --build build/g -j16 > $OUT/build.log 2>&1; rc=$?
echo "== build rc=$rc $(( $(date +%s)-start ))s"
[[ $rc == 0 ]] || { grep -B2 -A12 "error" $OUT/build.log | head -60; exit 1; }
grep -A2 "Compiling entry.*forward_kernel.*sm_90a" $OUT/build.log | grep -oE "forward_kernelINS1_13ForwardConfigILi[0-9]+ELi[0-9]+E[0-9a-z_]+|[0-9]+ bytes spill stores" | paste - - | sort | uniq
T=build/g/tests/flashattn_tests
start=$(date +%s)
timeout ${TT:-150} $T --gtest_filter="${TF:-*cuda_sm90*}" > $OUT/t90.log 2>&1; echo "== sm90 tests rc=$? $(( $(date +%s)-start ))s"
grep -E "^\[  (PASSED|FAILED) |tests ran" $OUT/t90.log | tail -3
grep -E "^\[  FAILED  \] " $OUT/t90.log | head -30
echo "skip reasons (sm90):"; grep -oE "cannot run this [a-z_ ]+: .*" $OUT/t90.log | sort | uniq -c | sort -rn | head -20
grep -B3 -A12 "Failure" $OUT/t90.log | head -60
start=$(date +%s)
[[ -n "${T8:-}" ]] && timeout $T8 $T --gtest_filter="Grid/ForwardTest*cuda_sm80_1[4-5][0-9]_*" --gtest_brief=1 > $OUT/t80.log 2>&1
SF='Grid/*cuda_sm90*gqa8x2*:Grid/*cuda_sm90*dv512*:Grid/*cuda_sm90*page256*:Grid/*cuda_sm90*_d96_*:Grid/*cuda_sm90*gqa16x4*'
for tool in memcheck synccheck; do
  start=$(date +%s)
  timeout ${ST:-100} compute-sanitizer --tool $tool --error-exitcode 3 $T --gtest_filter="$SF" --gtest_brief=1 > $OUT/san_$tool.log 2>&1
  echo "== $tool rc=$? $(( $(date +%s)-start ))s: $(grep -m1 'ERROR SUMMARY' $OUT/san_$tool.log) $(grep -E '^\[  PASSED|tests ran' $OUT/san_$tool.log | tail -1)"
done
CLI=build/g/tools/cli/flashattn
$CLI info > $OUT/info.txt 2>&1; sed -n '/^feature/,/^$/p' $OUT/info.txt | head -30
run() { echo "-- $*"; timeout 40 $CLI run "$@" --repeat 20 2>&1 | grep -E "^time|^speed|PASS|FAIL|not run" | head -3; }
for be in cuda_sm90 cuda_sm80; do
  run -b 64 --seqlen-q 1 --seqlen-k 8192 --heads 32 --heads-kv 8 --head-dim 128 --backend $be --verify sample
  run -b 8 --seqlen-q 512 --seqlen-k 8192 --heads 32 --heads-kv 8 --head-dim 128 --causal --backend $be --verify sample
  run -b 16 --seqlen-q 4096 --heads 16 --head-dim 96 --causal --backend $be --verify sample
  run -b 16 --seqlen-q 4096 --heads 16 --head-dim 64 --head-dim-v 256 --causal --backend $be --verify sample
done
run -b 16 --seqlen-q 4096 --heads 16 --head-dim 64 --head-dim-v 512 --causal --backend cuda_sm90 --verify sample
run -b 2 --seqlen-q 8192 --heads 8 --head-dim 256 --backend cuda_sm90 --verify none
run -b 2 --seqlen-q 8192 --heads 16 --head-dim 128 --backend cuda_sm90 --verify none
start=$(date +%s)
rm -rf build/pyroot && mkdir -p build/pyroot && cp -r python/flashattn build/pyroot/ && cp build/g/python/_C*.so build/pyroot/flashattn/
PYTHONPATH=$PWD/build/pyroot PYTHONUNBUFFERED=1 timeout ${KT:-120} python3 bench/kvcache_compare.py > $OUT/kvcache.log 2>&1; echo "== kvcache bench rc=$?"
sed -n '/^# /,$p' $OUT/kvcache.log; grep check $OUT/kvcache.log
