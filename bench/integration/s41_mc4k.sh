#!/usr/bin/env bash
# Session 41 (issue 6): d256 causal 4k, the row below the FA3 anchor in every standing, on the two K/V multicast
# kernels again. Sessions 26 / 27 read them below the 64-key placement kernel there in stints (80-key multicast
# 0.981, the 64-key cluster instance 0.991); the kernels have changed since (K lookahead, the next Q prefetch, O over
# V, the early next S). Builds (d256 bf16 Python extensions): base (64-key blocks on placement clusters), mc80
# (KV_MULTICAST_D256_CAUSAL=4096: the 80-key multicast instance from 4096 keys), mc64
# (KV_MULTICAST_D256_BLOCK64_CAUSAL=4096: the 64-key cluster instance from 4096 keys), a control copy of base.
# Outputs against base (max difference); three passes of 400 ms stints beside cuDNN at causal 4k.
# Prediction: both within 0.98-1.01 of base, as in sessions 26 / 27.
# One H200 call (~3 minutes).
#   bash bench/integration/s41_mc4k.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s41m
PY_DIMS=256 sm90_build_py base "" 5 300 &
PY_DIMS=256 sm90_build_py mc80 "-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=4096" 5 300 &
PY_DIMS=256 sm90_build_py mc64 "-DFLASHATTN_SM90_KV_MULTICAST_D256_BLOCK64_CAUSAL=4096" 5 300 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy base
PYTHONPATH=$bld/pyroot:bench timeout 60 python3 bench/bitwise_builds.py --builds base,mc80,mc64 --head-dim 256 \
  --max-diff 4x4096x4096:c >>"$out/summary.txt" 2>&1
log "outputs"
stint_passes base,mc80,mc64,ctrl 256 3 1:4096
sustained_summary base mc80 mc64 ctrl
log total
