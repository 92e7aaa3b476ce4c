#!/usr/bin/env bash
# Session 45: the split count's rule after the one-pass combine (split_kv_plan.h: pieces of at least four key
# blocks, or up to eight of one for a short tile), fitted to s45_final.sh's rows, checked on a fresh run of the
# same rows (s45_decode.py; the Python extension alone, d128 bf16).
# Prediction: "auto" within 2% of the best explicit count on every row; 1024 keys at batch 1 ~11.5 us (was 14.1).
# One H200 call (~2 minutes).
#   bash bench/integration/s45_rule.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s45r
sm90_build_py new "" 16 300
PYTHONPATH=$bld/pyroot timeout 200 python3 bench/integration/s45_decode.py 2>&1 | grep -v Warning |
  tee "$out/decode.jsonl"
log "decode rc=$?"
