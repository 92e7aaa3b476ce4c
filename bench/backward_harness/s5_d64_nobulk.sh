#!/bin/bash
# Session 5, integrator: bwd9's candidate (a) — at d 64, dQ reduced straight from the registers (the existing
# DQ_BULK 0 path) instead of staged and reduced in bulk — timed beside the default and FA2 (compare.py's
# layout) in one call, plus the backward tests and memcheck/racecheck on the variant. <= ~170 s.
set -uo pipefail
O=/tmp/s5nb; rm -rf $O; mkdir -p $O
B=/tmp/s5nb-build; mkdir -p $B
trap 'tar -C /tmp -czf "${OUT:-/tmp}/s5nb.tgz" s5nb' EXIT
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/summary.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt
H=bench/backward_harness
timeout 40 cmake -S . -B $B/f -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS=64 \
  -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF > $O/cfg.log 2>&1
el "configure rc=$?"
( timeout 110 cmake --build $B/f -j16 --target flashattn_tests > $O/build_f.log 2>&1; echo "build f rc=$?" > $O/build_f.rc ) &
G=src/CMakeFiles/flashattn.dir/cuda
vobj() {  # vobj OBJ(relative to $G) FLAGS: the build's own command line, sm_90 only, FLAGS added
  local obj=$G/$1.o cmd c base
  base=$(basename $1); mkdir -p $B/vobj
  cmd=$(ninja -C $B/f -t commands $obj | tail -1)
  c=$(echo "$cmd" | sed -e "s| -o $obj| -o $B/vobj/$base.o|" -e "s| -MF [^ ]*| -MF $B/vobj/$base.d|" \
      -e "s| -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80||")
  ( cd $B/f && timeout 100 bash -c "$c $2" > $O/vobj_$base.log 2>&1; echo "vobj $base rc=$?" >> $O/summary.txt ) &
}
NB="-DFLASHATTN_SM80_BWD_DQ_BULK=0"
vobj generated/backward_sm80_hdim64_bf16.cu "$NB"
vobj generated/backward_sm80_hdim64_fp16.cu "$NB"
vobj sm80/backward_backend.cu "$NB"
timeout 60 nvcc -std=c++20 -arch=sm_90 -Iinclude -c $H/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | tr '\n' ' ')"
cp $B/f/src/libflashattn.a $B/lib_def.a; cp $B/lib_def.a $B/lib_nb.a; ar r $B/lib_nb.a $B/vobj/*.o
for v in def nb; do
  timeout 60 nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
lcmd=$(ninja -C $B/f -t commands tests/flashattn_tests | tail -1)
( cd $B/f && timeout 60 bash -c "$(echo "$lcmd" | sed -e "s| -o tests/flashattn_tests| -o $B/tests_nb|" -e "s|src/libflashattn.a|$B/lib_nb.a|g")" ) > $O/link_tests.log 2>&1
el "link tests_nb rc=$?"
timeout 20 $B/bb_def 64 512,16384 5 0 warm >> $O/bench.txt 2>&1
for v in def nb nb def def nb; do timeout 25 $B/bb_$v 64 512,1024,2048,4096,8192,16384 9 0 $v >> $O/bench.txt 2>&1; el "bench $v rc=$?"; done
timeout 40 python3 $H/fa2_bwd_d64.py 64 > $O/fa2.txt 2>&1; el "fa2 rc=$?"
timeout 40 $B/tests_nb --gtest_filter='*Backward*cuda_sm80*:*Determinism*cuda_sm80*' > $O/tests_nb.log 2>&1
el "tests nb rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_nb.log | tr '\n' ' ')"
SAN='*BackwardTest*cuda_sm80_*_d64_*:*BackwardTest*cuda_sm80_*_d40_*:-*1023x1024*:*2048x2048*'
for tool in memcheck racecheck; do
  timeout 25 compute-sanitizer --tool $tool --error-exitcode 3 $B/tests_nb --gtest_filter="$SAN" > $O/$tool.log 2>&1
  el "$tool rc=$? $(grep -m1 SUMMARY $O/$tool.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/$tool.log | tr '\n' ' ')"
done
el done
