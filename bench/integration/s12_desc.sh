#!/usr/bin/env bash
# Session 12 (issue 6): wgmma descriptors of the key-block loop as constant moves of one descriptor per operand
# (consumer.h gemm_qk / gemm_pv, ptx::smem_desc_moved) instead of a full make_smem_desc_sw128 per k-step
# (bench/integration/s12_desc.patch is the change). SASS (nvcc 13.0, d128 cluster kernel): the turn-to-arrive
# issue stretch 116 -> 62 instructions, 359 -> 232 static stall cycles; the P V HGMMAs no longer wait on a
# 4-deep uniform-datapath chain each.
#   base  the tree with the patch reversed; new  the tree; ctrl  base again
# bench/sm90r_ab.py (cuDNN beside), the standard grid's 36 forward rows (d 64 / 128 / 256), then a second pass
# (order reversed) over d64 / d128.
#   bash bench/integration/s12_desc.sh   (at commit 0422290: the patch reverses there, not after 4635887)
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12d
tree_copy /tmp/s12d-base bench/integration/s12_desc.patch -R
(cd /tmp/s12d-base && PY_DIMS="64;128;256" sm90_build_py base "" 8 330) &
PY_DIMS="64;128;256" sm90_build_py new "" 8 330 &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
sm90_ctrl_copy
sm90_ab p1 base,new,ctrl 64,128,256 0,1 512,1024,2048,4096,8192,16384 40 260
sm90_ab p2 ctrl,new,base 64,128,256 0,1 512,1024,2048,4096,8192,16384 40 260
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base new ctrl | tee -a "$out/summary.txt"
log total
