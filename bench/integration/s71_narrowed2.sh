#!/usr/bin/env bash
# Session 71, second call: the narrowed GEMMs with d = 192's over 160 columns added (forward_config.h
# narrowed_gemm_dim, units forward_hdim160_*.cu). The SASS of d = 128's unit in both builds (the control kernels
# must be the same); bench/sm90_ab.py at d = 96 / 160 and the controls d = 128 / 192, this tree's package beside the
# tree without the change (s71_narrowed.patch reversed); the cuda_sm90 forward suites with the time left (the first
# call's ran out of time at 170 s, no failure before).
#   bash bench/integration/s71_narrowed2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s71m
tests_and_base_around_patch bench/integration/s71_narrowed.patch "32;64;96;128;160;192;224;256"
for unit in forward_hdim128_bf16 forward_hdim192_bf16; do
  for build in full py-base; do
    obj=$(find "$bld/$build" -name "$unit.cu.o" | head -1)
    cuobjdump -sass "$obj" | grep -v -E '^\s*(Fatbin|arch|code version|host|compile_size|identifier|\.section)' \
      >"$out/sass_${unit}_$build.txt" 2>&1
  done
  log "$unit SASS lines $(wc -l <"$out/sass_${unit}_full.txt") / $(wc -l <"$out/sass_${unit}_py-base.txt"), differing $(diff "$out/sass_${unit}_full.txt" "$out/sass_${unit}_py-base.txt" | grep -c '^[<>]')"
done
(PYTHONPATH=$bld/pyroot timeout 120 python3 bench/sm90_ab.py --hdims 96,160,128,192 \
  --seqlens 512,2048,8192 >"$out/narrowed2_ab.jsonl" 2>"$out/narrowed2_ab.err")
log "sm90_ab rc=$? $(grep -v Warn "$out/narrowed2_ab.err" | tail -2 | cut -c1-300)"
filter='Grid/ForwardTest.*cuda_sm90*:*VarlenTest*cuda_sm90*:*KVCache*cuda_sm90*:Random/*cuda_sm90*:Tail/*cuda_sm90*:Spread/*cuda_sm90*:Dropout/*cuda_sm90*:Api.*'
timeout $((575 - ($(date +%s) - t0))) "$tests" --gtest_filter="$filter" >"$out/tests.log" 2>&1
log "suites rc=$?"
{
  grep -E '^\[  (PASSED|SKIPPED)' "$out/tests.log"
  echo "OK: $(grep -c '^\[       OK' "$out/tests.log"), FAILED: $(grep -c '^\[  FAILED' "$out/tests.log")"
  grep -E '^\[       OK' "$out/tests.log" | tail -2 | cut -c1-200
  grep -m4 -A12 ': Failure' "$out/tests.log" | cut -c1-220
} >>"$out/summary.txt"
log total
