#!/usr/bin/env bash
# Session 51 (issue 6), last call: the two-level combine's group index by a shift instead of two divisions
# (s51_last.patch reversed is the tree s51_groups.sh verified), s51_last.py's rows and sweep; the KV-cache,
# split-KV and workspace suites, synccheck on the cluster cases, memcheck on every KV-cache case of cuda_sm90.
# Prediction: the 1000-key rows 0.96-1.00 of base (s51_groups.sh read +1.6-4.0% against the tree before the
# two levels); at 16100 keys two levels of 56-120 pieces ~10-12 us against 14.7 in one cluster of 15, at 4000
# keys 32 pieces no better than 8; suites pass, sanitizers clean.
#   bash bench/integration/s51_last.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s51e
tree_copy "$bld/base-tree" bench/integration/s51_last.patch -R
(cd "$bld/base-tree" && PY_DIMS="64;128" sm90_build_py base "" 5 300) &
tests_and_py_build "64;128;256"
wait
(cd bench/integration && PYTHONPATH=$bld/pyroot timeout 150 python3 s51_last.py base new) 2>&1 |
  grep -v Warning >"$out/last.jsonl"
log "last A/B rc=$?"
ab_summary "$out/last.jsonl"
gtest_suites '*KVCache*cuda_sm90*:*SplitKV*:*Workspace*' 150
clusters='Grid/KVCacheTest.*cuda_sm90_*splits24*:Grid/KVCacheTest.*cuda_sm90_*1x40000*'
clusters+=':Grid/KVCacheTest.*cuda_sm90_*splits32*:Grid/KVCacheTest.*cuda_sm90_*splits12*'
sanitizer_runs "$tests" "$clusters" 60 synccheck
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90*:Random/KVCacheRandomTest.*cuda_sm90*' 100 memcheck
log total
