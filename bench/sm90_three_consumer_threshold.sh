#!/usr/bin/env bash
# Session 5, integrator: where the d64 three-consumer kernel (faster since sm90h) should take over from the
# two-consumer one. Three Python builds of this tree differing only in use_three_consumers' thresholds
# (FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ / _MASKED): new = default 4096 / 16384, var = 2048 / 8192,
# var2 = 1024 / 4096; bench/sm90_ab.py times them beside cuDNN in one process (d64, 1k..8k). <= ~170 s.
set -uo pipefail
out=/tmp/s5tc; bld=/tmp/s5tc-build; py=$(command -v python3)
rm -rf "$out"; mkdir -p "$out" "$bld"
trap 'tar -C /tmp -czf "${OUT:-/tmp}/s5tc.tgz" s5tc' EXIT
T0=$(date +%s)
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$out/summary.txt"; }
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
export PY_DIMS=64
t() { echo "-DFLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ=$1 -DFLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ_MASKED=$2"; }
sm90_build_py new "" 5 120 &
sm90_build_py var "$(t 2048 8192)" 5 120 &
sm90_build_py var2 "$(t 1024 4096)" 5 120 &
wait
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/sm90_ab.py --hdims 64 \
  --seqlens 1024,2048,4096,8192 > "$out/ab.jsonl" 2> "$out/ab.err"
log "ab rc=$?"
cat "$out/ab.jsonl"
