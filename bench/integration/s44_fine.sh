#!/usr/bin/env bash
# Session 44: s44_ws.sh's two builds (the tree; the tree without s44_workspace.patch, which sizes no workspace
# for cuda_sm90's static schedule) timed by s44_ab_fine.py: the builds alternate every 300 calls, 101 pairs per case,
# the ratio taken within each pair. s44_ws.sh's four rounds drifted as much on their controls as on the case.
# Prediction: the unmasked forward -2..-3 us (0.92-0.95), the causal forward and the KV-cache call (controls: both
# keep their workspace) 1.00 +- 0.02.
# One H200 call (~3 minutes).
#   bash bench/integration/s44_fine.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s44f
py_builds_around_patch bench/integration/s44_workspace.patch -DFLASHATTN_BACKWARD=OFF
PYTHONPATH=$bld/pyroot timeout 240 python3 bench/integration/s44_ab_fine.py 2>&1 | grep -v Warning |
  tee "$out/ab_fine.jsonl"
log "ab_fine rc=$?"
