#!/bin/bash
# bwd7 device run 2: test build of this tree (defaults: D256_KEY_GROUPS 2, DQ_BULK_IN_OPERANDS 1,
# PREPROCESS_PACKED 1) with the Python extension; variants swapped into library copies:
#   nb = d256 object with DQ_BULK_IN_OPERANDS=0 (run 1's kernel), v6 = d256 object of version 6 + the
#   version 6 preprocess, po = the version 6 preprocess only (aux object).
# Tests, sanitizers, harness A/B (interleaved), deterministic d256, compare.py on the whole bwd grid,
# torch.profiler kernel times, ncu of the d256 kernel.
set -uo pipefail
O=/tmp/bwd7-out; rm -rf $O; mkdir -p $O
B=/tmp/bwd7-build; mkdir -p $B
finish() { rm -f $O/*.ncu-rep; tar -C /tmp -czf "${OUT:-/tmp}/bwd7-out.tgz" bwd7-out; }
trap finish EXIT
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/summary.txt; }
left() { echo $(( ${1:-290} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > $O/gpu.txt
cp COMMIT $O/commit.txt 2>/dev/null
py=$(command -v python3)
timeout 60 cmake -S . -B $B/f -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS="64;128;256" \
  -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE=$py -DFLASHATTN_PTXAS_VERBOSE=ON > $O/cfg.log 2>&1
el "configure rc=$?"
( timeout 170 cmake --build $B/f -j14 --target flashattn_tests _C > $O/build_f.log 2>&1; echo "build f rc=$?" > $O/build_f.rc ) &
G=src/CMakeFiles/flashattn.dir/cuda/generated
vobj() {  # vobj NAME TU FLAGS: the build's own command line for TU (sm_90 SASS only) with FLAGS added
  local v=$1 tu=$G/$2.cu.o cmd c
  mkdir -p $B/vobj/$v
  cmd=$(ninja -C $B/f -t commands $tu | tail -1)
  c=$(echo "$cmd" | sed -e "s| -o $tu| -o $B/vobj/$v/$2.cu.o|" -e "s| -MF [^ ]*| -MF $B/vobj/$v/$2.d|" \
      -e "s| -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80||")
  ( cd $B/f && timeout 160 bash -c "$c $3" > $O/ptxas_${v}_$2.log 2>&1; echo "vobj $v $2 rc=$?" >> $O/summary.txt ) &
}
vobj nb backward_sm80_hdim256_bf16 "-DFLASHATTN_SM80_BWD_DQ_BULK_IN_OPERANDS=0"
vobj v6 backward_sm80_hdim256_bf16 "-DFLASHATTN_SM80_BWD_D256_KEY_GROUPS=4 -DFLASHATTN_SM80_BWD_DQ_BULK_IN_OPERANDS=0"
vobj po backward_sm80_aux "-DFLASHATTN_SM80_BWD_PREPROCESS_PACKED=0"
timeout 60 /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_90 -Iinclude -c devtools/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | tr '\n' ' ')"
grep -h -A2 "Function properties for .*backward_kernel" $O/build_f.log | grep -E "stack|Function" > $O/ptxas_f.txt
for f in $O/ptxas_*_*.log; do grep -h -A2 "Function properties for .*backward_\(kernel\|pre\)" $f | grep -E "stack" | sed "s|^|$(basename $f) |" >> $O/ptxas_f.txt; done
cp $B/f/src/libflashattn.a $B/lib_new.a
cp $B/lib_new.a $B/lib_nb.a; ar r $B/lib_nb.a $B/vobj/nb/*.o
cp $B/lib_new.a $B/lib_po.a; ar r $B/lib_po.a $B/vobj/po/*.o
cp $B/lib_new.a $B/lib_v6.a; ar r $B/lib_v6.a $B/vobj/v6/*.o $B/vobj/po/*.o
for v in new nb po v6; do
  timeout 60 /usr/local/cuda/bin/nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
mkdir -p $B/pyroot/flashattn && cp -r python/flashattn/. $B/pyroot/flashattn/ && cp $B/f/python/_C*.so $B/pyroot/flashattn/
el "py package rc=$?"
export PYTHONPATH=$B/pyroot
timeout 100 $B/f/tests/flashattn_tests --gtest_filter='*Backward*cuda_sm80*:*Determinism*cuda_sm80*' > $O/tests_f.log 2>&1
el "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_f.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_f.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_f.log) d256run=$(grep -c '^\[       OK \] .*_d256_' $O/tests_f.log)"
ALL=512,1024,2048,4096,8192,16384
for v in new nb v6 new nb v6; do timeout 25 $B/bb_$v 256 $ALL 7 0 $v >> $O/bench.txt 2>&1; el "bench d256 $v rc=$?"; done
for v in new po new po; do timeout 30 $B/bb_$v 64,128 $ALL 7 0 $v >> $O/bench.txt 2>&1; el "bench d64/128 $v rc=$?"; done
for v in new nb; do timeout 20 $B/bb_$v 256 2048,8192 5 1 $v >> $O/det.txt 2>&1; el "det d256 $v rc=$?"; done
timeout 110 $py bench/compare.py --modes bwd --no-decode --out $O/cmp --tag bwd7 > $O/compare.txt 2>&1
el "compare.py bwd rc=$?"
timeout 25 $py devtools/gap.py prof > $O/gap_prof.txt 2>&1; el "gap prof rc=$?"
for tool in memcheck racecheck; do
  l=$(left 265)
  if [ $l -gt 15 ]; then
    timeout $l compute-sanitizer --tool $tool --error-exitcode 3 $B/f/tests/flashattn_tests \
      --gtest_filter='Grid/BackwardTest.*cuda_sm80_*_d256_*:Grid/BackwardTest.*cuda_sm80_4?_*:-*2048x2048*' > $O/${tool}.log 2>&1
    el "$tool rc=$? $(grep -m1 SUMMARY $O/${tool}.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/${tool}.log | tr '\n' ' ')"
  else el "$tool skipped"; fi
done
l=$(left 295)
if [ $l -gt 15 ]; then
  timeout $l ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --import-source no \
    -k regex:backward_kernel -c 1 -o $O/prof_new $B/bb_new 256 4096 1 0 prof 0 > $O/ncu_new.log 2>&1; el "ncu new rc=$?"
  timeout 15 ncu -i $O/prof_new.ncu-rep --print-details all > $O/prof_new.txt 2>&1
  timeout 15 ncu -i $O/prof_new.ncu-rep --page source --csv --print-source sass > $O/sass_new.csv 2>&1
  gzip -f $O/sass_new.csv
else el "ncu skipped"; fi
el done
