#!/usr/bin/env bash
# Session 13 (issue 6): s13_bysum.sh's change (+3.7-5.8% at d128 from 2k, 0.985-0.99 at 512) on every kernel with the
# conditional rescale (FLASHATTN_SM90_RESCALE_BY_SUM=2: dv >= 128, here the d128 and d256 rows), beside base, cuDNN
# and a control. Prediction: d128 as in s13_bysum; d256 smaller (its softmax is a smaller share: 64/80-key blocks
# against 128 columns of O per thread), +0-3%.
# Run as of commit bbd1dc8 (later commits change the defaults it compares against).
#   bash bench/integration/s13_bysum2.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s13b2
tree_copy /tmp/s13b2-bs
PY_DIMS="128;256" sm90_build_py base "" 8 300 &
(cd /tmp/s13b2-bs && PY_DIMS="128;256" sm90_build_py bs "-DFLASHATTN_SM90_RESCALE_BY_SUM=2" 8 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,bs,ctrl 128,256 0,1 512,1024,2048,4096,8192,16384 40 240
sm90_ab p2 ctrl,bs,base 128,256 0,1 512,1024,2048,4096,8192,16384 40 240
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base bs ctrl | tee -a "$out/summary.txt"
log total
