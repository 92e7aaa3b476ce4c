#!/usr/bin/env bash
# Session 53 (issue 6): the session's decode changes together (the relaxed entry arrival, the rows summed by
# their owners) against session 52's tree (s53_final.patch reversed), on s52_combine.py's rows (one and two K/V
# heads, d64 / d128 / d256, the GQA guards), SDPA's FA2 and cuDNN beside the dense rows over one or two K/V
# heads, two passes (orders swapped). The kernels are those s53_owners2.sh verified (suites, sanitizers, pytest).
# Prediction: one K/V head at 4000-65000 keys 0.85-0.90 (now at or below cuDNN's time at 4000 / 16100), the
# GQA rows 0.93-0.98, rows on the counter's combine (d256 8-row tiles) 0.98-1.00.
#   bash bench/integration/s53_final.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s53f
tree_copy "$bld/base-tree" bench/integration/s53_final.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128;256" sm90_build_py base "" 8 300) &
PY_DIMS="64;128;256" sm90_build_py new "" 8 300
wait
rows_ab s52_combine.py final base new
rows_ab s52_combine.py final2 new base
log total
