#!/usr/bin/env bash
# Session 5, integrator: where the d64 three-consumer kernel (faster since sm90h) should take over from the
# two-consumer one. Three Python builds of this tree differing only in use_three_consumers' thresholds
# (FLASHATTN_SM90_THREE_CONSUMERS_MIN_SQ / _MASKED), timed by bench/sm90_ab.py beside cuDNN in one process
# (d64). Run 1 (no argument): new = default 4096 / 16384, var = 2048 / 8192, var2 = 1024 / 4096, 1k..8k.
# Run 2 (argument "control"): new = default, var = 2048 / 4096, var2 = the default again (new vs var2 is
# identical code: the harness's column bias), 2k..8k, the A/B repeated three times. <= ~170 s.
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
if [[ ${1:-} == control ]]; then
  sm90_build_py new "" 5 120 &
  sm90_build_py var "$(t 2048 4096)" 5 120 &
  sm90_build_py var2 "" 5 120 &
  wait
  for pass in 1 2 3; do
    PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 40 python3 bench/sm90_ab.py --hdims 64 \
      --seqlens 2048,4096,8192 >> "$out/ab.jsonl" 2>> "$out/ab.err"
    log "ab pass $pass rc=$?"
  done
else
  sm90_build_py new "" 5 120 &
  sm90_build_py var "$(t 2048 8192)" 5 120 &
  sm90_build_py var2 "$(t 1024 4096)" 5 120 &
  wait
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 100 python3 bench/sm90_ab.py --hdims 64 \
    --seqlens 1024,2048,4096,8192 > "$out/ab.jsonl" 2> "$out/ab.err"
  log "ab rc=$?"
fi
cat "$out/ab.jsonl"
