#!/usr/bin/env bash
# Prepared in session 57 (not yet run): DEFER_PREPARE_WAIT=1 (the first tile's loads before the wait for a
# prepare kernel that appends nothing; producer.h defers_prepare_wait) against the tree's default 0. The test
# binary and package flashattn are built with the switch on (TREE_CUDA_FLAGS), flashattn_base without. First
# the KV-cache cases alone (60 s), then s57_defer.py's rows in two passes with the order swapped, the KV-cache /
# split-KV / workspace suites, memcheck and racecheck over the KV-cache grid.
# Prediction: split decodes at batch 1-8 0.85-0.95 of the time (the ~1 us wait of session 46's trace taken off
# 5-20 us), many-tile decodes 0.97-0.99, appends and requested single pieces 1.00.
# With the switch's local SASS (session 57): only the six decode kernels a unit differ, no local memory.
#   bash bench/integration/s57_defer.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s57e
PY_DIMS="64;128;256" sm90_build_py base "" 5 300 &
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_DEFER_PREPARE_WAIT=1" tests_and_py_build "64;128;256"
wait
log builds
timeout 60 "$tests" --gtest_filter='Grid/KVCacheTest.*cuda_sm90*' --gtest_brief=1 >"$out/first.log" 2>&1
first=$?
log "first cases rc=$first $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$out/first.log" | tr '\n' ' ')"
((first == 0)) || exit 1
ROWS_LIMIT=120 rows_ab s57_defer.py defer base new
ROWS_LIMIT=120 rows_ab s57_defer.py defer2 new base
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*' 150
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*' 100 memcheck racecheck
log total
