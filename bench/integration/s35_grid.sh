#!/usr/bin/env bash
# Session 35: the second standard grid of the final tree (final35.sh ran the first), for the standing's two-grid
# mean: the Python extension (d 64 / 128 / 256, bf16) and bench/compare.py's forward grid and decode row, two
# rounds. Results: the grid (grid.tgz) and summary.txt.
# One H200 call (~3 minutes).
#   bash bench/integration/s35_grid.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s35g
PY_DIMS="64;128;256" sm90_build_py new "" 16 300
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
compare_grid 2 200
(cd "$out" && tar -czf "${OUT:-/tmp}/grid.tgz" compare-*)
log total
