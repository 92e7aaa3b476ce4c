#!/usr/bin/env bash
# Session 60: forward + backward training steps beside SDPA (bench/training_step.py, session 43's shapes) now that
# the Hopper backward runs d64 / d128 (session 43 measured the steps at 0.68-0.82x SDPA's eager speed with
# cuda_sm80's backward). Predicted from the backward's 1.3-1.6x over cuda_sm80: d128 steps from 2k tokens at
# 0.9-1.0x SDPA's (cuDNN's) time ratio; the host-bound small steps unchanged; d256 (cuda_sm80's backward) unchanged.
#   bash bench/integration/s60_steps.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s60s
PY_DIMS="64;128;256" sm90_build_py new "" 16 300 -DFLASHATTN_BACKWARD=ON
(cd /tmp && PYTHONPATH=$bld/pyroot timeout 200 python3 "$OLDPWD/bench/training_step.py" --rounds 3 \
  >"$out/steps.jsonl" 2>"$out/steps.err")
log "steps rc=$? $(tail -2 "$out/steps.err" | cut -c1-300)"
log total
