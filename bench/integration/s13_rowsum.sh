#!/usr/bin/env bash
# Session 13 (issue 6): d128 row sums on the tensor cores as a GEMM of their own (FLASHATTN_SM90_ROW_SUM_N8: per
# P V k-step one m64n8k16 HGMMA of P's registers against a 1 KB ones block; the softmax's 62 sum FADDs per thread
# and block go). s13_diag.sh put the loop-top variant's loss on its 64 unconditional O multiplications (~4%), so
# instructions between a block's S and the next issue do cost. Prediction: +2-4% at d128 from 2k if removing the
# sum tree's instructions pays more than 8 small HGMMAs per block cost the tensor pipe; the error column must stay
# at base's (the sums are of the bf16 P the P V GEMM uses).
# Measured: 0.945-0.977 of base from 2k (records s13_rowsum_*); not kept: the code is s13_rowsum.patch (applies on
# 88c6e72; the script applies it to the rs8 copy).
# Run as of commit 5877b17 (later commits change the defaults it compares against).
#   bash bench/integration/s13_rowsum.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s13r
tree_copy /tmp/s13r-rs8 bench/integration/s13_rowsum.patch
PY_DIMS=128 sm90_build_py base "" 8 300 &
(cd /tmp/s13r-rs8 && PY_DIMS=128 sm90_build_py rs8 "-DFLASHATTN_SM90_ROW_SUM_N8=1" 8 300) &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,rs8,ctrl 128 0,1 512,2048,8192,16384 40 200
sm90_ab p2 ctrl,rs8,base 128 0,1 512,2048,8192,16384 40 200
sm90_ab p3 rs8,base,ctrl 128 0,1 512,2048,8192,16384 40 200
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base rs8 ctrl | tee -a "$out/summary.txt"
log total
