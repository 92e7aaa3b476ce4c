#!/usr/bin/env bash
# Run in session 38 (s38_standing_summary.txt, s38_standing_ab.jsonl, s38_standing_ceiling.md): 36 of 36 at or
# above cuDNN, 32 of 36 at or above the FA3 anchor normalised by its run's cuDNN (33 by the main tables'); d128
# non-causal 16k 699.2 / 703.4 TFLOP/s, 8k 688.4 / 696.2; cuBLAS 8192^3 698.5 (rounds 784.4 / 698.5 / 675.3).
# Session 38: the standing with the split tail on by default (SPLIT_TAIL=4096): s36_standing.sh's 400 ms stints,
# cuDNN in the interleave, all 36 rows of the standard grid, two passes, and between them the cuBLAS 8192^3 ceiling
# (bench/compare.py --no-grid), so that the headline's share of it comes from this call; no varlen rows.
# Read here: python3 bench/integration/paired_standing.py ab.jsonl new
# Predictions: 36 of 36 at or above cuDNN; d128 non-causal 4k-16k 1.12-1.16x cuDNN (session 36: 1.106-1.116),
# the other rows as in session 36 (their kernels are unchanged); cuBLAS 676-686.
# One H200 call (~6 minutes).
#   bash bench/integration/s38_standing.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s38s
out=${OUT:-$out} # results straight to $OUT, so that a call stopped at its limit still returns the rows done
PY_DIMS="64;128;256" sm90_build_py new "" 16 200
rm -f "$out"/py_*_configure.log
standing_pass 1
PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 60 python3 bench/compare.py --modes fwd --no-grid --no-decode \
  --rounds 3 --out "$out" --tag s38-ceiling >"$out/ceiling.log" 2>&1
log "ceiling rc=$? $(grep -o '"cublas": [0-9.]*' "$out/ceiling.log")"
standing_pass 2
log total
