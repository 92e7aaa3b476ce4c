#!/usr/bin/env bash
# Session 58, second call: session 57's s57_defer.sh, which this replaces (DEFER_PREPARE_WAIT=1 against the
# default 0: s57_defer.py's rows in two passes with the order swapped, the KV-cache / split-KV / workspace
# suites, memcheck / racecheck over the KV-cache grid, pytest's interface and dispatch files, all with the
# switch on) and then s57_trace.sh's decode traces with s58_trace.patch (s57_trace.patch rebased over the
# switch's producer lines). The trace library builds in the background once the A/B rows are done; the traces
# run alone at the end.
# Prediction (session 57): split decodes at batch 1-8 0.85-0.95 of the time, many-tile decodes 0.97-0.99, appends
# and requested single pieces 1.00.
#   bash bench/integration/s58_defer_trace.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s58e
PY_DIMS="64;128;256" sm90_build_py base "" 5 300 &
TREE_CUDA_FLAGS="-DFLASHATTN_SM90_DEFER_PREPARE_WAIT=1" tests_and_py_build "64;128;256"
wait
log builds
first_cases 'Grid/KVCacheTest.*cuda_sm90*' 150 || exit 1
ROWS_LIMIT=120 rows_ab s57_defer.py defer base new
ROWS_LIMIT=120 rows_ab s57_defer.py defer2 new base
decode_trace_build bench/integration/s58_trace.patch "64;128" 8 &
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*' 150
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*' 100 memcheck racecheck
py_tests_on_gpu test_interface.py test_dispatch.py
wait
decode_trace_runs 1024:48:64:0:32:8 4096:48:64:0:32:8 1024:64:128:0:32:8 4096:64:128:0:32:8 1024:16:128:0:32:8
decode_trace_briefs 1024:48:64 1024:64:128
log total
