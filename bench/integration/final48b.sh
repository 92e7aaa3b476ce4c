#!/usr/bin/env bash
# Session 48, after final48.sh: the tree with the narrow tile's second split rule (split_kv_plan.h, host only) and
# the record-pointer twin folded (split_kv.h piece_records; s48_twin.patch). One call: the test binary and
# extension of the tree (d 64 / 128 / 256, both dtypes), the KV-cache, split-KV, workspace, determinism and
# cuda_sm90 suites, racecheck on the narrow split cases, and the d64 narrow rows (whose kernel the fold
# rescheduled: same instruction count) against the tree with s48_twin.patch reversed.
# Prediction: suites pass, racecheck clean; d64 rows 0.98-1.02 of base.
#   bash bench/integration/final48b.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin f48b
tree_copy "$bld/base-tree" bench/integration/s48_twin.patch -R
(cd "$bld/base-tree" && PY_DIMS=64 sm90_build_py base "" 5 300) &
tests_and_py_build "64;128;256"  # sets tests
wait
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*:*Determinism*:*CudaSm90*' 200
narrow_cases='Grid/KVCacheTest.*cuda_sm90_*_1x3000_*:Grid/KVCacheTest.*cuda_sm90_*_1x2900_*:Grid/KVCacheTest.*cuda_sm90_*_1x2500_*'
sanitizer_runs "$tests" "$narrow_cases" 60 racecheck
decode_rows_ab narrow64 100
log total
