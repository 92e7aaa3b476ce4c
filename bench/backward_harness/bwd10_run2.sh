#!/bin/bash
# bwd10 device run 2 (run from the tree's root; whole call <= ~280 s): test build of the d 64 / d 128 buckets
# (fp16 + bf16, sm_90 SASS) with this tree's defaults (STATIC_BULK_MAX_D 64 = version 10); variant objects
# swapped into copies of its library: ctl = STATIC_BULK_MAX_D 0 (version 8's kernel, the control),
# d 64: nm = + STATIC_NOMASK 1, dw = + DEFER_BULK_WAIT_MAX_D 64, nmdw = both; d 128: s128 =
# STATIC_BULK_MAX_D 128, dw128 = DEFER_BULK_WAIT_MAX_D 128, sdw128 = both; cand = all of them (all four
# TUs, for the tests). Harness A/B interleaved (bf16, d 64 and d 128, 512..16k, causal and not), def timed
# three times,
# FA2 on compare.py's layout in the same call; dK / dV hashes and dQ sums of every variant on four shapes
# per d (bwd_bench's BWD_BENCH_HASH); backward tests on def and cand; memcheck / racecheck on def
# (and cand if time is left); ncu of ctl / def at d 64 s 2048 non-causal if time is left.
set -uo pipefail
O=/tmp/bwd10-out2; rm -rf $O; mkdir -p $O
B=/tmp/bwd10-build2; mkdir -p $B
finish() { rm -f $O/*.ncu-rep; tar -C /tmp -czf "${OUT:-/tmp}/bwd10-out2.tgz" bwd10-out2; }
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
CTL="-DFLASHATTN_SM80_BWD_STATIC_BULK_MAX_D=0"; NM="-DFLASHATTN_SM80_BWD_STATIC_NOMASK=1"
S128="-DFLASHATTN_SM80_BWD_STATIC_BULK_MAX_D=128"; DW="-DFLASHATTN_SM80_BWD_DEFER_BULK_WAIT_MAX_D=128"
vobj ctl generated/backward_sm80_hdim64_bf16.cu "$CTL"
vobj nm generated/backward_sm80_hdim64_bf16.cu "$NM"
vobj dw generated/backward_sm80_hdim64_bf16.cu "$DW"
vobj nmdw generated/backward_sm80_hdim64_bf16.cu "$NM $DW"
vobj s128 generated/backward_sm80_hdim128_bf16.cu "$S128"
vobj dw128 generated/backward_sm80_hdim128_bf16.cu "$DW"
vobj sdw128 generated/backward_sm80_hdim128_bf16.cu "$S128 $DW"
for t in hdim64_bf16 hdim64_fp16 hdim128_bf16 hdim128_fp16; do
  vobj cand generated/backward_sm80_$t.cu "$NM $S128 $DW"
done
timeout 60 /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_90 -Iinclude -c $H/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | grep -v 'rc=0' | tr '\n' ' ') (non-zero vobj rcs listed)"
cp $B/f/src/libflashattn.a $B/lib_def.a
for v in ctl nm dw nmdw s128 dw128 sdw128 cand; do cp $B/lib_def.a $B/lib_$v.a; ar r $B/lib_$v.a $B/vobj/$v/*.o; done
for v in def ctl nm dw nmdw s128 dw128 sdw128; do
  timeout 60 /usr/local/cuda/bin/nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
lcmd=$(ninja -C $B/f -t commands tests/flashattn_tests | tail -1)
( cd $B/f && timeout 60 bash -c "$(echo "$lcmd" | sed -e "s| -o tests/flashattn_tests| -o $B/tests_cand|" -e "s|src/libflashattn.a|$B/lib_cand.a|g")" ) > $O/link_tests.log 2>&1
el "link tests_cand rc=$?"
TF='*Backward*cuda_sm80*:*Determinism*cuda_sm80*'
timeout 50 $B/f/tests/flashattn_tests --gtest_filter="$TF" > $O/tests_def.log 2>&1
el "tests def rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_def.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_def.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_def.log)"
timeout 50 $B/tests_cand --gtest_filter="$TF" > $O/tests_cand.log 2>&1
el "tests cand rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_cand.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_cand.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_cand.log)"
timeout 20 $B/bb_def 64 512,16384 5 0 warm >> $O/bench.txt 2>&1
for v in def ctl nm dw nmdw def nmdw dw nm ctl def; do
  timeout 25 $B/bb_$v 64 512,1024,2048,4096,8192,16384 7 0 $v >> $O/bench.txt 2>&1; el "bench d64 $v rc=$?"
done
for v in def s128 dw128 sdw128 def sdw128 dw128 s128 def; do
  timeout 25 $B/bb_$v 128 512,1024,2048,4096,8192,16384 7 0 $v >> $O/bench.txt 2>&1; el "bench d128 $v rc=$?"
done
# Same results on the benchmark shapes: dK / dV hashes must match def's bit for bit, dQ sums to rounding.
for v in def ctl nm dw nmdw; do
  BWD_BENCH_HASH=1 timeout 30 $B/bb_$v 64 512,2048 1 0 $v >> $O/hash.txt 2>&1; el "hash d64 $v rc=$?"
done
for v in def s128 dw128 sdw128; do
  BWD_BENCH_HASH=1 timeout 30 $B/bb_$v 128 512,2048 1 0 $v >> $O/hash.txt 2>&1; el "hash d128 $v rc=$?"
done
timeout 45 python3 $H/fa2_bwd_d64.py 64 > $O/fa2.txt 2>&1; el "fa2 d64 rc=$?"
timeout 45 python3 $H/fa2_bwd_d64.py 128 >> $O/fa2.txt 2>&1; el "fa2 d128 rc=$?"
SAN='*BackwardTest*cuda_sm80_*_d64_*:*BackwardTest*cuda_sm80_*_d40_*:-*1023x1024*:*2048x2048*'
for x in def:$B/f/tests/flashattn_tests cand:$B/tests_cand; do
  for tool in memcheck racecheck; do
    l=$(left 215); [ $l -gt 30 ] && l=30
    [ $l -gt 8 ] || break
    F="$SAN"; [ ${x%%:*} = cand ] && F="*BackwardTest*cuda_sm80_*_d128_*:$SAN"
    timeout $l compute-sanitizer --tool $tool --error-exitcode 3 ${x#*:} --gtest_filter="$F" > $O/${tool}_${x%%:*}.log 2>&1
    el "$tool ${x%%:*} rc=$? $(grep -m1 SUMMARY $O/${tool}_${x%%:*}.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/${tool}_${x%%:*}.log | tr '\n' ' ') ran=$(grep -c '^\[       OK \]' $O/${tool}_${x%%:*}.log)"
  done
done
NCU="ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --import-source no"
for v in ctl def; do
  l=$(left 268); [ $l -gt 25 ] && l=25; [ $l -gt 10 ] || break
  timeout $l $NCU -k regex:backward_kernel --launch-skip 3 -c 1 -o $O/prof_$v $B/bb_$v 64 2048 1 0 prof 0 > $O/ncu_$v.log 2>&1; el "ncu $v rc=$?"
  timeout 10 ncu -i $O/prof_$v.ncu-rep --print-details all > $O/prof_$v.txt 2>&1
done
el done
