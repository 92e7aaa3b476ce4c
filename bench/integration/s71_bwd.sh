#!/usr/bin/env bash
# Session 71: the Hopper backward's default-mode d = 128 kernel narrowed to 96 columns for head dims of at most 96
# (backward_config.h kGemmDim_, units backward_hdim96_*.cu): the cuda_sm90 backward suites of a build of head dims
# 64 / 96 / 128 (the new narrowed cases among them); bench/backward_compare.py, this tree's package beside the tree
# without the change (s71_bwd.patch reversed) at d = 72 / 80 / 96 and the unchanged d = 128 as the control;
# racecheck and synccheck over the narrowed cases with the time left.
#   bash bench/integration/s71_bwd.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s71b
tests_and_base_around_patch bench/integration/s71_bwd.patch "64;96;128" -DFLASHATTN_BACKWARD=ON || exit 1
gtest_suites 'Grid/BackwardTest.*cuda_sm90*:Random/BackwardRandomTest.*cuda_sm90*:*DeterminismTest.Backward*cuda_sm90*' 200
backward_compare_vs_base bwd 200 --hdims 72,80,96,128 --seqlens 512,2048,8192 --rounds 2 --settle-ms 100 \
  --backends cuda_sm90
left=$((560 - ($(date +%s) - t0)))
((left > 40)) && sanitizer_runs "$tests" 'Grid/BackwardTest.*cuda_sm90_*_d96_*:Grid/BackwardTest.*cuda_sm90_*_d72_*:Grid/BackwardTest.*cuda_sm90_*_d88_*' $((left / 2)) racecheck synccheck
log total
