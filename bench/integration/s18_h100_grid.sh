#!/usr/bin/env bash
# Session 18 (issue 6): the standard grid + decode (bench/compare.py) of the final tree on an H100, beside
# final18.sh's H200 grid (session 17's H100 grid predates the 64-key d256 kernel for masked rows up to 1024 keys
# and the placement clusters). Run with kind nvidia-h100-x1.
#   bash bench/integration/s18_h100_grid.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s18g
PY_DIMS="64;128;256" sm90_build_py new "" 14 400
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 420 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$OUT/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$OUT/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$OUT/compare_fwd.log"
