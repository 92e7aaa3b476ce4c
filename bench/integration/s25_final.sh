#!/usr/bin/env bash
# Session 25's last call (H200): the final defaults (s25_defaults.sh's three, with the d128 unmasked K/V multicast
# then turned off: KV_MULTICAST_MIN_SEQLEN 0, which s25_defaults.sh read +1.9 / +1.6% at 8k / 16k). The d128 suites
# fp16 + bf16 (the only kernels whose dispatch changed since s25_defaults.sh verified the rest), racecheck and
# synccheck on the d128 Spread cases, float64-checked CLI runs at 8k / 16k keys, then bench/compare.py's forward
# grid (4 rounds, cuDNN and FA2 in the same process): the standing.
#   bash bench/integration/s25_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s25f
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
test_cli_build "128" "fp16;bf16" 5 "" &
PY_DIMS="64;128;256" sm90_build_py new "" 11 400 &
wait
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log "$out"/tests_configure.log "$out"/tests_build.log
suites_and_racecheck '*cuda_sm90*:*Sm90*' '*Spread*cuda_sm90*d128*' 200
suites_summary
synccheck_on '*Spread*cuda_sm90*d128*' 90
rm -f "$out/racecheck.txt"
cli_runs "--head-dim 128 --seqlen-q 8192 -b 2 --heads 8 --heads-kv 2" \
  "--head-dim 128 --seqlen-q 16384 -b 1 --heads 4 --dtype fp16"
cli_summary
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 330 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$out/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$out/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log" | head -70
log total
