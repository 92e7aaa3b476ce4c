#!/usr/bin/env bash
# Session 36: s27_standing.sh's standing (400 ms stints, cuDNN in the interleave, all 36 rows of the standard grid, two
# passes) with, between the passes, the new varlen rows (bench/varlen_compare.py: 16k packed tokens in four length
# mixes, flashattn beside PyTorch's FA2 varlen kernel and cuDNN on a nested tensor, d64 / d128 / d256, causal and
# not) and the cuBLAS 8192^3 ceiling (bench/compare.py --no-grid), so the headline's share of it comes from this call.
# Read here: python3 bench/integration/paired_standing.py ab.jsonl new
# Predictions: standing 36 of 36 at or above cuDNN, the FA3-normalised rows as in session 35 (d128 non-causal 4k,
# d256 non-causal 8k below on the anchor's own cuDNN); varlen: the equal mix within 2% of the batched call, the
# mixed ones >= FA2 by 1.7-2x (the grid's ratio) and near the batched rates of their lengths; cuBLAS 676-686.
# One H200 call (~8 minutes).
#   bash bench/integration/s36_standing.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s36s
out=${OUT:-$out} # results straight to $OUT, so that a call stopped at its limit still returns the rows done
PY_DIMS="64;128;256" sm90_build_py new "" 16 200
rm -f "$out"/py_*_configure.log
standing_pass 1
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 200 python3 bench/varlen_compare.py --out "$out" --tag s36 \
  >"$out/varlen.log" 2>&1
log "varlen rc=$?"
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 60 python3 bench/compare.py --modes fwd --no-grid --no-decode \
  --rounds 3 --out "$out" --tag s36-ceiling >"$out/ceiling.log" 2>&1
log "ceiling rc=$? $(grep -o '"cublas": [0-9.]*' "$out/ceiling.log")"
standing_pass 2
log total
