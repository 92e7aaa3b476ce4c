#!/usr/bin/env bash
# Session 41 (issue 6): the d128 row sums in the P V GEMM (ROW_SUM_D128, kept in session 22 on +1.2%, +1.5-2.3% at
# 16k) measured again in 400 ms stints with cuDNN interleaved. Session 22 timed with same-process A/Bs, which
# session 26 found to hide the energy effect; under the power limit the fused form's 6% more P V tensor work (3% of
# a block's) may cost more than the 64 FADD per block and warp it removes. The headline rows (d128 non-causal 8k /
# 16k) run it. Builds: base (the tree), rs0 (ROW_SUM_D128=0: sums in the softmax), a control copy of base; outputs
# compared (max difference, finite), three passes over d128 non-causal 2k-16k and causal 4k-16k.
# Prediction: rs0 within -1..+1% (energy against instructions); below 0.99 at 16k would confirm session 22.
# One H200 call (~5 minutes).
#   bash bench/integration/s41_rowsum.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s41r
PY_DIMS=128 sm90_build_py base "" 8 400 &
PY_DIMS=128 sm90_build_py rs0 "-DFLASHATTN_SM90_ROW_SUM_D128=0" 8 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot:bench timeout 120 python3 bench/bitwise_builds.py --builds base,rs0 --head-dim 128 --max-diff \
  1x16384x16384x16 4x4096x4096x16:c 3x1000x3001x16 >>"$out/summary.txt" 2>&1
log "outputs"
stint_passes base,rs0,ctrl 128 3 0:2048,4096,8192,16384 1:4096,8192,16384
sustained_summary base rs0 ctrl
log total
