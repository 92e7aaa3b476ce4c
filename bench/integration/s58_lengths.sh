#!/usr/bin/env bash
# Session 58: PREFETCH_CACHE_LENGTHS=1 (the tree: thread 0 prefetches its first tile's KV-cache lengths into L2
# before the barrier set-up) against =0 (flashattn_base; the d64 / d128 units' SASS then identical to the
# session's start). A few KV-cache cases alone under a short limit first, then s58_lengths.py's rows in two
# passes with the order swapped, the KV-cache / split-KV / workspace suites, memcheck and racecheck over the
# KV-cache cases, pytest's interface and dispatch files.
# Prediction: calls of 5-10 us 0.94-0.97 of the time (the trace's 0.67 us DRAM wait becomes an L2 hit, ~0.4 us
# off the critical path), 20-70 us 0.99, longer ones 1.00.
#   bash bench/integration/s58_lengths.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s58l
tree_and_flag_base "64;128;256" "-DFLASHATTN_SM90_PREFETCH_CACHE_LENGTHS=0"
log builds
first_cases '*cuda_sm90_268_*:*cuda_sm90_269_*:*cuda_sm90_271_*:*cuda_sm90_272_*' 40 || exit 1
ROWS_LIMIT=100 rows_ab s58_lengths.py lengths base new
ROWS_LIMIT=100 rows_ab s58_lengths.py lengths2 new base
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*' 200
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 120 memcheck racecheck
py_tests_on_gpu test_interface.py test_dispatch.py
log total
