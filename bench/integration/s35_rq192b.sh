#!/usr/bin/env bash
# Session 35: the d = dv = 192 kernels with Q's first 8 k-steps in registers (REGISTER_Q_D192=1, the default since
# s35_rq192.sh, which read this pair only at 4k: non-causal 1.019, causal 0.997) against the tree built with the
# switch off, at the other lengths. Builds: the Python extension twice (new = the tree, off = REGISTER_Q_D192=0;
# d 192 bf16), a control copy of off; build_check; 400 ms stints with cuDNN interleaved, two passes over d192
# non-causal and causal 1k, 2k, 8k, 16k.
# Prediction: new / off +0..+2% (the 4k pair's mean +0.8%); the (192, 128) rows are s35_rq192.sh's.
# One H200 call (~4 minutes).
#   bash bench/integration/s35_rq192b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s35r
PY_DIMS=192 sm90_build_py off "-DFLASHATTN_SM90_REGISTER_Q_D192=0" 8 300 &
PY_DIMS=192 sm90_build_py new "" 8 300 &
wait
rm -f "$out"/py_*_configure.log
build_check_or_stop off,new 192 1000:1000:0,777:3000:0,2048:2048:1 || exit 1
rm -f "$out"/py_*_build.log
sm90_ctrl_copy off
for pass in 1 2; do
  sustained_rows off,ctrl,new 192 0,1 1024,2048,8192,16384 "p$pass" 400 200
  log "stints p$pass"
done
sustained_summary off ctrl new
log total
