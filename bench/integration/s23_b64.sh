#!/usr/bin/env bash
# Session 23, fourth call: the new d256 causal default (64-key blocks with placement clusters up to 2048 keys, K/V
# multicast from 2049; s23_short.sh's short2k) against the old one once more at causal 2k, and the same step at
# causal 4k, three passes beside cuDNN and a control (d256 only):
#   old:      KV_MULTICAST_D256_CAUSAL=2048, D256_BLOCK64_MAX_SEQLEN_MASKED=1024, PLACEMENT_MAX_SEQLEN=1024.
#             Predicted: 2k 0.96 of the default (s23_short: short2k 1.038), 4k equal.
#   b64c4k:   64-key blocks and placement clusters up to 4096 keys, multicast from 4097. Predicted 4k -3..+3%
#             (session 17: the 4k multicast +2.2%; s23_short: 64 keys + placement +3.8% at 2k).
#   b64c4kn:  as b64c4k without the placement clusters at 4k. Predicted 4k -4..+2%.
# Ask for an H200.
#   bash bench/integration/s23_b64.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s23b
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="256" sm90_build_py base "" 4 400 &
PY_DIMS="256" sm90_build_py old "-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=2048 \
-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=1024 -DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=1024" 4 400 &
PY_DIMS="256" sm90_build_py b64c4k "-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=4097 \
-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=4096 -DFLASHATTN_SM90_PLACEMENT_MAX_SEQLEN=4096" 4 400 &
PY_DIMS="256" sm90_build_py b64c4kn "-DFLASHATTN_SM90_KV_MULTICAST_D256_CAUSAL=4097 \
-DFLASHATTN_SM90_D256_BLOCK64_MAX_SEQLEN_MASKED=4096" 4 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
sm90_ctrl_copy
for pass in "p1 base,old,b64c4k,b64c4kn,ctrl" "p2 ctrl,b64c4kn,b64c4k,old,base" "p3 b64c4k,base,ctrl,old,b64c4kn"; do
  sm90_ab "${pass%% *}" "${pass#* }" 256 1 2048,4096 60 150
done
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base old b64c4k b64c4kn ctrl | tee -a "$out/summary.txt"
log total
