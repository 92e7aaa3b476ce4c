#!/usr/bin/env bash
# Session 70: the S GEMM's k-steps bounded by the tensor's head dim (ForwardKernelParams::qk_steps; the last four
# k-steps of a kernel guarded by it, consumer.h gemm_qk), so a padded d on a wider kernel skips the k-steps over
# its zero-filled columns. The cuda_sm90 forward suites of this tree (every head dim, both dtypes); the SASS of
# d = 128's unit in both builds (guarded HGMMAs, injected WARPGROUP.ARRIVE); bench/sm90_ab.py, this tree's package
# beside the tree without the change (s70_qk_steps.patch reversed), padded dims and the grid's d64 / d128 / d256
# as controls, beside cuDNN.
#   bash bench/integration/s70_qk_steps.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s70q
tests_and_base_around_patch bench/integration/s70_qk_steps.patch "32;64;96;128;160;192;224;256"
for build in full py-base; do
  obj=$(find "$bld/$build" -name 'forward_hdim128_bf16.cu.o' | head -1)
  cuobjdump -sass "$obj" >"$out/sass_$build.txt" 2>&1
  log "$build sass: HGMMA $(grep -c HGMMA "$out/sass_$build.txt") guarded $(grep -c '@!\?U\?P[0-9T] *HGMMA' "$out/sass_$build.txt") ARRIVE $(grep -c 'WARPGROUP.ARRIVE' "$out/sass_$build.txt") DEPBAR $(grep -c 'WARPGROUP.DEPBAR' "$out/sass_$build.txt")"
done
grep -m40 -B2 -A2 'HGMMA' "$out/sass_full.txt" | cut -c1-140 | gzip >"${OUT:-/tmp}/sass_full_head.txt.gz"
(PYTHONPATH=$bld/pyroot timeout 200 python3 bench/sm90_ab.py --hdims 40,80,96,112,160,224,64,128,256 \
  --seqlens 512,2048,8192 >"$out/qk_ab.jsonl" 2>"$out/qk_ab.err")
log "sm90_ab rc=$? $(grep -v Warn "$out/qk_ab.err" | tail -2 | cut -c1-300)"
gtest_suites 'Grid/ForwardTest.*cuda_sm90*:*VarlenTest*cuda_sm90*:*KVCache*cuda_sm90*:Random/*cuda_sm90*:Tail/*cuda_sm90*:Dropout/*cuda_sm90*:Api.*' 170
grep -m4 -A12 ': Failure' "$out/tests.log" | cut -c1-220 >>"$out/summary.txt"
log total
