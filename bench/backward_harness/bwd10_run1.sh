#!/bin/bash
# bwd10 device run 1 (run from the tree's root; whole call <= ~280 s): test build of the d 64 / d 128 buckets
# (fp16 + bf16, sm_90 SASS, knobs at their defaults = the control), variant objects with the version 10
# knobs swapped into copies of its library:
#   lse = D64_LSE_REGS 1, st = D64_STATIC_BULK 1, ls = both, all = both + LPT_MAX_D 128 (d 64 and d 128 TUs).
# Harness A/B (bf16; d 64 512..16k causal and not; d 128 causal 512 / 1k), variants interleaved, def timed
# three times (control), FA2 on compare.py's layout in the same call; backward tests on `all` (test binary
# relinked against its library) and on def; memcheck / racecheck on `all` if time is left.
set -uo pipefail
O=/tmp/bwd10-out1; rm -rf $O; mkdir -p $O
B=/tmp/bwd10-build1; mkdir -p $B
finish() { tar -C /tmp -czf "${OUT:-/tmp}/bwd10-out1.tgz" bwd10-out1; }
trap finish EXIT
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/summary.txt; }
left() { echo $(( ${1:-270} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt
H=bench/backward_harness
timeout 40 cmake -S . -B $B/f -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS="64;128" \
  -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON > $O/cfg.log 2>&1
el "configure rc=$?"
( timeout 130 cmake --build $B/f -j16 --target flashattn_tests > $O/build_f.log 2>&1; echo "build f rc=$?" > $O/build_f.rc ) &
G=src/CMakeFiles/flashattn.dir/cuda
vobj() {  # vobj VARIANT OBJ(relative to $G) FLAGS: the build's own command line, sm_90 only, FLAGS added
  local v=$1 obj=$G/$2.o cmd c base
  base=$(basename $2)
  mkdir -p $B/vobj/$v
  cmd=$(ninja -C $B/f -t commands $obj | tail -1)
  c=$(echo "$cmd" | sed -e "s| -o $obj| -o $B/vobj/$v/$base.o|" -e "s| -MF [^ ]*| -MF $B/vobj/$v/$base.d|" \
      -e "s| -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80||")
  ( cd $B/f && timeout 120 bash -c "$c $3" > $O/ptxas_${v}_$base.log 2>&1; echo "vobj $v $base rc=$?" >> $O/summary.txt ) &
}
LSE="-DFLASHATTN_SM80_BWD_D64_LSE_REGS=1"; ST="-DFLASHATTN_SM80_BWD_D64_STATIC_BULK=1"
LPT="-DFLASHATTN_SM80_BWD_LPT_MAX_D=128"
vobj lse generated/backward_sm80_hdim64_bf16.cu "$LSE"
vobj st generated/backward_sm80_hdim64_bf16.cu "$ST"
vobj ls generated/backward_sm80_hdim64_bf16.cu "$LSE $ST"
for t in hdim64_bf16 hdim64_fp16 hdim128_bf16 hdim128_fp16; do
  vobj all generated/backward_sm80_$t.cu "$LSE $ST $LPT"
done
timeout 60 /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_90 -Iinclude -c $H/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | grep -v 'rc=0' | tr '\n' ' ') (non-zero vobj rcs listed)"
cp $B/f/src/libflashattn.a $B/lib_def.a
for v in lse st ls all; do cp $B/lib_def.a $B/lib_$v.a; ar r $B/lib_$v.a $B/vobj/$v/*.o; done
for v in def lse st ls all; do
  timeout 60 /usr/local/cuda/bin/nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
lcmd=$(ninja -C $B/f -t commands tests/flashattn_tests | tail -1)
( cd $B/f && timeout 60 bash -c "$(echo "$lcmd" | sed -e "s| -o tests/flashattn_tests| -o $B/tests_all|" -e "s|src/libflashattn.a|$B/lib_all.a|g")" ) > $O/link_tests.log 2>&1
el "link tests_all rc=$?"
TF='*Backward*cuda_sm80*:*Determinism*cuda_sm80*'
timeout 50 $B/tests_all --gtest_filter="$TF" > $O/tests_all.log 2>&1
el "tests all rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_all.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_all.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_all.log)"
timeout 20 $B/bb_def 64 512,16384 5 0 warm >> $O/bench.txt 2>&1
for v in def lse st ls all def all ls st lse def; do
  timeout 25 $B/bb_$v 64 512,1024,2048,4096,8192,16384 7 0 $v >> $O/bench.txt 2>&1; el "bench d64 $v rc=$?"
done
for v in def all def all def all; do
  timeout 10 $B/bb_$v 128 512,1024 9 0 $v 1 >> $O/bench.txt 2>&1; el "bench d128 $v rc=$?"
done
timeout 45 python3 $H/fa2_bwd_d64.py 64 > $O/fa2.txt 2>&1; el "fa2 d64 rc=$?"
timeout 20 python3 $H/fa2_bwd_d64.py 128 512,1024 1 >> $O/fa2.txt 2>&1; el "fa2 d128 rc=$?"
l=$(left 262); [ $l -gt 40 ] && l=40
if [ $l -gt 10 ]; then
  timeout $l $B/f/tests/flashattn_tests --gtest_filter="$TF" > $O/tests_def.log 2>&1
  el "tests def rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_def.log | tr '\n' ' ')"
fi
SAN='*BackwardTest*cuda_sm80_*_d64_*:*BackwardTest*cuda_sm80_*_d40_*:-*1023x1024*:*2048x2048*'
for tool in memcheck racecheck; do
  l=$(left 270); [ $l -gt 30 ] && l=30
  [ $l -gt 8 ] || break
  timeout $l compute-sanitizer --tool $tool --error-exitcode 3 $B/tests_all --gtest_filter="$SAN" > $O/${tool}.log 2>&1
  el "$tool rc=$? $(grep -m1 SUMMARY $O/${tool}.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/${tool}.log | tr '\n' ' ') ran=$(grep -c '^\[       OK \]' $O/${tool}.log)"
done
el done
