#!/bin/bash
# bwd8 device run 2 (run from the tree's root): the committed defaults (DKV_VIA_SMEM, PROLOGUE_SPLIT,
# LAST_BULK_WAIT_READ all 1). Test build of every head-dim bucket, fp16 + bf16, sm_90 SASS, Python
# extension: backward tests, memcheck + racecheck; harness A/B of variant objects (bf16, sm_90):
# ps0 = PROLOGUE_SPLIT 0 (d 64 / 128 / 256), and d 64 only: sp0 = STEP_POINTERS 0, ca0 = COPY_AFTER_ST 0,
# kt1 = D64_KEY_TILES 1, dqr0 = DQ_ROWS32 0; ncu of the d 64 kernel; compare.py on the whole bwd grid.
set -uo pipefail
O=/tmp/bwd8-out2; rm -rf $O; mkdir -p $O
B=/tmp/bwd8-build2; mkdir -p $B
finish() { rm -f $O/*.ncu-rep; tar -C /tmp -czf "${OUT:-/tmp}/bwd8-out2.tgz" bwd8-out2; }
trap finish EXIT
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/summary.txt; }
left() { echo $(( ${1:-300} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt
cp COMMIT $O/commit.txt 2>/dev/null
H=bench/backward_harness
py=$(command -v python3)
timeout 60 cmake -S . -B $B/f -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
  -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE=$py -DFLASHATTN_PTXAS_VERBOSE=ON > $O/cfg.log 2>&1
el "configure rc=$?"
( timeout 200 cmake --build $B/f -j14 --target flashattn_tests _C > $O/build_f.log 2>&1; echo "build f rc=$?" > $O/build_f.rc ) &
G=src/CMakeFiles/flashattn.dir/cuda/generated
vobj() {  # vobj NAME TU FLAGS: the build's own command line for TU (sm_90 SASS only) with FLAGS added
  local v=$1 tu=$G/$2.cu.o cmd c
  mkdir -p $B/vobj/$v
  cmd=$(ninja -C $B/f -t commands $tu | tail -1)
  c=$(echo "$cmd" | sed -e "s| -o $tu| -o $B/vobj/$v/$2.cu.o|" -e "s| -MF [^ ]*| -MF $B/vobj/$v/$2.d|" \
      -e "s| -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80||")
  ( cd $B/f && timeout 190 bash -c "$c $3" > $O/ptxas_${v}_$2.log 2>&1; echo "vobj $v $2 rc=$?" >> $O/summary.txt ) &
}
for d in 64 128 256; do vobj ps0 backward_sm80_hdim${d}_bf16 "-DFLASHATTN_SM80_BWD_PROLOGUE_SPLIT=0"; done
vobj sp0 backward_sm80_hdim64_bf16 "-DFLASHATTN_SM80_BWD_STEP_POINTERS=0 -DFLASHATTN_SM80_BWD_PROLOGUE_SPLIT=0"
vobj ca0 backward_sm80_hdim64_bf16 "-DFLASHATTN_SM80_BWD_COPY_AFTER_ST=0"
vobj kt1 backward_sm80_hdim64_bf16 "-DFLASHATTN_SM80_BWD_D64_KEY_TILES=1"
vobj dqr0 backward_sm80_hdim64_bf16 "-DFLASHATTN_SM80_BWD_DQ_ROWS32=0"
timeout 60 /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_90 -Iinclude -c $H/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | grep -v 'rc=0' | tr '\n' ' ') (non-zero vobj rcs listed)"
grep -h -A2 "Function properties for .*backward_kernel" $O/build_f.log | grep -E "stack|Function" > $O/ptxas_f.txt
for f in $O/ptxas_*_*.log; do grep -h -A2 "Function properties for .*backward_kernel" $f | grep -E "stack" | sed "s|^|$(basename $f) |" >> $O/ptxas_f.txt; done
cp $B/f/src/libflashattn.a $B/lib_new.a
for v in ps0 sp0 ca0 kt1 dqr0; do cp $B/lib_new.a $B/lib_$v.a; ar r $B/lib_$v.a $B/vobj/$v/*.o; done
for v in new ps0 sp0 ca0 kt1 dqr0; do
  timeout 60 /usr/local/cuda/bin/nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
mkdir -p $B/pyroot/flashattn && cp -r python/flashattn/. $B/pyroot/flashattn/ && cp $B/f/python/_C*.so $B/pyroot/flashattn/
el "py package rc=$?"
export PYTHONPATH=$B/pyroot
timeout 100 $B/f/tests/flashattn_tests --gtest_filter='*Backward*cuda_sm80*:*Determinism*cuda_sm80*' > $O/tests_f.log 2>&1
el "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_f.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_f.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_f.log)"
SAN='*BackwardTest*cuda_sm80_*_113x203_*:*BackwardTest*cuda_sm80_*_128x217_*:*BackwardTest*cuda_sm80_*_d96_*:*BackwardTest*cuda_sm80_*_d192_*:-*1023x1024*:*2048x2048*'
for tool in memcheck racecheck; do
  timeout 45 compute-sanitizer --tool $tool --error-exitcode 3 $B/f/tests/flashattn_tests --gtest_filter="$SAN" > $O/${tool}.log 2>&1
  el "$tool rc=$? $(grep -m1 SUMMARY $O/${tool}.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/${tool}.log | tr '\n' ' ') ran=$(grep -c '^\[       OK \]' $O/${tool}.log)"
done
for v in new ps0 new ps0; do timeout 30 $B/bb_$v 64,128,256 512,2048 7 0 $v >> $O/bench.txt 2>&1; el "bench $v rc=$?"; done
for v in new sp0 ca0 kt1 dqr0 new sp0 ca0 kt1 dqr0; do timeout 20 $B/bb_$v 64 512,2048,16384 5 0 $v >> $O/bench.txt 2>&1; el "bench d64 $v rc=$?"; done
NCU="ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --section LaunchStats --section Occupancy --import-source no"
timeout 30 $NCU -k regex:backward_kernel --launch-skip 3 -c 1 -o $O/prof_d64 $B/bb_new 64 512 1 0 prof 0 > $O/ncu_d64.log 2>&1; el "ncu d64 rc=$?"
timeout 15 ncu -i $O/prof_d64.ncu-rep --print-details all > $O/prof_d64.txt 2>&1
timeout 15 ncu -i $O/prof_d64.ncu-rep --page source --csv --print-source sass > $O/sass_d64.csv 2>&1; gzip -f $O/sass_d64.csv
l=$(left 318); [ $l -gt 110 ] && l=110
if [ $l -gt 20 ]; then
  timeout $l $py bench/compare.py --modes bwd --no-decode --out $O/cmp --tag bwd8 > $O/compare.txt 2>&1
  el "compare.py bwd (whole grid) rc=$?"
fi
el done
