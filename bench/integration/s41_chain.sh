#!/usr/bin/env bash
# Session 41 (issue 6): the softmax's row-sum chains start from their first pair's sum instead of 0 + it
# (softmax.h exponentials_packed). ptxas kept the add of 0 (0 + x is not x for x = -0): 8 FADD per 64-key block in
# the by-sum fast path of every kernel with the sums in the softmax (d256, d192, (64, 256), the two-consumer d64);
# the masked 64-key d256 key-block loop 965 -> 949 instructions (local SASS), spills and the wgmma pipeline as
# before. s41_rowsum.sh read 64 FADD of ~376 per d128 block worth 1.8-2.8% in stints; 8 of ~220 here.
# Builds (d256 bf16 Python extensions): base (this tree with s41_chain.patch reversed: 3903b4e's kernels), chain
# (this tree), a control copy of base.
# Outputs bitwise equal; three passes of 400 ms stints beside cuDNN over the d256 rows nearest the FA3 anchor.
# Prediction: +0.3..+0.7% on every row.
# One H200 call (~4 minutes).
#   bash bench/integration/s41_chain.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s41h
tree_copy "$bld/base-tree" bench/integration/s41_chain.patch -R
(cd "$bld/base-tree" && PY_DIMS=256 sm90_build_py base "" 8 400) &
PY_DIMS=256 sm90_build_py chain "" 8 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot:bench timeout 120 python3 bench/bitwise_builds.py --builds base,chain --head-dim 256 \
  4x4096x4096:c 2x8192x8192 3x1000x3001 2x3000x3000:c >>"$out/summary.txt" 2>&1
log "equality"
stint_passes base,chain,ctrl 256 3 1:2048,4096 0:4096,8192
sustained_summary base chain ctrl
log total
