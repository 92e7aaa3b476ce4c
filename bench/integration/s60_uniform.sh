#!/usr/bin/env bash
# Session 60: the persistent backward only where every tile has the same work (s60_uniform.patch; causal, windows,
# varlen and seqused go back to one CTA per tile). s60_final.sh read d128 causal 16k at 398 TFLOP/s (0.77x cuDNN)
# with the static assignment; a simulation of it puts that row at 1.53x the ideal time. Predicted: d128 causal 16k
# ~1.25x faster than the base (flashattn_base: the tree before the patch), causal 1k-2k 1.03-1.06x slower (their
# persistence gain, s60_persistent.sh), non-causal rows unchanged. Tests and racecheck on the patched tree first.
#   bash bench/integration/s60_uniform.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60u
tests_and_base_around_patch bench/integration/s60_uniform.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 200
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:Grid/BackwardTest.*cuda_sm90_*_d64_*:-*1023x1024*' 120 racecheck
backward_compare_vs_base uniform 200 --hdims 128,64 --seqlens 1024,16384 --rounds 2 --settle-ms 100 \
  --backends cuda_sm90
log total
