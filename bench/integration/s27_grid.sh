#!/usr/bin/env bash
# Session 27, last call: a second grid of the final tree (the one of s27_final.sh, compare-20261128-092811; the
# d256 one-head sections measured after it were removed, so the kernels and plans are the same), two rounds, with
# the cuBLAS ceiling. Prediction: every row within the grid's +-3% of 092811; 36 / 36 at or above cuDNN.
# One H200 call (~3 minutes).
#   bash bench/integration/s27_grid.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s27g
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="64;128;256" sm90_build_py new "" 14 200
rm -f "$out"/py_*_configure.log "$out"/py_*_build.log
compare_grid 2 150
log total
