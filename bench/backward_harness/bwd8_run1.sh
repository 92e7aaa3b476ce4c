#!/bin/bash
# bwd8 device run 1 (run from the tree's root): the per-CTA fixed costs of the sm80 backward at short rows.
# Test build (fp16 + bf16, d 64 / 128 / 256, sm_90, Python extension) with the three bwd8 knobs ON
# (DKV_VIA_SMEM, PROLOGUE_SPLIT, LAST_BULK_WAIT_READ: defaults flipped in the carried copy only);
# variant objects (bf16, sm_90) swapped into copies of its library: def = all three off (version 7),
# dkv / ps / rd = one knob on. Tests + sanitizers on the knobs-on build, harness A/B interleaved, ncu of
# our main kernel (def, new) and FA2's at d 128 / d 64 s 512, compare.py bwd at 512-2048.
set -uo pipefail
O=/tmp/bwd8-out; rm -rf $O; mkdir -p $O
B=/tmp/bwd8-build; mkdir -p $B
finish() { rm -f $O/*.ncu-rep.tmp; tar -C /tmp -czf "${OUT:-/tmp}/bwd8-out.tgz" bwd8-out; }
trap finish EXIT
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/summary.txt; }
left() { echo $(( ${1:-290} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > $O/gpu.txt
H=bench/backward_harness
for k in DKV_VIA_SMEM PROLOGUE_SPLIT LAST_BULK_WAIT_READ; do
  sed -i "s/^#define FLASHATTN_SM80_BWD_$k 0$/#define FLASHATTN_SM80_BWD_$k 1/" src/cuda/sm80/backward_config.h
done
grep -E "^#define FLASHATTN_SM80_BWD_(DKV_VIA_SMEM|PROLOGUE_SPLIT|LAST_BULK_WAIT_READ)" src/cuda/sm80/backward_config.h > $O/knobs.txt
py=$(command -v python3)
timeout 60 cmake -S . -B $B/f -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS="64;128;256" \
  -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=ON -DPython_EXECUTABLE=$py -DFLASHATTN_PTXAS_VERBOSE=ON > $O/cfg.log 2>&1
el "configure rc=$?"
( timeout 180 cmake --build $B/f -j14 --target flashattn_tests _C > $O/build_f.log 2>&1; echo "build f rc=$?" > $O/build_f.rc ) &
G=src/CMakeFiles/flashattn.dir/cuda/generated
OFF="-DFLASHATTN_SM80_BWD_DKV_VIA_SMEM=0 -DFLASHATTN_SM80_BWD_PROLOGUE_SPLIT=0 -DFLASHATTN_SM80_BWD_LAST_BULK_WAIT_READ=0"
vobj() {  # vobj NAME TU FLAGS: the build's own command line for TU (sm_90 SASS only) with FLAGS added
  local v=$1 tu=$G/$2.cu.o cmd c
  mkdir -p $B/vobj/$v
  cmd=$(ninja -C $B/f -t commands $tu | tail -1)
  c=$(echo "$cmd" | sed -e "s| -o $tu| -o $B/vobj/$v/$2.cu.o|" -e "s| -MF [^ ]*| -MF $B/vobj/$v/$2.d|" \
      -e "s| -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80||")
  ( cd $B/f && timeout 170 bash -c "$c $3" > $O/ptxas_${v}_$2.log 2>&1; echo "vobj $v $2 rc=$?" >> $O/summary.txt ) &
}
for d in 64 128 256; do vobj def backward_sm80_hdim${d}_bf16 "$OFF"; done
for d in 64 128; do
  vobj dkv backward_sm80_hdim${d}_bf16 "$OFF -DFLASHATTN_SM80_BWD_DKV_VIA_SMEM=1"
  vobj ps backward_sm80_hdim${d}_bf16 "$OFF -DFLASHATTN_SM80_BWD_PROLOGUE_SPLIT=1"
  vobj rd backward_sm80_hdim${d}_bf16 "$OFF -DFLASHATTN_SM80_BWD_LAST_BULK_WAIT_READ=1"
done
timeout 60 /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_90 -Iinclude -c $H/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | grep -v 'rc=0' | tr '\n' ' ') (non-zero vobj rcs listed)"
grep -h -A2 "Function properties for .*backward_kernel" $O/build_f.log | grep -E "stack|Function" > $O/ptxas_f.txt
for f in $O/ptxas_*_*.log; do grep -h -A2 "Function properties for .*backward_kernel" $f | grep -E "stack" | sed "s|^|$(basename $f) |" >> $O/ptxas_f.txt; done
cp $B/f/src/libflashattn.a $B/lib_new.a
for v in def dkv ps rd; do cp $B/lib_new.a $B/lib_$v.a; ar r $B/lib_$v.a $B/vobj/$v/*.o; done
for v in new def dkv ps rd; do
  timeout 60 /usr/local/cuda/bin/nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
mkdir -p $B/pyroot/flashattn && cp -r python/flashattn/. $B/pyroot/flashattn/ && cp $B/f/python/_C*.so $B/pyroot/flashattn/
el "py package rc=$?"
export PYTHONPATH=$B/pyroot
timeout 100 $B/f/tests/flashattn_tests --gtest_filter='*Backward*cuda_sm80*:*Determinism*cuda_sm80*' > $O/tests_f.log 2>&1
el "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_f.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_f.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_f.log)"
S=512,1024,2048,16384
for v in new def new def; do timeout 30 $B/bb_$v 64,128 $S 7 0 $v >> $O/bench.txt 2>&1; el "bench d64/128 $v rc=$?"; done
for v in dkv ps rd; do timeout 20 $B/bb_$v 64,128 512,2048 7 0 $v >> $O/bench.txt 2>&1; el "bench d64/128 $v rc=$?"; done
for v in new def new def; do timeout 25 $B/bb_$v 256 512,2048,16384 7 0 $v >> $O/bench.txt 2>&1; el "bench d256 $v rc=$?"; done
for v in new def; do timeout 20 $B/bb_$v 128,256 2048 5 1 $v >> $O/det.txt 2>&1; el "det $v rc=$?"; done
NCU="ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight --section LaunchStats --section Occupancy --import-source no"
for v in def new; do
  timeout 45 $NCU -k regex:backward_kernel -c 2 -o $O/prof_$v $B/bb_$v 128,64 512 1 0 prof 0 > $O/ncu_$v.log 2>&1; el "ncu $v rc=$?"
done
timeout 50 $NCU -k regex:flash_bwd_dq_dk_dv -c 2 -o $O/prof_fa2 $py $H/fa2_ncu_target.py 128:512 64:512 --calls 1 > $O/ncu_fa2.log 2>&1
el "ncu fa2 rc=$?"
for v in def new fa2; do
  timeout 20 ncu -i $O/prof_$v.ncu-rep --print-details all > $O/prof_$v.txt 2>&1
done
for v in def new; do
  timeout 20 ncu -i $O/prof_$v.ncu-rep --page source --csv --print-source sass > $O/sass_$v.csv 2>&1; gzip -f $O/sass_$v.csv
done
el "ncu exports done"
timeout 70 $py bench/compare.py --modes bwd --no-decode --hdims 64,128,256 --seqlens 512,1024,2048 --out $O/cmp --tag bwd8 > $O/compare.txt 2>&1
el "compare.py bwd rc=$?"
SAN='Grid/BackwardTest.*cuda_sm80_113x203*:Grid/BackwardTest.*cuda_sm80_128x217*:Grid/BackwardTest.*cuda_sm80_*_d256_*:-*2048x2048*:*1023x1024*'
for tool in memcheck racecheck; do
  l=$(left 290)
  if [ $l -gt 15 ]; then
    timeout $l compute-sanitizer --tool $tool --error-exitcode 3 $B/f/tests/flashattn_tests --gtest_filter="$SAN" > $O/${tool}.log 2>&1
    el "$tool rc=$? $(grep -m1 SUMMARY $O/${tool}.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/${tool}.log | tr '\n' ' ') ran=$(grep -c '^\[       OK \]' $O/${tool}.log)"
  else el "$tool skipped"; fi
done
rm -f $O/*.ncu-rep
el done
