#!/usr/bin/env bash
# Session 12 (issue 6), PREPARED, NOT RUN (the session's device time was spent): the S wait of the key-block loop as wait_group 0 (S and P V both done
# before the softmax: no overlap of a warpgroup's softmax with its own P V, as cuDNN's kernel) against the tree
# (wait_group 1; ptxas already places the P V wait above the exponentials, docs/kernel-notes-sm90.md session 12).
# The variant is a sed of consumer.h on a copy of the tree. d64 / d128, one pass, cuDNN beside.
#   bash bench/integration/s12_wait0.sh
set -uo pipefail
out=/tmp/s12w-out
bld=/tmp/s12w-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld/pyroot"
trap 'cp "$out/summary.txt" "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null' EXIT
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin
rm -rf /tmp/s12w-var && mkdir -p /tmp/s12w-var && tar --exclude=./.git --exclude=./bench/results -cf - . | tar -C /tmp/s12w-var -xf -
sed -i 's/ptx::wgmma_wait_group<1>();  \/\/ S(n) done; P V still running/ptx::wgmma_wait_group<0>();/' /tmp/s12w-var/src/cuda/sm90/consumer.h
log "variant waits: $(grep -c 'wgmma_wait_group<0>();$' /tmp/s12w-var/src/cuda/sm90/consumer.h)"
PY_DIMS="64;128" sm90_build_py base "" 8 200 &
(cd /tmp/s12w-var && PY_DIMS="64;128" sm90_build_py w0 "" 8 200) &
wait
log "builds done"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 80 python3 bench/sm90r_ab.py --builds base,w0 --hdims 64,128 \
  --causal 0 --seqlens 2048,8192,16384 --rep 30 2>&1 | grep -v Warning | sed 's/^{/{"pass": "p1", /' | tee -a "$out/ab.jsonl"
python3 bench/integration/ab_summary.py "$out/ab.jsonl" base w0 | tee -a "$out/summary.txt"
log total
