#!/usr/bin/env bash
# One device call: bench/compare.py's forward grid + decode (4 rounds, every backend settled 200 ms
# before each timing) on this tree, beside FA2 and cuDNN in one process. The Python extension is
# built for d 64 / 128 / 256 bf16 with the sm80 kernels compiled for sm_90a (what the flashattn_sm80 column runs).
# Ran twice: on 1339f37 (session 12's kernels; compare-20261127-152436, s13_compare_summary.txt) and on 781727a
# (with the kept FLASHATTN_SM90_RESCALE_BY_SUM=1; compare-20261127-155855, s13_compare2_summary.txt, then under the
# device_call name s13cmp2). Session 14 (as compare_grid.sh): on the table with conditional_rescale (issue 4).
#   bash bench/integration/compare_grid.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin gridcmp
trap 'cp -r "$out/summary.txt" "$out/compare" "${OUT:-/tmp}/" 2>/dev/null' EXIT  # more than device_call_begin brings back
PY_DIMS="64;128;256" sm90_build_py new "" 16 300
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 420 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$out/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$out/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log"
