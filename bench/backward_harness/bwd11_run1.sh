#!/bin/bash
# bwd11 device run 1 (run from the tree's root; whole call <= ~235 s): test build of the d 64 bucket (fp16 +
# bf16, sm_90 SASS) with KV_REGS_BUCKETS = d 64 (K and V fragments of S^T / dP^T in registers: the
# candidate, `kv`); variant objects of the d 64 bf16 TU swapped into copies of its library: ctl =
# KV_REGS_BUCKETS 0 (version 10, the control), k = K only, v = V only. Backward tests + memcheck /
# racecheck on the candidate build; harness A/B interleaved (bf16 d 64, 512..16k, causal and not; kv and
# ctl three calls each), FA2 on compare.py's layout in the same call; dK / dV hashes kv vs ctl; SASS counts.
set -uo pipefail
O=/tmp/bwd11-out1; rm -rf $O; mkdir -p $O
B=/tmp/bwd11-build1; mkdir -p $B
finish() { tar -C /tmp -czf "${OUT:-/tmp}/bwd11-out1.tgz" bwd11-out1; }
trap finish EXIT
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/summary.txt; }
left() { echo $(( ${1:-230} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt
H=bench/backward_harness
KV="-DFLASHATTN_SM80_BWD_KV_REGS_BUCKETS=4"
timeout 40 cmake -S . -B $B/f -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 -DFLASHATTN_HEAD_DIMS="64" \
  -DFLASHATTN_DTYPES="fp16;bf16" -DFLASHATTN_BUILD_TESTS=ON -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF \
  -DFLASHATTN_BUILD_PYTHON=OFF -DFLASHATTN_PTXAS_VERBOSE=ON -DCMAKE_CUDA_FLAGS="$KV" > $O/cfg.log 2>&1
el "configure rc=$?"
( timeout 120 cmake --build $B/f -j16 --target flashattn_tests > $O/build_f.log 2>&1; echo "build f rc=$?" > $O/build_f.rc ) &
G=src/CMakeFiles/flashattn.dir/cuda
vobj() {  # vobj VARIANT OBJ(relative to $G) FLAGS: the build's command line, sm_90 only, $KV replaced by FLAGS
  local v=$1 obj=$G/$2.o cmd c base
  base=$(basename $2)
  mkdir -p $B/vobj/$v
  cmd=$(ninja -C $B/f -t commands $obj | tail -1)
  c=$(echo "$cmd" | sed -e "s| -o $obj| -o $B/vobj/$v/$base.o|" -e "s| -MF [^ ]*| -MF $B/vobj/$v/$base.d|" \
      -e "s| -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80||" -e "s|$KV|$3|")
  ( cd $B/f && timeout 100 bash -c "$c" > $O/ptxas_${v}_$base.log 2>&1; echo "vobj $v $base rc=$?" >> $O/summary.txt ) &
}
vobj ctl generated/backward_sm80_hdim64_bf16.cu "-DFLASHATTN_SM80_BWD_KV_REGS_BUCKETS=0"
vobj k generated/backward_sm80_hdim64_bf16.cu "$KV -DFLASHATTN_SM80_BWD_KV_REGS_WHICH=1"
vobj v generated/backward_sm80_hdim64_bf16.cu "$KV -DFLASHATTN_SM80_BWD_KV_REGS_WHICH=2"
timeout 60 /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_90 -Iinclude -c $H/bwd_bench.cu -o $B/bwd_bench.o > $O/bb.log 2>&1
el "harness object rc=$?"
wait
el "$(cat $O/build_f.rc) $(grep vobj $O/summary.txt | grep -v 'rc=0' | tr '\n' ' ') (non-zero vobj rcs listed)"
cp $B/f/src/libflashattn.a $B/lib_kv.a
for v in ctl k v; do cp $B/lib_kv.a $B/lib_$v.a; ar r $B/lib_$v.a $B/vobj/$v/*.o; done
for v in kv ctl k v; do
  timeout 60 /usr/local/cuda/bin/nvcc -arch=sm_90 $B/bwd_bench.o $B/lib_$v.a -o $B/bb_$v -Xcompiler -fopenmp -lgomp -lpthread >> $O/link.log 2>&1
  el "link $v rc=$?"
done
TF='*Backward*cuda_sm80*:*Determinism*cuda_sm80*'
timeout 50 $B/f/tests/flashattn_tests --gtest_filter="$TF" > $O/tests_kv.log 2>&1
el "tests kv rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $O/tests_kv.log | tr '\n' ' ') skipped=$(grep -c '^\[  SKIPPED \] .*ms)' $O/tests_kv.log) failed=$(grep -c '^\[  FAILED  \] .*ms)' $O/tests_kv.log)"
timeout 20 $B/bb_kv 64 512,16384 5 0 warm >> $O/bench.txt 2>&1
for v in kv ctl k v ctl kv v k kv ctl; do
  [ $(left 175) -gt 12 ] || break
  timeout 25 $B/bb_$v 64 512,1024,2048,4096,8192,16384 7 0 $v >> $O/bench.txt 2>&1; el "bench d64 $v rc=$?"
done
timeout 45 python3 $H/fa2_bwd_d64.py 64 > $O/fa2.txt 2>&1; el "fa2 d64 rc=$?"
for v in kv ctl; do
  BWD_BENCH_HASH=1 timeout 20 $B/bb_$v 64 512,2048 1 0 $v >> $O/hash.txt 2>&1; el "hash d64 $v rc=$?"
done
FN=_ZN9flashattn6detail9cuda_sm8015backward_kernelINS1_14BackwardConfigILi64E13__nv_bfloat16Lb0EEELb0ELb1ELb1EEEvNS1_18BackwardKernelArgsE
for x in kv:$B/f/$G/generated/backward_sm80_hdim64_bf16.cu.o ctl:$B/vobj/ctl/backward_sm80_hdim64_bf16.cu.o; do
  timeout 20 cuobjdump -sass -fun $FN ${x#*:} > $B/sass_${x%%:*}.txt 2>&1
  el "sass nomask ${x%%:*}: total $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' $B/sass_${x%%:*}.txt) LDSM $(grep -c LDSM $B/sass_${x%%:*}.txt) LDS $(grep -cE 'LDS(\.|\s)' $B/sass_${x%%:*}.txt) STS $(grep -c 'STS' $B/sass_${x%%:*}.txt) STL $(grep -c STL $B/sass_${x%%:*}.txt)"
done
SAN='*BackwardTest*cuda_sm80_*_d64_*:*BackwardTest*cuda_sm80_*_d40_*:-*1023x1024*:*2048x2048*'
for tool in memcheck racecheck; do
  l=$(left 228); [ $l -gt 30 ] && l=30
  [ $l -gt 8 ] || break
  timeout $l compute-sanitizer --tool $tool --error-exitcode 3 $B/f/tests/flashattn_tests --gtest_filter="$SAN" > $O/${tool}_kv.log 2>&1
  el "$tool kv rc=$? $(grep -m1 SUMMARY $O/${tool}_kv.log) $(grep -E '^\[  (PASSED|FAILED) ' $O/${tool}_kv.log | tr '\n' ' ') ran=$(grep -c '^\[       OK \]' $O/${tool}_kv.log)"
done
el done
