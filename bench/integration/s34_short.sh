#!/usr/bin/env bash
# Session 34: the d128 512-key rows with and without REGISTER_Q. s34_grid.sh read d128 causal 512 at 296.6 TFLOP/s
# (rounds 291.1 / 302.0) against cuDNN's 321.9, final34.sh's grid 322.4 against 312.1 (this row's earlier grids:
# 306-331); s34_rq2.sh's stints had read REGISTER_Q=1 at 1.005 of =0 there (control 1.000). Builds: =0 (old) and
# the tree (new, =1), d128 bf16, a control copy of old. Paired timing (do_bench of each build call by call, as the
# grid times one backend) three passes, and 400 ms stints with cuDNN interleaved two passes, over d128 causal 512 /
# 1k and non-causal 512.
# Prediction: new / old within +-1% on the three rows by both methods (the grid's 0.92 is that grid's spread).
# One H200 call (~3 minutes).
#   bash bench/integration/s34_short.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s34s
PY_DIMS=128 sm90_build_py old "-DFLASHATTN_SM90_REGISTER_Q=0" 8 300 &
PY_DIMS=128 sm90_build_py new "" 8 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy old
paired_passes old,ctrl,new 128 1 512,1024 3 60
paired_passes old,ctrl,new 128 0 512 3 40
paired_summary old ctrl new
for pass in 1 2; do
  sustained_rows old,ctrl,new 128 1 512,1024 "s$pass" 400 60
  sustained_rows old,ctrl,new 128 0 512 "s$pass" 400 40
done
sustained_summary old ctrl new
log total
