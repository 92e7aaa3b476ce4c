#!/usr/bin/env bash
# Session 12 (issue 6, the d128 rows' gap to FlashAttention 3): how fast is the d128 kernel's skeleton?
# DIAGNOSTIC builds (wrong results by design; the patch is applied to a copy of the tree, never to main):
#   base         the tree's defaults (twice: ctrl)
#   noexp        s12_skeleton.patch, FLASHATTN_SM90_DIAG_SOFTMAX=1: the softmax without its exponentials
#   nosoft       FLASHATTN_SM90_DIAG_SOFTMAX=2: no softmax at all (P = S), everything else as base
#   nopp         base with the consumers' issue turns (ping-pong barriers) removed
#   nopp_nosoft  both: the GEMM + TMA pipeline alone
# bench/sm90r_ab.py (cuDNN beside), d128 non-causal 1k / 4k / 16k and causal 16k, two passes (orders reversed).
#   bash bench/integration/s12_skeleton.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12sk
tree() {  # tree NAME PATCH NOPP: a copy of this tree under /tmp/s12sk-NAME, the patch applied (1), the turns removed (1)
  tree_copy "/tmp/s12sk-$1" "$([[ $2 == 1 ]] && echo bench/integration/s12_skeleton.patch)"
  if [[ $3 == 1 ]]; then
    sed -i 's/ptx::bar_sync(my_turn, 256);/;/; s/ptx::bar_arrive(next_turn, 256);/;/; s/ptx::bar_arrive(kIssueTurn, 256);/;/; s/ptx::bar_sync(kIssueTurn, 256);/;/' "/tmp/s12sk-$1/src/cuda/sm90/consumer.h"
  fi
}
tree noexp 1 0; tree nosoft 1 0; tree nopp 0 1; tree nopp_nosoft 1 1
PY_DIMS=128 sm90_build_py base "" 3 300 &
(cd /tmp/s12sk-noexp && PY_DIMS=128 sm90_build_py noexp "-DFLASHATTN_SM90_DIAG_SOFTMAX=1" 3 300) &
(cd /tmp/s12sk-nosoft && PY_DIMS=128 sm90_build_py nosoft "-DFLASHATTN_SM90_DIAG_SOFTMAX=2" 3 300) &
(cd /tmp/s12sk-nopp && PY_DIMS=128 sm90_build_py nopp "" 3 300) &
(cd /tmp/s12sk-nopp_nosoft && PY_DIMS=128 sm90_build_py nopp_nosoft "-DFLASHATTN_SM90_DIAG_SOFTMAX=2" 3 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
b=base,noexp,nosoft,nopp,nopp_nosoft,ctrl
r=$(echo $b | tr , '\n' | tac | paste -sd,)
sm90_ab p1 $b 128 0 1024,4096,16384 60 150
sm90_ab p1 $b 128 1 16384 60 150
sm90_ab p2 "$r" 128 0 1024,4096,16384 60 150
sm90_ab p2 "$r" 128 1 16384 60 150
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base noexp nosoft nopp nopp_nosoft ctrl | tee -a "$out/summary.txt"
log total
