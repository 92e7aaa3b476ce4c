#!/usr/bin/env bash
# Session 13 (issue 6): ALiBi, where scores rise block after block along sm90's walk (non-causal: from the last key
# block toward each query's own position; by 0.5 x 128 nats per block at the steepest slope), the case the
# max-first form of FLASHATTN_SM90_RESCALE_BY_SUM is for: this tree (=1) against =0 (session 12's softmax) and a
# control, d128, non-causal and causal, 2k / 8k, two passes (bench/sm90r_ab.py --alibi: no cuDNN column, the error
# is against the base build). Prediction: >= 1.0 of base (the steep heads pay one pass per block as before, the
# flat ones gain as without ALiBi).
# Run as of commit 236853f (later commits change the defaults it compares against).
#   bash bench/integration/s13_alibi.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s13l
PY_DIMS=128 sm90_build_py base "-DFLASHATTN_SM90_RESCALE_BY_SUM=0" 8 300 &
PY_DIMS=128 sm90_build_py new "" 8 300 &
wait
sm90_ctrl_copy
ab() {
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 200 python3 bench/sm90r_ab.py --builds "$2" --hdims 128 \
    --causal 0,1 --seqlens 2048,8192 --rep 40 --alibi 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" |
    tee -a "$out/ab.jsonl"
  log "ab $1"
}
ab p1 base,new,ctrl
ab p2 ctrl,new,base
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new ctrl | tee -a "$out/summary.txt"
log total
