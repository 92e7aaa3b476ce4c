#!/usr/bin/env bash
# Session 34: the second standard grid of the final tree (final34.sh ran the first), for the standing's two-grid
# mean: the Python extension (d 64 / 128 / 256, bf16) and bench/compare.py's forward grid and decode row, two
# rounds. Results: the grid (grid.tgz) and summary.txt.
# One H200 call (~3 minutes).
#   bash bench/integration/s34_grid.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
grid_call s34g
