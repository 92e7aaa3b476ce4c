#!/usr/bin/env bash
# PREPARED in session 13, NOT RUN (the session's device time was spent). With the d128 row maxima off the common
# path (FLASHATTN_SM90_RESCALE_BY_SUM=1, session 13) a block's fixed costs are a larger share of its softmax, so
# wider key blocks may now pay where they did not before (sessions 4, 7, 11, 12: 176 keys 0.95-1.03). Builds: base
# (main) and l176 (FLASHATTN_SM90_LONG_KEY_BLOCK_N=176: the non-multicast d128 kernel with 176-key blocks from
# FLASHATTN_SM90_LONG_KEY_MIN_SEQLEN{,_MASKED} keys; the K/V multicast kernel still takes non-causal rows from 2k,
# so the causal rows are the ones this moves), d128 causal and not, 1k..16k, cuDNN and a control, two passes.
# Locally: the 176-key kernel compiles with main's 8 B of spills, no C75xx. Prediction: +0-3% on causal >= 4k.
#   bash bench/integration/s14_long176.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s14l
PY_DIMS=128 sm90_build_py base "" 8 300 &
PY_DIMS=128 sm90_build_py l176 "-DFLASHATTN_SM90_LONG_KEY_BLOCK_N=176" 8 300 &
wait
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,l176,ctrl 128 0,1 1024,2048,4096,8192,16384 40 240
sm90_ab p2 ctrl,l176,base 128 0,1 1024,2048,4096,8192,16384 40 240
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base l176 ctrl | tee -a "$out/summary.txt"
log total
