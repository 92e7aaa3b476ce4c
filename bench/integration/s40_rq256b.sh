#!/usr/bin/env bash
# Session 40 (issue 6): REGISTER_Q_D256_UNMASKED=4 again, with the d256 suites. s40_rq256.sh (two passes) read it
# against the tree at d256 non-causal 512 / 1k / 2k / 4k / 8k / 16k 1.006 / 1.000 / 0.995 / 0.991 / 1.019 / 1.021,
# its control 0.998 / 1.004 / 0.997 / 0.990 / 1.012 / 0.997: a lead at 16k, within the noise elsewhere.
# This call: the C++ test binary and CLI for d256 (fp16, bf16) with the switch, every sm90 GPU suite it holds
# (other head dims skip), racecheck and synccheck on the reduced grid's d256 cases, three more passes of stints
# (1k-16k) against the tree and a control copy.
# Prediction: suites pass, sanitizers clean; +1..+2% at 8k / 16k, within the noise below.
# One H200 call (~8 minutes).
#   bash bench/integration/s40_rq256b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s40s
switch_builds rq4 "-DFLASHATTN_SM90_REGISTER_Q_D256_UNMASKED=4" "256" "256" 400
rm -f "$out"/py_*_build.log "$out"/tests_build.log
sm90_ctrl_copy base
reduced='Grid/*cuda_sm90*_113x203_*:Grid/*cuda_sm90*_128x217_*:Grid/*cuda_sm90*_max113x203_*'
suites_and_racecheck '*cuda_sm90*' "$reduced" 240
suites_summary
synccheck_on "$reduced" 90
stint_passes base,rq4,ctrl 256 3 0:1024,2048,4096,8192,16384
sustained_summary base rq4 ctrl
log total
