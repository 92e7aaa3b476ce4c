#!/usr/bin/env bash
# Session 26, last call: the standard grid (bench/compare.py, forward + decode, four rounds) on the final tree,
# whose defaults s26_verify.sh verified (suites, sanitizers, CLI runs) and timed paired beside cuDNN.
# Prediction: the grid's ratios to cuDNN within its +-4% noise of s26_verify's paired ones; d128 causal 8k / 16k
# and d256 causal 4k / 8k 2-4% above session 25's grid.
#   bash bench/integration/s26_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s26f
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="64;128;256" sm90_build_py new "" 14 400
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 330 python3 bench/compare.py --modes fwd --rounds 4 \
  --out "$out/compare" --tag "$(date +%Y%m%d-%H%M%S)-fwd" >"$out/compare_fwd.log" 2>&1
log "compare fwd rc=$?"
sed -n '/^# /,$p' "$out/compare_fwd.log" | head -70
log total
