#!/usr/bin/env bash
# Session 60: the persistent backward with dynamic claims (s60_dynamic.patch: CTA c starts on tile c, its producer
# claims each further tile from a counter in the workspace that the preprocess zeroes and hands it to the other
# roles through tile_scheduler.h's slot; every two-consumer launch persistent again, causal and varlen included;
# the producer warpgroup at 32 registers). Predicted against the tree before (one CTA per tile for causal):
# causal 1k 0.94-0.96 of the time, causal 16k within +-2%, non-causal within +-2%. Tests and racecheck first.
# Run once (the session's last device time): the suites timed out (100 s, rc 124) and the call ran out of device
# time (s60_dynamic_summary.txt). Cause found afterwards: the producer's setmaxnreg at 32 beside two consumers at
# 240 frees less than the consumers' increase takes, so their setmaxnreg waits forever (kernel-notes-sm90.md,
# session 60). s61_dynamic.sh runs the corrected patch.
#   bash bench/integration/s60_dynamic.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60y
tests_and_base_around_patch bench/integration/s60_dynamic.patch "64;128" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 100
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d128_*:-*1023x1024*:*_det*' 60 racecheck
backward_compare_vs_base dynamic 90 --hdims 128,64 --seqlens 1024,16384 --rounds 1 --settle-ms 100 \
  --backends cuda_sm90
log total
