#!/usr/bin/env bash
# Session 12 (issue 6), PREPARED, NOT RUN (the session's device time was spent): the S wait of the key-block loop as wait_group 0 (S and P V both done
# before the softmax: no overlap of a warpgroup's softmax with its own P V, as cuDNN's kernel) against the tree
# (wait_group 1; ptxas already places the P V wait above the exponentials, docs/kernel-notes-sm90.md session 12).
# The variant is a sed of consumer.h on a copy of the tree. d64 / d128, one pass, cuDNN beside.
#   bash bench/integration/s12_wait0.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s12w
tree_copy /tmp/s12w-var
sed -i 's/ptx::wgmma_wait_group<1>();  \/\/ S(n) done; P V still running/ptx::wgmma_wait_group<0>();/' /tmp/s12w-var/src/cuda/sm90/consumer.h
log "variant waits: $(grep -c 'wgmma_wait_group<0>();$' /tmp/s12w-var/src/cuda/sm90/consumer.h)"
PY_DIMS="64;128" sm90_build_py base "" 8 200 &
(cd /tmp/s12w-var && PY_DIMS="64;128" sm90_build_py w0 "" 8 200) &
wait
log "builds done"
sm90_ab p1 base,w0 64,128 0 2048,8192,16384 30 80
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base w0 | tee -a "$out/summary.txt"
log total
