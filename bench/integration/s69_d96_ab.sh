#!/usr/bin/env bash
# Session 69: d = 96's forward on d = 128's whole kernel set (the padded-dims dispatch, where the d = 128 units are
# built) against its own units' route before (run_forward<96, 96>: the decode kernels and d = 128's default tile
# only), same process (bench/sm90_ab.py: the tree's package beside the tree with s69_padded.patch reversed, both
# built with head dims 96 and 128), d = 128 as the control (its route unchanged), beside cuDNN.
#   bash bench/integration/s69_d96_ab.sh
# Run: builds 45 s; d96 non-causal 8k / 16k 1.070 / 1.052x, the rest 0.949-1.024x; control d128 0.960-1.012x.
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s69d
PY_DIMS="96;128" PY_JOBS=8 py_builds_around_patch bench/integration/s69_padded.patch
(PYTHONPATH=$bld/pyroot timeout 300 python3 bench/sm90_ab.py --hdims 96,128 >"$out/d96_ab.jsonl" 2>"$out/d96_ab.err")
log "sm90_ab rc=$? $(grep -v Warn "$out/d96_ab.err" | tail -2 | cut -c1-300)"
log total
