#!/usr/bin/env bash
# Session 71: the narrowed d = 128 backward kernels in every mode (deterministic, softcap / ALiBi / dropout; units
# backward_hdim96_*_{general,deterministic,general_deterministic}.cu): the cuda_sm90 backward and determinism suites
# of a build of head dims 64 / 96 / 128; bench/backward_compare.py against the tree without (s71_bwd_modes.patch
# reversed: those calls on d = 128's full-width kernels), deterministic mode and softcap at d = 80 / 96 with d = 128
# as the control; racecheck / synccheck over the new narrowed cases.
#   bash bench/integration/s71_bwd_modes.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s71d
tests_and_base_around_patch bench/integration/s71_bwd_modes.patch "64;96;128" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 150
backward_compare_vs_base det 100 --hdims 80,96,128 --seqlens 2048,8192 --rounds 2 --settle-ms 100 \
  --backends cuda_sm90:det --base-backends cuda_sm90:det
backward_compare_vs_base softcap 100 --hdims 80,96,128 --seqlens 2048,8192 --rounds 2 --settle-ms 100 \
  --backends cuda_sm90 --softcap 30
sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d96_bf16_causal_softcap*:Grid/BackwardTest.*cuda_sm90_*_d72_fp16*:Grid/BackwardTest.*cuda_sm90_*_d80_*' 60 racecheck synccheck
log total
