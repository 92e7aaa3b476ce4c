#!/bin/bash
# bwd9 device run 2 (run from the tree's root; <= ~190 s): run 1's builds (d 64 bucket, fp16 + bf16, sm_90;
# variant objects st = D64_STMATRIX 1, both = + D64_DQ_STAGE_V4 1), the harness A/B three times
# interleaved (9 calls each), FA2 in the same call, ncu of def / both / FA2 at d 64 s 2048 non-causal,
# backward tests + memcheck / racecheck on `both` again.
set -uo pipefail
O=/tmp/bwd9-out2; rm -rf $O; mkdir -p $O
B=/tmp/bwd9-build2; mkdir -p $B
finish() { tar -C /tmp -czf "${OUT:-/tmp}/bwd9-out2.tgz" bwd9-out2; }
trap finish EXIT
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/summary.txt; }
left() { echo $(( ${1:-185} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt
H=bench/backward_harness
timeout 40 cmake -S . -B $B/f -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS=64 \
  -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON > $O/cfg.log 2>&1
el "configure rc=$?"
( timeout 115 cmake --build $B/f -j16 --target flashattn_tests > $O/build_f.log 2>&1; echo "build f rc=$?" > $O/build_f.rc ) &
G=src/CMakeFiles/flashattn.dir/cuda
vobj() {  # vobj VARIANT OBJ(relative to $G) FLAGS: the build's own command line, sm_90 only, FLAGS added
  local v=$1 obj=$G/$2.o cmd c base
  base=$(basename $2)
  mkdir -p $B/vobj/$v
  cmd=$(ninja -C $B/f -t commands $obj | tail -1)
  c=$(echo "$cmd" | sed -e "s| -o $obj| -o $B/vobj/$v/$base.o|" -e "s| -MF [^ ]*| -MF $B/vobj/$v/$base.d|" \
      -e "s| -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80||")
  ( cd $B/f && timeout 110 bash -c "$c $3" > $O/ptxas_${v}_$base.log 2>&1; echo "vobj $v $base rc=$?" >> $O/summary.txt ) &
}
ST="-DFLASHATTN_SM80_BWD_D64_STMATRIX=1"; V4="-DFLASHATTN_SM80_BWD_D64_DQ_STAGE_V4=1"
vobj st generated/backward_sm80_hdim64_bf16.cu "$ST"
vobj both generated/backward_sm80_hdim64_bf16.cu "$ST $V4"
vobj both generated/backward_sm80_hdim64_fp16.cu "$ST $V4"
vobj both sm80/backward_backend.cu "$ST $V4"
timeout 60 /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_90 -Iinclude -c $H/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | grep -v 'rc=0' | tr '\n' ' ') (non-zero vobj rcs listed)"
cp $B/f/src/libflashattn.a $B/lib_def.a
for v in st both; do cp $B/lib_def.a $B/lib_$v.a; ar r $B/lib_$v.a $B/vobj/$v/*.o; done
for v in def st both; do
  timeout 60 /usr/local/cuda/bin/nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
lcmd=$(ninja -C $B/f -t commands tests/flashattn_tests | tail -1)
( cd $B/f && timeout 60 bash -c "$(echo "$lcmd" | sed -e "s| -o tests/flashattn_tests| -o $B/tests_both|" -e "s|src/libflashattn.a|$B/lib_both.a|g")" ) > $O/link_tests.log 2>&1
el "link tests_both rc=$?"
timeout 20 $B/bb_def 64 512,16384 5 0 warm >> $O/bench.txt 2>&1
for v in def both st both def st st def both; do timeout 25 $B/bb_$v 64 512,1024,2048,4096,8192,16384 9 0 $v >> $O/bench.txt 2>&1; el "bench $v rc=$?"; done
timeout 40 python3 $H/fa2_bwd_d64.py 64 > $O/fa2.txt 2>&1; el "fa2 rc=$?"
NCU="ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --import-source no"
for v in def both; do
  l=$(left 150); [ $l -gt 25 ] && l=25; [ $l -gt 8 ] || break
  timeout $l $NCU -k regex:backward_kernel --launch-skip 3 -c 1 -o $O/prof_$v $B/bb_$v 64 2048 1 0 prof 0 > $O/ncu_$v.log 2>&1; el "ncu $v rc=$?"
  timeout 15 ncu -i $O/prof_$v.ncu-rep --print-details all > $O/prof_$v.txt 2>&1
done
l=$(left 150); [ $l -gt 25 ] && l=25
if [ $l -gt 8 ]; then
  timeout $l $NCU -k regex:flash_bwd_dq_dk_dv --launch-skip 1 -c 1 -o $O/prof_fa2 python3 $H/fa2_ncu_target.py 64:2048 --calls 2 > $O/ncu_fa2.log 2>&1; el "ncu fa2 rc=$?"
  timeout 15 ncu -i $O/prof_fa2.ncu-rep --print-details all > $O/prof_fa2.txt 2>&1
fi
rm -f $O/*.ncu-rep
timeout 40 $B/tests_both --gtest_filter='*Backward*cuda_sm80*:*Determinism*cuda_sm80*' > $O/tests_both.log 2>&1
el "tests both rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_both.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_both.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_both.log)"
SAN='*BackwardTest*cuda_sm80_*_d64_*:*BackwardTest*cuda_sm80_*_d40_*:-*1023x1024*:*2048x2048*'
for tool in memcheck racecheck; do
  l=$(left 188); [ $l -gt 30 ] && l=30
  [ $l -gt 8 ] || break
  timeout $l compute-sanitizer --tool $tool --error-exitcode 3 $B/tests_both --gtest_filter="$SAN" > $O/${tool}.log 2>&1
  el "$tool rc=$? $(grep -m1 SUMMARY $O/${tool}.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/${tool}.log | tr '\n' ' ') ran=$(grep -c '^\[       OK \]' $O/${tool}.log)"
done
el done
