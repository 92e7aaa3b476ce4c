#!/usr/bin/env bash
# Session 43: eager forward + backward steps of flash_attn_func beside SDPA's default choice, its FlashAttention-2
# and cuDNN backends, from host-bound to GPU-bound sizes (bench/training_step.py), on a d64 / d128 / d256 bf16
# build with the backward.
# Prediction: host-bound small steps ~2x SDPA's time (s43_ab.py); at GPU-bound sizes our step between FA2's
# and cuDNN's (the sm90 forward above both, the backward cuda_sm80's: FA2-class, ~0.6x cuDNN's by the anchors).
# One H200 call (~4 minutes).
#   bash bench/integration/s43_steps.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s43s
PY_DIMS="64;128;256" sm90_build_py new "" 16 400 -DFLASHATTN_BACKWARD=ON
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 300 python3 bench/training_step.py 2>&1 | grep -v Warning |
  tee "$out/steps.jsonl"
log "training_step rc=$?"
